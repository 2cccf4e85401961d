"""Directories a command writes into: it deletes only what it wrote.

``minidb tour``, ``figures``, ``generate`` and ``spark analyze`` write files
into a directory they name. Before writing, a command *claims* it:

- a directory that does not exist, or is empty, becomes the command's: its
  marker file ``.minidb-output`` goes in first;
- a directory whose marker names the same command holds that command's
  previous output: exactly the paths the marker lists are deleted, and the
  command writes afresh (so running it again on its own output works);
- anything else is refused with a one-line :class:`~minidb.errors.UserError`
  (exit code 2) before anything is deleted or written: files without a
  marker, the marker of another command, or a path the marker does not list
  (someone put it there after the command ran).

When the command ends, also by an error or Ctrl-C, the marker is rewritten
to list everything in the directory: the directory was empty but for the
marker when the command began, so all of it is the command's output.

The marker is text: the owner on the first line, then one path per line,
relative to the directory, ``/`` between names, folders ending in ``/``,
sorted. After ``minidb generate --engine log --envs 1 --ops 5 out``::

    minidb output of: minidb generate
    env-00/
    env-00/00000001.jdb
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from minidb.errors import UserError

MARKER = ".minidb-output"
_HEAD = "minidb output of: "


def _entries(path: str) -> list[str]:
    """Every file and folder below ``path`` but the marker, as the marker writes them."""
    found = []
    for directory, subdirs, files in os.walk(path):
        rel = os.path.relpath(directory, path)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        found += [prefix + d + "/" for d in subdirs] + [prefix + f for f in files if prefix or f != MARKER]
    return sorted(found)


def _listed(path: str, owner: str) -> set[str]:
    """The paths the marker in ``path`` lists; a UserError if the marker is not ``owner``'s or is
    not a marker at all."""
    marker = os.path.join(path, MARKER)
    try:
        with open(marker, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except UnicodeDecodeError:
        lines = []
    if not lines or not lines[0].startswith(_HEAD):
        raise UserError(f"{marker}: not a minidb output marker; refusing to write into {path}")
    if lines[0] != _HEAD + owner:
        raise UserError(f"{path}: holds the output of {lines[0][len(_HEAD):]}, not of {owner}; "
                        f"choose another directory")
    listed = set(lines[1:])
    for number, line in enumerate(lines[1:], start=2):
        parts = line.rstrip("/").split("/")
        if line.startswith("/") or "" in parts or "." in parts or ".." in parts:
            raise UserError(f"{marker}: line {number}: not a path inside {path}: {line!r}")
    return listed


def check_output(path: str, owner: str) -> list[str]:
    """What ``owner`` may delete in ``path`` before writing there (see the module doc); a
    UserError if it may not write there. Changes nothing."""
    if not os.path.isdir(path):
        above = os.path.abspath(path)
        while not os.path.lexists(above):  # the first part of the path that exists must be a folder
            above = os.path.dirname(above)
        if not os.path.isdir(above):
            raise UserError(f"{path}: not a directory ({above} is a file)")
        return []
    present = _entries(path)
    if not os.path.lexists(os.path.join(path, MARKER)):
        if present:
            raise UserError(f"{path}: not empty, and not written by {owner} (no {MARKER} in it); "
                            f"choose a new or empty directory")
        return []
    listed = _listed(path, owner)
    foreign = [p for p in present if p not in listed]
    if foreign:
        raise UserError(f"{os.path.join(path, foreign[0])}: not written by {owner}; "
                        f"move it away or choose another directory")
    return present


def _write_marker(path: str, owner: str, entries: list[str]) -> None:
    with open(os.path.join(path, MARKER), "w", encoding="utf-8") as f:
        f.write("".join(f"{line}\n" for line in [_HEAD + owner, *entries]))


@contextmanager
def owned_output(path: str, owner: str, replace: bool = True) -> Iterator[str]:
    """Claim ``path`` for ``owner`` (deleting only its previous output), yield it for writing,
    and list what is in it in the marker when done. With ``replace=False`` nothing is deleted:
    the command overwrites the files it writes again and keeps the rest of its earlier output."""
    claimed = check_output(path, owner)
    previous = claimed if replace else []
    os.makedirs(path, exist_ok=True)
    for entry in reversed(previous):  # sorted: a folder's contents come after it, so go backwards
        target = os.path.join(path, *entry.rstrip("/").split("/"))
        if entry.endswith("/"):
            os.rmdir(target)
        else:
            os.remove(target)
    _write_marker(path, owner, [])
    try:
        yield path
    finally:
        _write_marker(path, owner, _entries(path))
