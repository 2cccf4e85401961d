"""What this process creates on real files, for whoever watches.

A front end that must know exactly which files and directories a run created
(a command deletes only what it wrote: :mod:`minidb.cli.output`) watches
creations with :func:`watching`; every creator of a real file or directory
reports it with :func:`created`:

- :class:`~minidb.io.OSDisk` reports every directory it makes and every file
  it creates (a log file, a volume, the master file), so an engine handed an
  OSDisk is watched without knowing it;
- the front ends report what they write themselves: pictures
  (:func:`minidb.viz.style.save`), directories (:func:`makedirs`), and what
  another process wrote for them, listed as soon as it is complete
  (:func:`created_tree`: a Spark table's folder after the write job ends; the
  lines ``created PATH`` of a replication group's node processes).

Invariants: a report names an absolute path; watchers are called in the
thread that created the path, under one lock, in the order they registered,
and only between their registration and its end. Reporting a path nobody
watches costs a look at an empty list. Nothing here deletes or lists on its
own, and a watcher that fails stops the creation's caller (a watcher records;
it does not decide).

What it does not do: it does not see files created behind minidb's back
(``open`` elsewhere, another program); a watcher that needs those lists the
directory itself and treats what it did not hear about as someone else's.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Watcher = Callable[[str], None]

_watchers: list[Watcher] = []
_lock = threading.Lock()


def created(path: str | os.PathLike) -> None:
    """Report that ``path`` (a file or a directory) was just created or written by this process."""
    if not _watchers:
        return
    absolute = os.path.abspath(os.fspath(path))
    with _lock:
        for watcher in list(_watchers):
            watcher(absolute)


def created_tree(path: str | os.PathLike) -> None:
    """Report ``path`` and everything below it: what another process wrote there for us, now complete."""
    created(path)
    for directory, subdirs, files in os.walk(path):
        for name in sorted(subdirs) + sorted(files):
            created(os.path.join(directory, name))


def makedirs(path: str | os.PathLike) -> None:
    """``os.makedirs(path, exist_ok=True)``, reporting each directory it makes."""
    missing = []
    above = os.path.abspath(os.fspath(path))
    while not os.path.lexists(above):
        missing.append(above)
        above = os.path.dirname(above)
    os.makedirs(path, exist_ok=True)
    for directory in reversed(missing):
        created(directory)


@contextmanager
def watching(watcher: Watcher) -> Iterator[None]:
    """Call ``watcher(absolute_path)`` for every creation reported while the block runs."""
    with _lock:
        _watchers.append(watcher)
    try:
        yield
    finally:
        with _lock:
            _watchers.remove(watcher)
