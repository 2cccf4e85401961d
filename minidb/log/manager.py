"""The log manager: appends entries, flushes, fsyncs, group-commits.

Appending takes the *log write latch* (a lock), gives the entry its LSN (the
current file and the next offset), fills in the header's ``prev`` offset (the
entry before it in this file) and, for a replicated entry, its VLSN (from
``vlsn_allocator``, called under the latch, as JE allocates VLSNs), and
copies the entry into the *log buffer*. The buffer is written to the file
when the next entry does not fit, or on ``flush()``/``sync()``.

A new file is started when the next entry would pass ``file_max`` (an entry
bigger than ``file_max`` gets a file to itself). The old file is written and
fsynced first, then the new file is created with its ``FileHeader``, which
records the LSN of the old file's last entry. Hence only the last file can
have a torn tail, which :mod:`minidb.log.end` cuts off when the log opens.

Durability and group commit: ``sync(lsn)`` returns when the entry at ``lsn``
(default: everything appended so far) is on stable storage. One caller, the
leader, writes the buffer and fsyncs outside the write latch, so appends go
on meanwhile; callers that arrive during an fsync wait for it and, if it
covered their entry, return without an fsync of their own. Before it takes
the log's end, the leader *gathers*: it waits (bounded by ``commit_delay``, a
fraction of the measured fsync time) for as many followers as the previous
fsync's batch had, so concurrent committers share fsyncs instead of the
leader racing ahead alone (:mod:`minidb.log.groupcommit`; ``commit_delay=0``
turns this off, ``commit_clock`` is the clock it waits by). ``nFsyncs``
versus ``nSyncRequests`` in :attr:`stats` shows how much the group shared.

Appending is cheap on purpose, because every engine appends for every change
(``make bench``'s log section gives the CPU time per append). ``append`` does
the least work for the common case and leaves the rest to careful code:

- a plain entry (a dict of values, not provisional, no VLSN) is recognized in
  one test; anything else has its arguments checked one by one
  (``_append_arguments``), so an error still names the bad argument. A
  replicated entry (its header carries a VLSN) then goes the careful way,
  through ``_add`` and :func:`~minidb.log.header.pack_header` (the reference,
  which the file header uses too);
- header and item come in one piece from the entry type's generated codec
  (``encode_summed``, :mod:`minidb.log.codec`): the bytes the checksum covers,
  packed by one ``struct`` call under the latch (the header names the entry
  before it in the file). One CRC over that piece, and two writes into the
  log buffer (checksum, piece). A new file changes the entry's prev offset,
  so an entry that starts a file is packed again; a test checks that
  appended entries are byte for byte :func:`~minidb.log.header.pack_entry`'s;
- one flag (``_writable``) says whether the log refuses work (closed,
  read-only, a failed fsync); only then does ``_check_usable`` say which;
- one comparison, against ``_fits_until`` (the smaller of the file's
  allocated end and the log buffer's end), tells whether the entry needs a
  file flip or a buffer write; only then does ``_make_room`` look at which;
- the counters changed under the write latch (``nEntries``, ``nBytes``,
  ``nWrites``, ``nBytesWritten``) are incremented in place
  (``Stats.held_counts``) and take no second lock; the sync counters are
  counted under the sync state's lock likewise.

No hook of :mod:`minidb.impl` is on the append path; group commit's
(``COMMIT_STEP``, exercise 01b) is called in ``sync``.

A failed fsync leaves the file's state unknown, so the log manager refuses
all further work (the remedy is to reopen, which trusts only what is on
disk). A full disk refuses the append that needed the space and changes
nothing: the entry is not logged, and earlier buffered entries stay buffered.

Opening finds the end of the log by reading and checking the last file entry
by entry (:mod:`minidb.log.end`). With ``keep_opening_scan`` the log keeps
those checked entries for :meth:`LogManager.take_opening_scan`, once: the log
store's recovery reads the last file from them instead of reading and
checking it again. They describe the file's bytes as opened, so writing
anything to the log files while they are still held is a ``LogError`` (the
check is in the buffer write, ``set_invisible`` and ``remove_head_files``):
the one reader must take them before anything is written.

**The environment id** (:mod:`minidb.log.logdef`): every file's FileHeader
carries it. Opening takes it from ``env_id`` if the opener knows it (a page
store reads it from its volume header), else from the log's first kept file;
a new log draws one (:func:`~minidb.log.envid.new_env_id`: random for a real
environment, from ``env_seed`` or seed 0 on a simulated disk or with an
injected ``clock``, so runs repeat). Opening refuses a first or last file
that carries another id, and the reader refuses any other such file when it
first opens it (:class:`~minidb.errors.ForeignLogFileError`).

Listeners (``add_listener``) are called after the latch is released with
``(lsn, entry_type, vlsn)``; the VLSN index registers mappings this way.

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
  where it costs nothing but fewer spares (:meth:`room` counts only the
  spares that exist). At a flip the old file is cut to its last entry (only
  the last file has unwritten space, as the readers expect) and a spare is
  renamed to the new file. Opening zeroes a torn tail in place instead of
  cutting it;
- ``admit``: a hook called under the write latch with ``(entry_type, values,
  size)`` before an entry is placed; it may raise to refuse the entry (nothing
  changes) or return a callable, called with the entry's LSN once the entry
  is in the buffer (it is also given ``room``, usable under the latch). The
  page store's log-space reservation is this hook
  (:mod:`minidb.pagestore.wal.logspace`); :meth:`room` says how many bytes can
  still be appended.

**An unbounded log on a bounded disk.** Without ``max_files`` the disk is the
bound: :meth:`room` is the disk's free space (``Disk.free_space``) less the
bytes buffered but not yet written, less a file header and ``waste`` for each
file that space could still hold; None when the disk tells no bound (a
``SimDisk`` without a capacity). The file system is asked again once
:data:`FREE_SPACE_RESAMPLE` bytes were logged since it was last asked, and
at every call once fewer than :data:`FREE_SPACE_EXACT` bytes are left, so
room is exact where it matters and costs no system call per entry elsewhere.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from zlib import crc32

from minidb.errors import DiskError, DiskFullError, LogError, LogFullError, UserError
from minidb.io import Disk, File
from minidb.log.end import CheckedFile, LogEnd, TailCut, scan_end
from minidb.log.envid import new_env_id
from minidb.log.entry import LogEntry
from minidb.log.files import all_log_file_numbers, file_name
from minidb.log.head import HEAD_FILE, read_log_head, write_log_head
from minidb.log.groupcommit import (COMMIT_STEP, FOLLOW, GATHER, LEAD, SERVED, WRITE, GroupCommitPolicy, ManualClock,
                                    MonotonicClock)
from minidb.log.header import (CRC, HEADER_SIZE, INVISIBLE, MAX_HEADER_SIZE, REPLICATED, VLSN_PRESENT, Provisional,
                               make_flags, pack_header)
from minidb.log.logdef import FILE_HEADER, FILE_HEADER_ENTRY_SIZE, LOG_VERSION
from minidb.log.lsn import LSN, MAX_OFFSET, NULL_LSN, require_lsn
from minidb.log.reader import LogReader
from minidb.log.types import EntryType
from minidb.stats import Stats, Trace

DEFAULT_FILE_MAX = 10 * 1024 * 1024
DEFAULT_BUFFER_SIZE = 64 * 1024
MIN_FILE_MAX = 256
SPARE_PREFIX = "logspare"  # spare files logspare1, logspare2, ...
SPARE_TMP = "logspare.tmp"
FREE_SPACE_EXACT = 64 << 20  # below this much free disk space, room asks the disk at every call
FREE_SPACE_RESAMPLE = 4 << 20  # above it, room asks again after this many bytes were logged

Listener = Callable[[LSN, EntryType, "int | None"], None]
# admit(entry_type, values, size, room): may raise to refuse; room(waste) is room() under the latch
Admit = Callable[[EntryType, "dict[str, Any]", int, Callable[[int], "int | None"]], "Callable[[LSN], None] | None"]
_new_lsn = tuple.__new__  # an LSN without its range checks, for offsets the manager itself computed
_NOT_PROVISIONAL = Provisional.NO
CRC_SIZE = CRC.size
FILE_HEADER_SIZE = FILE_HEADER_ENTRY_SIZE


class LogManager:
    """The shared log of one environment (see the module documentation)."""

    def __init__(
        self,
        disk: Disk,
        *,
        file_max: int = DEFAULT_FILE_MAX,
        buffer_size: int = DEFAULT_BUFFER_SIZE,
        readonly: bool = False,
        clock: Callable[[], float] = time.time,
        max_files: int | None = None,
        preallocate: bool = False,
        commit_delay: float = 0.5,
        commit_clock: MonotonicClock | ManualClock | None = None,
        keep_opening_scan: bool = False,
        erasing: Mapping[int, Mapping[int, int]] | None = None,
        env_id: int | None = None,
        env_seed: int | str | None = None,
    ):
        if not isinstance(file_max, int) or not MIN_FILE_MAX <= file_max <= MAX_OFFSET:
            if isinstance(file_max, int) and file_max < MIN_FILE_MAX:
                raise UserError(f"file_max {file_max} is too small (at least {MIN_FILE_MAX} bytes)")
            # An offset inside a file is 32 bits (an LSN's low half), so no file may grow past that.
            raise UserError(f"file_max {file_max!r} must be a number of bytes from {MIN_FILE_MAX} to {MAX_OFFSET}")
        if max_files is not None and (not isinstance(max_files, int) or max_files < 2):
            raise UserError(f"max_files {max_files!r} must be a number of log files, at least 2")
        if not isinstance(buffer_size, int) or buffer_size < 1:
            raise UserError(f"buffer_size {buffer_size!r} must be a positive number of bytes")
        self.disk = disk
        self.file_max = file_max
        self.buffer_size = buffer_size
        self.readonly = readonly
        self.clock = clock
        self.max_files = max_files
        self.preallocate = preallocate
        self.admit: Admit | None = None
        self.head = read_log_head(disk)
        self._allocated = file_max  # bytes of the current file that need no new disk space
        self._free_sample: tuple[int, int] | None = None  # (the disk's free space, nBytes) when last asked
        self._spares: list[str] = []
        self.trace = Trace()
        self.stats = Stats("log", [
            "nEntries", "nBytes", "nWrites", "nBytesWritten", "nFlushes", "nSyncRequests",
            "nFsyncs", "nGroupCommitWaits", "nFileFlips", "nFilesRemoved", "nSparesMade", "nSparesFailed",
        ])
        self._counts = self.stats.held_counts()  # nEntries, nBytes, nWrites, nBytesWritten: changed under the latch
        self.vlsn_allocator: Callable[[], int] | None = None
        self._listeners: list[Listener] = []
        self._latch = threading.Lock()  # the log write latch
        self.group_commit = GroupCommitPolicy(commit_delay, commit_clock)
        sync_lock = threading.Lock()  # guards the sync state below and the sync counters
        self._sync_cond = threading.Condition(sync_lock)  # followers wait here for their fsync
        self._gather_cond = threading.Condition(sync_lock)  # a gathering leader waits here for followers
        self._syncing = False
        self._waiting = 0  # followers waiting for the next fsync; 0 again when an fsync ends
        self._fsync_generation = 0  # fsyncs led so far
        self._requests = 0  # sync requests since the last leader took the log's end (its batch)
        self._retired: list[File] = []
        self._failed: str | None = None
        self._closed = False
        self._writable = not readonly  # False once closed, read-only or failed: append tests this one flag

        if env_id is not None and (not isinstance(env_id, int) or not 0 < env_id < 1 << 64):
            raise UserError(f"env_id {env_id!r} must be a positive 64-bit number")
        found, checked = scan_end(disk, erasing=erasing, env_id=env_id)
        # The environment's id: the opener's, else the log's files', else a new log's (minidb.log.envid).
        self.env_id: int = found.env_id if found.env_id is not None else new_env_id(disk, clock, env_seed)
        # The last file as opening checked it, for take_opening_scan (its one reader: recovery).
        self._opening_scan: CheckedFile | None = checked if keep_opening_scan else None
        self.tail_cut: TailCut | None = found.cut
        if found.cut is not None:
            self.trace.emit("opened with %s", found.cut)
        self._file_number = found.last_file or 1
        self._next_offset = found.end_offset
        self._last_offset = found.last_offset
        self._last_lsn = found.last_entry
        self._prev_file_last = found.last_entry_in_prev_file
        self._buffer = bytearray()
        self._buffer_base = self._next_offset
        self._set_fits_until()
        self._handle: File | None = None
        self._durable_end = LSN(self._file_number, self._next_offset)
        self._files = list(found.files)
        self.reader = LogReader(disk, self.end, self._buffer_view, self._end_position, self.env_id)
        self.reader.belonging.update(found.files[:1] + found.files[-1:])  # opening checked their FileHeaders
        self.erasing = self.reader.erasing  # an unfinished erasure (the log store's eraser's): file -> offset -> type
        self.erasing.update({number: dict(entries) for number, entries in (erasing or {}).items()})
        if not readonly:
            self._remove_below_head(None)  # left by a crash after the head was recorded
            self._open_for_writing(found)

    # -- opening ------------------------------------------------------------
    def _open_for_writing(self, found: LogEnd) -> None:
        name = file_name(self._file_number)
        self._handle = self.disk.open(name, create=True)
        if found.cut is not None and self.preallocate:
            self._zero_tail(name, found.cut)
        elif found.cut is not None:
            self._handle.truncate(found.cut.offset)
            self._handle.fsync()
            self.trace.emit("truncated %s to %d bytes", name, found.cut.offset)
        if self.preallocate:
            if not self.disk.exists(HEAD_FILE):
                write_log_head(self.disk, self.head)  # made now: recording a head later needs no disk space
            self._allocated = max(self._handle.size(), self._next_offset)
            if self._allocated < self.file_max:
                self._extend(self._handle)
            self._find_spares()
            self._set_fits_until()
        if self._file_number not in self._files:
            self._files.append(self._file_number)
        if self._next_offset == 0:
            self._log_file_header()

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
        logged = self._counts["nBytes"]
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
        removed = self._remove_below_head(archive)
        if self.preallocate:
            with self._latch:
                self._fill_spares()  # the space of the files removed
        return removed

    def _remove_below_head(self, archive: Callable[[str, bytes], None] | None) -> list[str]:
        removed = []
        for number in all_log_file_numbers(self.disk):
            if number >= self.head:
                break
            name = file_name(number)
            if archive is not None:
                with self.disk.open(name) as f:
                    archive(name, f.read(0, f.size()))
            self.disk.delete(name)
            removed.append(name)
            self.stats.add("nFilesRemoved")
        if removed:
            self.trace.emit("removed %s below the log head %s", ", ".join(removed), file_name(self.head))
        return removed

    def _log_file_header(self) -> None:
        values = {
            "file_number": self._file_number,
            "created_ms": int(self.clock() * 1000),
            "last_entry_lsn": self._prev_file_last,
            "log_version": LOG_VERSION,
            "env_id": self.env_id,
        }
        self._add(FILE_HEADER.code, make_flags(), FILE_HEADER.encode(values), None)

    # -- appending ----------------------------------------------------------
    def add_listener(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def append(
        self,
        entry_type: EntryType,
        values: dict[str, Any] | None = None,
        *,
        provisional: Provisional = Provisional.NO,
        replicated: bool = False,
        vlsn: int | None = None,
    ) -> LSN:
        """Log one entry; return its LSN. Not durable until :meth:`sync`."""
        # The plain entry (a dict of values, not provisional, no VLSN) is told apart in one test;
        # anything else has its arguments checked one by one, so an error names what is wrong.
        if (type(values) is dict and provisional is _NOT_PROVISIONAL and not replicated and vlsn is None
                and type(entry_type) is EntryType):
            flags = 0
        else:
            values, flags = _append_arguments(entry_type, values, provisional, replicated, vlsn)
            if flags & REPLICATED:
                return self._append_replicated(entry_type, values, flags, vlsn)
        code = entry_type.code
        latch = self._latch
        latch.acquire()  # not ``with``: the same latch, at half the cost
        try:
            # What the checksum covers, header after the checksum and item, in one piece from the type's
            # generated codec: one pack, one CRC, two buffer writes. The header names the entry before
            # this one in the file, hence the latch.
            summed = entry_type.encode_summed(values, code, flags, self._last_offset or 0)
            size = CRC_SIZE + len(summed)
            if not self._writable:
                self._check_usable()
            admitted = self.admit(entry_type, values, size, self._room) if self.admit is not None else None
            offset = self._next_offset
            if offset + size > self._fits_until:
                if self._make_room(size):  # a new file: the entry now follows its FileHeader, at offset 0
                    summed = entry_type.encode_summed(values, code, flags, self._last_offset)
                offset = self._next_offset
            buffer = self._buffer
            buffer += CRC.pack(crc32(summed))  # an appended entry is never INVISIBLE: no bit to mask
            buffer += summed
            lsn = _new_lsn(LSN, (self._file_number, offset))  # in range: file_max <= MAX_OFFSET
            self._last_offset = offset
            self._next_offset = offset + size
            self._last_lsn = lsn
            counts = self._counts
            counts["nEntries"] += 1
            counts["nBytes"] += size
            if admitted is not None:
                admitted(lsn)
        finally:
            latch.release()
        if self._listeners:  # usually none: the test costs less than an empty loop
            for listener in self._listeners:
                listener(lsn, entry_type, None)
        return lsn

    def _append_replicated(self, entry_type: EntryType, values: dict[str, Any], flags: int, vlsn: int | None) -> LSN:
        """:meth:`append` of a replicated entry (its header carries a VLSN), the careful way: ``_add``."""
        item = entry_type.encode(values)
        size = MAX_HEADER_SIZE + len(item)
        with self._latch:
            self._check_usable()
            if vlsn is None and self.vlsn_allocator is None:
                raise LogError(f"cannot log replicated {entry_type.name}: this log allocates no VLSNs")
            admitted = self.admit(entry_type, values, size, self._room) if self.admit is not None else None
            if self._next_offset + size > self._fits_until:
                self._make_room(size)
            if vlsn is None:
                # Allocated only now that nothing can fail: the VLSN stream has no gaps.
                vlsn = self.vlsn_allocator()  # type: ignore[misc]
            lsn = self._add(entry_type.code, flags, item, vlsn)
            if admitted is not None:
                admitted(lsn)
        for listener in self._listeners:
            listener(lsn, entry_type, vlsn)
        return lsn

    def _set_fits_until(self) -> None:
        """Where the next entry may end without a file flip or a buffer write (caller holds the latch):
        the smaller of the file's allocated end and the buffer's end, so ``append`` tests both at once."""
        self._fits_until = min(self._allocated, self._buffer_base + self.buffer_size)

    def _make_room(self, size: int) -> bool:
        """Start a new file if an entry of ``size`` bytes would pass this one's end, and write the buffer
        out if the entry would not fit in it (caller holds the latch). True if a new file was started."""
        flipped = self._next_offset + size > self._allocated and bool(self._last_offset)
        if flipped:
            self._flip()
        if len(self._buffer) + size > self.buffer_size:
            self._write_buffer()  # (nothing to write if it is empty: an entry bigger than the buffer)
        return flipped

    def force_flip(self) -> int:
        """Finish the current log file now and start the next (JE's ``forceLogFileFlip``); returns the
        new file's number. Nothing happens to an empty file (one holding only its FileHeader)."""
        with self._latch:
            self._check_usable()
            if self._last_offset:
                self._flip()
            return self._file_number

    def _add(self, code: int, flags: int, item: bytes, vlsn: int | None) -> LSN:
        """Put an entry in the buffer the careful way (caller holds the latch): the way of the file
        header and of replicated entries. :meth:`append` does the same for other entries with the
        header packed by the type's codec (a test checks they agree)."""
        crc, summed = pack_header(code, flags, self._last_offset or 0, item, vlsn)
        offset = self._next_offset
        lsn = LSN(self._file_number, offset)
        self._buffer += crc + summed + item
        size = len(crc) + len(summed) + len(item)
        self._last_offset = offset
        self._next_offset = offset + size
        self._last_lsn = lsn
        self.stats.add_held("nEntries")
        self.stats.add_held("nBytes", size)
        return lsn

    def take_opening_scan(self) -> CheckedFile | None:
        """The last file's entries as opening the log checked them, once (then None; always None
        unless the log was opened with ``keep_opening_scan``).

        A reader that reads the log's last file right after opening (the log store's recovery) takes
        them instead of reading and checking every byte again. They describe the bytes as opened, so
        they must be taken before anything writes to the log: writing while they are still held is a
        :class:`~minidb.errors.LogError` (:meth:`_check_opening_scan_taken`), and the readers use them
        only while the log still ends where opening found it (nothing appended).
        """
        checked, self._opening_scan = self._opening_scan, None
        return checked

    def _check_opening_scan_taken(self) -> None:
        if self._opening_scan is not None:
            raise LogError(f"{self.disk.where()}: the log is being written while the entries its opening "
                           "checked are still kept for a reader (take_opening_scan first)")

    def _write_buffer(self) -> None:
        """Write the log buffer to the current file (caller holds the latch)."""
        if not self._buffer:
            return
        assert self._handle is not None
        self._check_opening_scan_taken()
        self._handle.write(self._buffer_base, bytes(self._buffer))
        self._counts["nWrites"] += 1
        self._counts["nBytesWritten"] += len(self._buffer)
        self._buffer_base += len(self._buffer)
        self._buffer.clear()
        self._set_fits_until()

    def _flip(self) -> None:
        """Finish the current file (write and fsync it) and start the next."""
        assert self._handle is not None
        old = self._file_number
        if self.max_files is not None and old + 1 - self.head + 1 > self.max_files:
            raise LogFullError(f"{self.disk.where()}: the log is full: {self.max_files} log files, from "
                               f"{file_name(self.head)} to {file_name(old)}, and no more may exist")
        if self.preallocate and not self._spares:
            raise LogFullError(f"{self.disk.where()}: no room for {file_name(old + 1)}: the disk is full "
                               f"(no spare log file)")
        self._write_buffer()
        with self._sync_cond:
            synced = LSN(old, self._next_offset) <= self._durable_end
        if self.preallocate and self._handle.size() > self._next_offset:
            self._handle.truncate(self._next_offset)  # only the last file has unwritten space
            synced = False
        if not synced:
            self._fsync_handle(self._handle)
        with self._sync_cond:
            self._durable_end = max(self._durable_end, LSN(old, self._next_offset))
            if self._syncing:
                self._retired.append(self._handle)
            else:
                self._handle.close()
        self._prev_file_last = LSN(old, self._last_offset or 0)
        self._file_number = old + 1
        self._handle = self._new_file(file_name(self._file_number))
        self.reader.belonging.add(self._file_number)
        self._allocated = self.file_max
        self._files.append(self._file_number)
        self._next_offset = self._buffer_base = 0
        self._set_fits_until()
        self._last_offset = None
        self._log_file_header()
        self.stats.add("nFileFlips")
        self.trace.emit("file %s full at 0x%x bytes; now writing %s", file_name(old), self._prev_file_last.offset, file_name(self._file_number))
        if self.preallocate:
            self._fill_spares()

    # -- flushing and syncing -----------------------------------------------
    def flush(self) -> None:
        """Write the log buffer to the file (no fsync)."""
        with self._latch:
            self._check_usable()
            self._write_buffer()
            self.stats.add("nFlushes")

    def is_durable(self, lsn: LSN) -> bool:
        require_lsn(lsn)
        with self._sync_cond:
            return lsn < self._durable_end

    @property
    def durable_end(self) -> LSN:
        """Where the durable bytes end: the entries that start before it are durable."""
        with self._sync_cond:
            return self._durable_end

    def sync(self, lsn: LSN | None = None) -> None:
        """Return once the entry at ``lsn`` (default: the last one) is durable."""
        if lsn is None:
            with self._latch:
                lsn = self._last_lsn
        require_lsn(lsn)
        if lsn.is_null:
            return
        if lsn >= self.end_lsn:
            raise UserError(f"cannot sync {lsn} in {self.disk.where()}: no entry is there yet (the log ends at {self.end_lsn})")
        clock = self.group_commit.clock
        leading, written, handle, started, batch = False, None, None, 0.0, 0
        with self._sync_cond:
            self.stats.add_held("nSyncRequests")
            self._requests += 1
            try:
                while True:
                    waited = clock.now() - started if leading else 0.0
                    action, target = COMMIT_STEP.call(lsn, self._durable_end, self._syncing and not leading, leading,
                                                      written, self._waiting, self.group_commit.expected, waited,
                                                      self.group_commit.max_wait())
                    if action == SERVED:
                        return
                    if action == FOLLOW:
                        self._follow()
                    elif action == LEAD:
                        self._syncing, leading, started = True, True, clock.now()
                    elif action == GATHER:
                        clock.wait(self._gather_cond, self.group_commit.max_wait() - waited)
                    elif action == WRITE:
                        batch, self._requests = self._requests, 0  # the requests this fsync serves
                        with _released(self._sync_cond):
                            written, handle = self._write_for_sync()
                    else:  # SYNC
                        with _released(self._sync_cond):
                            seconds = self._timed_fsync(handle)
                        if self._failed is None:
                            self._durable_end = max(self._durable_end, target)
                            self.group_commit.fsynced(seconds, batch)
                        leading, written, handle = False, None, None
                        self._end_fsync()
            finally:
                if leading:  # the write or the fsync failed: wake the followers, who try again
                    self._end_fsync()

    def _follow(self) -> None:
        """Wait (sync lock held) for the fsync in flight, counted among its followers."""
        self.stats.add_held("nGroupCommitWaits")
        self._waiting += 1
        self._gather_cond.notify()  # a gathering leader counts its followers
        generation = self._fsync_generation
        try:
            self._sync_cond.wait()
        finally:
            if generation == self._fsync_generation:
                self._waiting -= 1  # else the leader that woke us has set the count to 0

    def _write_for_sync(self) -> tuple[LSN, File]:
        """Write the log buffer for a leader: where the written log ends, and the file to fsync."""
        with self._latch:
            self._check_usable()
            self._write_buffer()
            assert self._handle is not None
            return LSN(self._file_number, self._next_offset), self._handle

    def _timed_fsync(self, handle: File) -> float:
        clock = self.group_commit.clock
        started = clock.now()
        self._fsync_handle(handle)
        return clock.now() - started

    def _end_fsync(self) -> None:
        """The leader's fsync is over (sync lock held): wake every follower."""
        self._syncing = False
        self._waiting = 0  # all woken: those still not durable count themselves again
        self._fsync_generation += 1
        for retired in self._retired:
            retired.close()
        self._retired.clear()
        self._sync_cond.notify_all()

    def _fsync_handle(self, handle: File) -> None:
        try:
            handle.fsync()
        except DiskError as e:
            self._failed = f"fsync of {handle.name} failed ({e})"
            self._writable = False
            raise LogError(f"{self.disk.where()}: {self._failed}; the log must be reopened") from e
        self.stats.add("nFsyncs")

    def _check_usable(self) -> None:
        if self._closed:
            raise LogError(f"{self.disk.where()}: the log is closed")
        if self.readonly:
            raise LogError(f"{self.disk.where()}: the log is open read-only")
        if self._failed is not None:
            raise LogError(f"{self.disk.where()}: {self._failed}; the log must be reopened")

    # -- marking entries invisible (syncup rollback) --------------------------
    FLAGS_OFFSET = 5  # the flags byte in an entry's header (``<IBBII``: checksum, type, flags, ...)

    def set_invisible(self, lsns: list[LSN]) -> int:
        """Set the INVISIBLE flag bit of the replicated entries at ``lsns`` in place, in that order, and
        fsync each file changed before the next; returns how many bits changed (already set: skipped).

        The buffer is written out first, so every entry is in its file. The checksum leaves the bit
        out, so the entries stay valid; only a syncup rollback calls this (:mod:`minidb.replication.syncup.rollback`).
        A non-replicated entry among them is refused (``UserError``) before anything is written.
        """
        with self._latch:
            self._check_usable()
            self._check_opening_scan_taken()
            self._write_buffer()
            changed = 0
            handles: dict[int, File] = {}
            try:
                found = []
                for lsn in lsns:  # read every flags byte first: a refusal changes nothing
                    require_lsn(lsn)
                    handle = handles.get(lsn.file)
                    if handle is None:
                        handle = handles[lsn.file] = (self._handle if lsn.file == self._file_number
                                                      else self.disk.open(file_name(lsn.file)))
                    (flags,) = handle.read(lsn.offset + self.FLAGS_OFFSET, 1)
                    if not flags & REPLICATED:
                        raise UserError(f"{self.disk.where()}: the entry at {lsn} is not replicated: only a "
                                        "replicated entry can be made invisible; nothing was changed")
                    found.append((lsn, handle, flags))
                for lsn, handle, flags in found:
                    if flags & INVISIBLE:
                        continue
                    handle.write(lsn.offset + self.FLAGS_OFFSET, bytes((flags | INVISIBLE,)))
                    self._fsync_handle(handle)
                    changed += 1
            finally:
                for number, handle in handles.items():
                    if handle is not self._handle:
                        handle.close()
            return changed

    # -- positions and reading ------------------------------------------------
    def end(self) -> LogEnd:
        """The current end of the log (the next entry's position)."""
        with self._latch:
            return LogEnd(
                tuple(self._files), self._file_number if (self._files or self._handle) else None,
                self._next_offset, self._last_offset, self._last_lsn, self._prev_file_last, self.tail_cut,
                self.env_id,
            )

    def _end_position(self) -> tuple[int, int] | None:
        """``end().end_lsn`` as a plain (file, offset) tuple (None while there is no log file), without
        building a LogEnd or an LSN: every read asks."""
        with self._latch:
            if not (self._files or self._handle):
                return None
            return self._file_number, self._next_offset

    @property
    def last_lsn(self) -> LSN:
        """The LSN of the last entry appended (NULL_LSN for an empty log)."""
        return self._last_lsn

    @property
    def end_lsn(self) -> LSN:
        """The LSN the next entry will get, were it to fit in this file."""
        return LSN(self._file_number, self._next_offset)

    def _buffer_view(self, number: int, start: int | None = None) -> tuple[bytes, int] | None:
        """The log buffer's bytes and the file offset they start at, if ``number`` is being written.

        With ``start``, only the bytes from that offset on: none (``b""``) if it lies below the
        buffer, whose bytes are then all on disk; a fetch copies no more than it reads."""
        with self._latch:
            if number != self._file_number or self._handle is None:
                return None
            base = self._buffer_base
            if start is None:
                return bytes(self._buffer), base
            if start < base:
                return b"", base
            return bytes(self._buffer[start - base :]), start

    def read(self, lsn: LSN) -> LogEntry:
        return self.reader.read_entry(require_lsn(lsn))

    def scan(self, start: LSN | None = None, stop: LSN | None = None, checked: CheckedFile | None = None):
        """Entries from ``start`` up to ``stop`` (:meth:`LogReader.forward`; ``checked``: what
        :meth:`take_opening_scan` gave)."""
        if start is not None:
            require_lsn(start, "scan start")
        if stop is not None:
            require_lsn(stop, "scan stop")
        return self.reader.forward(start, stop, checked)

    def scan_backward(self, start: LSN | None = None):
        if start is not None:
            require_lsn(start, "scan start")
        return self.reader.backward(start)

    # -- closing ------------------------------------------------------------
    def close(self, sync: bool = True) -> None:
        if self._closed:
            return
        if not self.readonly and self._failed is None and sync:
            self.sync()
        self._closed, self._writable = True, False
        if self._handle is not None:
            self._handle.close()
        self.reader.close()

    def __enter__(self) -> "LogManager":
        return self

    def __exit__(self, exc_type, *exc: object) -> None:
        self.close(sync=exc_type is None)

    def __repr__(self) -> str:
        return f"LogManager({self.disk.where()}, end={self.end_lsn})"


def _append_arguments(entry_type: Any, values: Any, provisional: Any, replicated: bool,
                      vlsn: Any) -> tuple[dict[str, Any], int]:
    """The values and header flags of an entry to append, or a UserError naming the bad argument."""
    if not isinstance(entry_type, EntryType):
        raise UserError(f"cannot log {entry_type!r}: not an entry type (e.g. minidb.log.TRACE)")
    if provisional is Provisional.NO:
        flags = 0
    elif isinstance(provisional, Provisional):
        flags = provisional.value
    else:
        raise UserError(f"cannot log {entry_type.name}: provisional must be a Provisional, not {provisional!r}")
    if vlsn is not None and (not isinstance(vlsn, int) or not 0 < vlsn < 1 << 64):
        raise UserError(f"cannot log {entry_type.name}: VLSN {vlsn!r} is not a positive 64-bit number")
    if values is None:
        values = {}
    elif not isinstance(values, dict):
        raise UserError(f"cannot log {entry_type.name}: values must be a dict of its fields, not {values!r}")
    if replicated or vlsn is not None:
        flags |= REPLICATED | VLSN_PRESENT
    return values, flags


@contextmanager
def _released(lock: threading.Condition) -> Iterator[None]:
    """``lock`` (held by the caller) released for the block, held again after it, whatever happens."""
    lock.release()
    try:
        yield
    finally:
        lock.acquire()


def open_log(disk: Disk, **options: Any) -> LogManager:
    """Open (or create) the log on ``disk``; see :class:`LogManager`."""
    return LogManager(disk, **options)


__all__ = ["LogManager", "open_log", "DEFAULT_FILE_MAX", "NULL_LSN", "DiskFullError", "LogFullError", "SPARE_PREFIX"]
