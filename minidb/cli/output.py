"""Directories a command writes into: it deletes only what it wrote.

``minidb tour``, ``figures``, ``generate``, ``group demo --dir`` and ``spark
analyze`` write files into a directory they name. Before writing, a command
*claims* it:

- a directory that does not exist, or is empty, becomes the command's: its
  marker file ``.minidb-output`` goes in first;
- a directory whose marker names the same command holds that command's
  previous output: exactly the paths the marker lists are set aside (moved
  into the folder ``.minidb-previous`` beside the marker), and the command
  writes afresh (so running it again on its own output works). If the
  command succeeds, what was set aside is deleted; if it fails (an error,
  Ctrl-C), what it wrote is deleted and the previous output is put back,
  so a failed run loses nothing (a run killed outright leaves the folder,
  which the next run deletes: only minidb writes it);
- anything else is refused with a one-line :class:`~minidb.errors.UserError`
  (exit code 2) before anything is deleted or written: files without a
  marker, the marker of another command, or a path the marker does not list
  (someone put it there while or after the command ran). The refusal names
  the command the user ran (``minidb tour`` claims its figures' directory
  under the marker of ``minidb figures``, which writes the same pictures, and
  says ``minidb tour``).

While the command runs, :func:`owned_output` watches what this process
creates (:mod:`minidb.io.created`, one mechanism for every writer): the files
and directories an engine makes on an :class:`~minidb.io.OSDisk`, the
pictures :func:`minidb.viz.style.save` writes, a Spark table's folder listed
as soon as its write job ends, the paths a group demo's node processes report.
When the command ends, also by an error or Ctrl-C, the marker is rewritten to
list exactly those paths that still exist (and the folders holding them), plus,
for a command that keeps its earlier output (``replace=False``), the listed
paths of that output that are still there. Anything else found in the
directory then (a file a user saved there while the command ran) is left
alone, not listed, and named in one warning line on stderr::

    warning: out/tour/notes.txt was not written by minidb tour; it is left alone and not listed

so the next run refuses the directory until that file is moved away, and
never deletes it. A command that writes a file in a way nobody reports
finds it named in that warning: a gap shows; it is never deleted.

The marker is text: the owner on the first line, then one path per line,
relative to the directory, ``/`` between names, folders ending in ``/``,
sorted. After ``minidb generate --engine log --envs 1 --ops 5 out``::

    minidb output of: minidb generate
    env-00/
    env-00/00000001.jdb
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from minidb.errors import UserError
from minidb.io import created

MARKER = ".minidb-output"
PREVIOUS = ".minidb-previous"  # the previous output, set aside while the command runs
_HEAD = "minidb output of: "


def entries_below(path: str) -> list[str]:
    """Every file and folder below ``path`` but the marker, as the marker writes them."""
    found = []
    for directory, subdirs, files in os.walk(path):
        rel = os.path.relpath(directory, path)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        if not prefix and PREVIOUS in subdirs:
            subdirs.remove(PREVIOUS)
        found += [prefix + d + "/" for d in subdirs] + [prefix + f for f in files if prefix or f != MARKER]
    return sorted(found)


def _listed(path: str, owner: str, command: str) -> set[str]:
    """The paths the marker in ``path`` lists; a UserError (naming ``command``) if the marker is not
    ``owner``'s or is not a marker at all."""
    marker = os.path.join(path, MARKER)
    try:
        with open(marker, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except UnicodeDecodeError:
        lines = []
    if not lines or not lines[0].startswith(_HEAD):
        raise UserError(f"{marker}: not a minidb output marker; refusing to write into {path}")
    if lines[0] != _HEAD + owner:
        raise UserError(f"{path}: holds the output of {lines[0][len(_HEAD):]}, not of {command}; "
                        f"choose another directory")
    listed = set(lines[1:])
    for number, line in enumerate(lines[1:], start=2):
        parts = line.rstrip("/").split("/")
        if line.startswith("/") or "" in parts or "." in parts or ".." in parts:
            raise UserError(f"{marker}: line {number}: not a path inside {path}: {line!r}")
    return listed


def check_output(path: str, owner: str, command: str | None = None) -> list[str]:
    """What ``owner`` may delete in ``path`` before writing there (see the module doc); a
    UserError naming ``command`` (default: ``owner``) if it may not write there. Changes nothing."""
    command = command or owner
    if not os.path.isdir(path):
        above = os.path.abspath(path)
        while not os.path.lexists(above):  # the first part of the path that exists must be a folder
            above = os.path.dirname(above)
        if not os.path.isdir(above):
            raise UserError(f"{path}: not a directory ({above} is a file)")
        return []
    present = entries_below(path)
    if not os.path.lexists(os.path.join(path, MARKER)):
        if present:
            raise UserError(f"{path}: not empty, and not written by {command} (no {MARKER} in it); "
                            f"choose a new or empty directory")
        return []
    listed = _listed(path, owner, command)
    foreign = [p for p in present if p not in listed]
    if foreign:
        raise UserError(f"{os.path.join(path, foreign[0])}: not written by {command}; "
                        f"move it away or choose another directory")
    return present


def _write_marker(path: str, owner: str, entries: list[str]) -> None:
    with open(os.path.join(path, MARKER), "w", encoding="utf-8") as f:
        f.write("".join(f"{line}\n" for line in [_HEAD + owner, *entries]))


class _Created:
    """The paths below ``root`` that this process reports creating (relative, ``/`` between names)."""

    def __init__(self, root: str):
        self.root = os.path.abspath(root)
        self.paths: set[str] = set()

    def __call__(self, absolute: str) -> None:
        rel = os.path.relpath(absolute, self.root)
        if rel != "." and rel != os.pardir and not rel.startswith(os.pardir + os.sep):
            self.paths.add(rel.replace(os.sep, "/"))

    def listed(self, present: list[str], kept: list[str]) -> list[str]:
        """Which of ``present`` (as :func:`entries_below` gives them) to list: what was created, what was kept,
        and the folders that hold those (nothing could be written below a folder that was not made for it)."""
        ours = set(self.paths) | {entry.rstrip("/") for entry in kept}
        for path in list(ours):
            parts = path.split("/")
            ours.update("/".join(parts[:n]) for n in range(1, len(parts)))
        return [entry for entry in present if entry.rstrip("/") in ours]


def _warn_foreign(path: str, command: str, foreign: list[str]) -> None:
    """One line on stderr naming what the command found in ``path`` but did not write."""
    top = [entry for entry in foreign
           if not any(entry.startswith(other) for other in foreign if other != entry and other.endswith("/"))]
    first = os.path.join(path, *top[0].rstrip("/").split("/"))
    if len(top) == 1:
        print(f"warning: {first} was not written by {command}; it is left alone and not listed", file=sys.stderr)
    else:
        print(f"warning: {first} and {len(top) - 1} more path{'s' if len(top) > 2 else ''} were not written by "
              f"{command}; they are left alone and not listed", file=sys.stderr)


@contextmanager
def owned_output(path: str, owner: str, replace: bool = True, command: str | None = None) -> Iterator[str]:
    """Claim ``path`` for ``owner`` (deleting only its previous output), yield it for writing while
    watching what this process creates, and list exactly that in the marker when done (see the module
    doc). With ``replace=False`` nothing is deleted: the command overwrites the files it writes again
    and keeps the rest of its earlier output. ``command`` names the command in messages (default:
    ``owner``)."""
    command = command or owner
    claimed = check_output(path, owner, command)
    previous, kept = (claimed, []) if replace else ([], claimed)
    os.makedirs(path, exist_ok=True)
    aside = os.path.join(path, PREVIOUS)
    if os.path.isdir(aside) and os.path.lexists(os.path.join(path, MARKER)):
        shutil.rmtree(aside)  # left by a run killed outright: minidb's own
    tops = [entry for entry in previous if "/" not in entry.rstrip("/")]  # every listed path is below one of them
    if tops:
        os.mkdir(aside)
        for entry in tops:
            os.replace(os.path.join(path, entry.rstrip("/")), os.path.join(aside, entry.rstrip("/")))
    _write_marker(path, owner, kept)
    made = _Created(path)
    failed = True
    try:
        with created.watching(made):
            yield path
        failed = False
    finally:
        present = entries_below(path)
        listed = made.listed(present, kept)
        if failed and tops:  # what this run wrote goes; the previous output comes back
            for entry in reversed(listed):
                target = os.path.join(path, *entry.rstrip("/").split("/"))
                if not entry.endswith("/"):
                    os.remove(target)
                elif not os.listdir(target):
                    os.rmdir(target)
            for entry in tops:
                if not os.path.lexists(os.path.join(path, entry.rstrip("/"))):  # else a user's file holds the name
                    os.replace(os.path.join(aside, entry.rstrip("/")), os.path.join(path, entry.rstrip("/")))
            present = entries_below(path)
            listed = [entry for entry in present if entry in set(previous)]
        if tops and not os.listdir(aside):
            os.rmdir(aside)
        elif tops and not failed:
            shutil.rmtree(aside)
        elif tops:
            print(f"warning: part of the previous output of {command} could not be put back; it is in {aside}",
                  file=sys.stderr)
        _write_marker(path, owner, listed)
        foreign = sorted(set(present) - set(listed))
        if foreign:
            _warn_foreign(path, command, foreign)
