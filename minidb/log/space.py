"""The log's room: a bounded log (partitions, preallocated spares), the disk's free space, the log head.

A part of :class:`~minidb.log.manager.LogManager` (its base class), kept
apart because it is an idea of its own: how much can still be logged, and
where the space for it comes from. Every method here runs under the log
write latch unless it says otherwise, and uses the manager's state: the file
being written (``_file_number``, ``_next_offset``, ``_handle``), the bytes of
it that need no new disk space (``_allocated``), the buffer, the log head.

**A bounded log** (options, all off by default, as the log store uses it):

- ``max_files``: at most that many files (Shore's log *partitions*) exist at
  once, from the log head to the file being written; an entry that would need
  one more is refused with :class:`~minidb.errors.LogFullError`, changing
  nothing. Files leave the low end through :meth:`LogManager.remove_head_files`;
- ``preallocate``: every file is ``file_max`` bytes of zeros when it becomes
  the log's last file, and *spare* files (``logspare1``, ``logspare2``, ...)
  of the same size, one for each partition ``max_files`` still allows, wait
  beside the log, so writing entries never needs new disk space: a full disk
  is met only when spares are made (after a flip or a removal of files),
  where it costs nothing but fewer spares (:meth:`LogSpace.room` counts only the
  spares that exist). At a flip the old file is cut to its last entry (only
  the last file has unwritten space, as the readers expect) and a spare is
  renamed to the new file. Opening zeroes a torn tail in place instead of
  cutting it;
- ``admit``: a hook called under the write latch with ``(entry_type, values,
  size)`` before an entry is placed; it may raise to refuse the entry (nothing
  changes) or return a callable, called with the entry's LSN once the entry
  is in the buffer (it is also given ``room``, usable under the latch). The
  page store's log-space reservation is this hook
  (:mod:`minidb.pagestore.wal.logspace`); :meth:`LogSpace.room` says how many bytes can
  still be appended.

**An unbounded log on a bounded disk.** Without ``max_files`` the disk is the
bound: :meth:`LogSpace.room` is the disk's free space (``Disk.free_space``) less the
bytes buffered but not yet written, less a file header and ``waste`` for each
file that space could still hold; None when the disk tells no bound (a
``SimDisk`` without a capacity). The file system is asked again once
:data:`FREE_SPACE_RESAMPLE` bytes were logged since it was last asked, and
at every call once fewer than :data:`FREE_SPACE_EXACT` bytes are left, so
room is exact where it matters and costs no system call per entry elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minidb.errors import DiskFullError, UserError
from minidb.io import File
from minidb.log.deleted import write_deleted_files
from minidb.log.end import TailCut
from minidb.log.files import all_log_file_numbers, file_name
from minidb.log.head import write_log_head
from minidb.log.logdef import FILE_HEADER_ENTRY_SIZE as FILE_HEADER_SIZE

SPARE_PREFIX = "logspare"  # spare files logspare1, logspare2, ...
SPARE_TMP = "logspare.tmp"
FREE_SPACE_EXACT = 64 << 20  # below this much free disk space, room asks the disk at every call
FREE_SPACE_RESAMPLE = 4 << 20  # above it, room asks again after this many bytes were logged


class LogSpace:
    """The room of a log: preallocation, spares, :meth:`room`, removing files below the log head."""

    disk: Any
    file_max: int
    max_files: int | None
    preallocate: bool
    head: int

    # -- preallocation ---------------------------------------------------------
    def _zero_tail(self, name: str, cut: TailCut) -> None:
        """Overwrite a torn tail with zeros, keeping the file's preallocated size."""
        size = self._handle.size()  # type: ignore[union-attr]
        tail = self._handle.read(cut.offset, size - cut.offset)  # type: ignore[union-attr]
        if any(tail):
            self._handle.write(cut.offset, bytes(len(tail)))  # type: ignore[union-attr]
            self._handle.fsync()  # type: ignore[union-attr]
            self.trace.emit("zeroed %s from %d to %d", name, cut.offset, size)
        elif cut.kind == "unwritten":
            self.tail_cut = None  # a preallocated file's unwritten space: its normal state

    def _extend(self, handle: File) -> None:
        """Preallocate ``handle`` to ``file_max`` bytes of zeros, if the disk has room."""
        try:
            handle.write(self._allocated, bytes(self.file_max - self._allocated))
            handle.fsync()
            self._allocated = self.file_max
        except DiskFullError:
            pass  # the rest of the file takes disk space as it is written

    def _find_spares(self) -> None:
        if self.disk.exists(SPARE_TMP):
            self.disk.delete(SPARE_TMP)  # a crash while it was made
        for name in self.disk.list():
            if name.startswith(SPARE_PREFIX) and name[len(SPARE_PREFIX):].isdigit():
                self._spares.append(name)
        self._spares.sort(key=lambda n: int(n[len(SPARE_PREFIX):]))
        self._fill_spares()

    def _fill_spares(self) -> None:
        """Make spare files (each a whole file of zeros, durable) until every partition that may
        still be needed has one, or the disk is full."""
        wanted = 1 if self.max_files is None else self.max_files - (self._file_number - self.head + 1)
        while len(self._spares) < wanted:
            try:
                with self.disk.open(SPARE_TMP, create=True) as f:
                    f.write(0, bytes(self.file_max))
                    f.fsync()
            except DiskFullError:
                self.disk.delete(SPARE_TMP)
                self.stats.add("nSparesFailed")
                self.trace.emit("%d spare log files: the disk is full", len(self._spares))
                return
            last = int(self._spares[-1][len(SPARE_PREFIX):]) if self._spares else 0
            name = f"{SPARE_PREFIX}{last + 1}"
            self.disk.rename(SPARE_TMP, name)
            self._spares.append(name)
            self.stats.add("nSparesMade")

    def _new_file(self, name: str) -> File:
        """The handle of new log file ``name``: a spare renamed, or a new file."""
        if self.preallocate:
            self.disk.rename(self._spares.pop(0), name)
            return self.disk.open(name)
        return self.disk.open(name, create=True)

    def room(self, waste: int = 0) -> int | None:
        """Bytes that can still be appended without a new partition or new disk space (None: no
        bound); ``waste`` is subtracted once per file, for an entry that does not fit a file's end."""
        with self._latch:
            return self._room(waste)

    def _room(self, waste: int = 0) -> int | None:
        more = None if self.max_files is None else self.max_files - (self._file_number - self.head + 1)
        if self.preallocate:
            more = len(self._spares) if more is None else min(more, len(self._spares))
        if more is None:
            return self._disk_room(waste)
        left = max(0, self._allocated - self._next_offset - waste)
        return left + max(0, more) * max(0, self.file_max - FILE_HEADER_SIZE - waste)

    def _disk_room(self, waste: int) -> int | None:
        """Room on the disk for an unbounded log (see the module documentation; caller holds the latch)."""
        free = self._free_space()
        if free is None:
            return None
        files = 1 + (self._next_offset + free) // self.file_max  # the current file and the ones after it
        return max(0, free - files * (FILE_HEADER_SIZE + waste))

    def _free_space(self) -> int | None:
        """The disk's free space less the bytes buffered (they take their space when written)."""
        logged = self.stats["nBytes"]
        if self._free_sample is not None:
            sampled, at = self._free_sample
            estimate = sampled - (logged - at)
            if estimate >= FREE_SPACE_EXACT and logged - at < FREE_SPACE_RESAMPLE:
                return estimate
        free = self.disk.free_space()
        if free is None:
            self._free_sample = None
            return None
        free -= len(self._buffer)
        self._free_sample = (free, logged)
        return free

    # -- removing files at the low end ----------------------------------------
    def remove_head_files(self, below_file: int, archive: Callable[[str, bytes], None] | None = None) -> list[str]:
        """Delete the log files below ``below_file``, after recording ``below_file`` as the log head
        (:mod:`minidb.log.head`), so no reader takes them for lost; ``archive(name, data)`` is given
        each file's bytes before it is deleted. Returns the names deleted."""
        with self._latch:
            self._check_usable()
            if not isinstance(below_file, int) or below_file > self._file_number:
                raise UserError(f"cannot remove log files below {below_file!r}: the log is writing "
                                f"{file_name(self._file_number)}")
            if below_file <= self.head:
                return []
            self._check_opening_scan_taken()
            write_log_head(self.disk, below_file)
            self.head = below_file
            self._files = [n for n in self._files if n >= below_file]
            self.reader.forget_below(below_file)
        return self._remove_recorded(archive)

    def remove_files(self, numbers: list[int]) -> list[str]:
        """Delete the log files ``numbers`` wherever they lie (the log store's cleaner, checkpoint step 9).

        The files from the log head on that go become a new head (:meth:`remove_head_files`'s
        record); the others, above a file kept, are *middle files*: their numbers are added to the
        deleted-files record (:mod:`minidb.log.deleted`), durably, before any file is deleted. The head
        is recorded before that record, so a number the record drops (below the new head) is covered
        at every moment. The file being written and the one before it are never middle files (the
        last file's FileHeader names the one before's last entry, which opening may need). Returns
        the names deleted."""
        with self._latch:
            self._check_usable()
            going = {n for n in numbers if n in self._files}
            kept = [n for n in self._files if n not in going]
            middle = sorted(n for n in going if n > kept[0]) if kept else []
            if self._file_number in going or any(n >= self._file_number - 1 for n in middle):
                raise UserError(f"cannot remove log files {sorted(going)} from the middle of the log: the log is "
                                f"writing {file_name(self._file_number)}, which stays with the file before it")
            if not going:
                return []
            self._check_opening_scan_taken()
            if kept[0] > self.head:
                write_log_head(self.disk, kept[0])
                self.head = kept[0]
            if middle:
                self.deleted = frozenset(n for n in self.deleted | set(middle) if n >= self.head)
                write_deleted_files(self.disk, self.deleted)
            self._files = kept
            for number in going:
                self.reader.forget_file(number)
        return self._remove_recorded(None)

    def _remove_recorded(self, archive: Callable[[str, bytes], None] | None) -> list[str]:
        """Delete the files just recorded as gone, then refill the spares with their space."""
        removed = self._remove_below_head(archive)
        if self.preallocate:
            with self._latch:
                self._fill_spares()  # the space of the files removed
        return removed

    def is_deleted(self, number: int) -> bool:
        """Whether log file ``number`` was deleted on purpose (below the head, or recorded in the middle)."""
        return number < self.head or number in self.deleted

    def _remove_below_head(self, archive: Callable[[str, bytes], None] | None) -> list[str]:
        """Delete the files the log head and the deleted-files record say are gone (after a crash, or
        just now)."""
        removed = []
        for number in all_log_file_numbers(self.disk):
            if number >= self.head and number not in self.deleted:
                continue
            name = file_name(number)
            if archive is not None:
                with self.disk.open(name) as f:
                    archive(name, f.read(0, f.size()))
            self.disk.delete(name)
            removed.append(name)
            self.stats.add("nFilesRemoved")
        below = [name for name in removed if int(name[:8], 16) < self.head]
        if below:
            self.trace.emit("removed %s below the log head %s", ", ".join(below), file_name(self.head))
        if len(below) < len(removed):
            self.trace.emit("removed %s, recorded deleted from the middle of the log",
                            ", ".join(name for name in removed if name not in below))
        return removed

