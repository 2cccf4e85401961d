"""The disk interface: every byte minidb reads or writes goes through it.

A :class:`Disk` is a flat directory of named files; a :class:`File` is an
open file in it. The interface is deliberately small, the operations a
storage engine really needs::

    Disk:  open(name, create=False) -> File   exists(name)   list()
           delete(name)   rename(old, new)   size(name)   where(name)
           free_space() -> bytes or None
    File:  read(offset, size)   write(offset, data)   append(data) -> offset
           fsync()   truncate(size)   allocate(size)   size()   close()

Two implementations exist: :class:`~minidb.io.osdisk.OSDisk` (real files of
the operating system) and :class:`~minidb.io.simdisk.SimDisk` (a simulated
disk that records every write and fsync and can crash). Engines never know
which one they have, so crash tests and notebook crash demonstrations run
exactly the code that runs on real files.

Durability contract (the same for both):

- data written with ``write``/``append``/``truncate`` is durable only after
  ``fsync`` of that file returns;
- ``open(create=True)``, ``delete`` and ``rename`` are durable when they
  return (as on a file system that syncs directory changes);
- ``read`` sees every write made so far, durable or not (the page cache).

Space (the same for both): ``free_space()`` is how many bytes writes can
still add to the disk (None when the disk sets no bound it can tell), and
``allocate(size)`` takes a file's space now, as zeros, so that later writes
inside it never meet a full disk (the page store's volume is made this way,
and the page store's log reserves against ``free_space``:
:mod:`minidb.pagestore.wal.logspace`). A write that finds no room is a
:class:`~minidb.errors.DiskFullError` that wrote nothing.

Threads (the same contract for both): a disk may be used by several threads
at once; each operation is atomic. ``on_crash(callback)`` asks to be told
when the disk crashes, and ``bind_thread()`` ties the calling thread to the
disk's present life: after a crash, every operation the thread attempts is
refused (:class:`~minidb.errors.DiskError`), so an engine's background
threads can never touch what the crash left. A real disk's crash ends the
process with its threads, so :class:`~minidb.io.osdisk.OSDisk` needs neither
(both do nothing there); :class:`~minidb.io.simdisk.SimDisk` does both.

File names are plain names (no directory separators); anything else is a
:class:`~minidb.errors.UserError` naming the name and the disk.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

from minidb.errors import UserError


class File(ABC):
    """An open file of a :class:`Disk`."""

    name: str

    @abstractmethod
    def read(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes from ``offset``; shorter at the end of file."""

    @abstractmethod
    def write(self, offset: int, data: bytes) -> None:
        """Write ``data`` at ``offset``, extending the file (with zeros) if needed."""

    @abstractmethod
    def append(self, data: bytes) -> int:
        """Write ``data`` at the end of the file; return the offset it went to."""

    @abstractmethod
    def fsync(self) -> None:
        """Make every write and truncate of this file so far durable."""

    @abstractmethod
    def truncate(self, size: int) -> None:
        """Cut the file to ``size`` bytes."""

    @abstractmethod
    def allocate(self, size: int) -> None:
        """Make the file at least ``size`` bytes, the new bytes zeros whose disk space is taken now,
        so writes inside them never need new space; a full disk raises DiskFullError."""

    @abstractmethod
    def size(self) -> int:
        """The current size of the file in bytes."""

    @abstractmethod
    def close(self) -> None:
        """Release the handle; unsynced data stays as it is."""

    def read_all(self) -> bytes:
        return self.read(0, self.size())

    def __enter__(self) -> "File":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Disk(ABC):
    """A flat directory of named files."""

    @abstractmethod
    def open(self, name: str, create: bool = False) -> File:
        """Open a file; with ``create=True`` make it (empty) if it is missing."""

    @abstractmethod
    def exists(self, name: str) -> bool: ...

    @abstractmethod
    def list(self) -> list[str]:
        """The names of all files, sorted."""

    @abstractmethod
    def delete(self, name: str) -> None: ...

    @abstractmethod
    def rename(self, old: str, new: str) -> None:
        """Rename ``old`` to ``new``, replacing ``new`` if it exists."""

    @abstractmethod
    def size(self, name: str) -> int: ...

    @abstractmethod
    def free_space(self) -> int | None:
        """Bytes that writes can still add to the disk's files, or None if the disk sets no bound it
        can tell."""

    @abstractmethod
    def where(self, name: str = "") -> str:
        """A printable location of the disk, or of one file on it, for messages."""

    def on_crash(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (with no lock of the disk held) each time the disk crashes; a real disk's
        crash ends the process, so the base does nothing."""
        return None

    def bind_thread(self) -> None:
        """Tie the calling thread to the disk's present life: after a crash it may touch nothing (see the
        module documentation); a real disk's crash ends the process, so the base does nothing."""
        return None

    def check_name(self, name: str) -> str:
        if not name or "/" in name or "\\" in name or name in (".", ".."):
            raise UserError(f"{self.where()}: {name!r} is not a plain file name")
        return name

    def replace(self, name: str, data: bytes) -> None:
        """Make ``name`` hold exactly ``data``, durably and atomically: written to ``name.tmp``, fsynced,
        renamed over ``name`` (a rename is durable on return). A crash leaves the old file or the new one,
        never a mix; a torn ``name.tmp`` is deleted by the next replace."""
        tmp = name + ".tmp"
        if self.exists(tmp):
            self.delete(tmp)
        with self.open(tmp, create=True) as handle:
            handle.write(0, data)
            handle.fsync()
        self.rename(tmp, name)
