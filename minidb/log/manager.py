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

Appending one entry, step by step (:meth:`LogManager.append`, the one way
every entry goes; a file's FileHeader, logged while the file switch holds
the latch, takes step 4 alone):

1. the arguments are checked, and the item encoded from the entry type's
   field table (:meth:`~minidb.log.types.EntryType.encode`);
2. under the write latch: the log must be usable, ``admit`` (if set) may
   refuse the entry, and :meth:`_make_room` starts a new file or writes the
   buffer out if the entry would not fit;
3. a replicated entry without a VLSN gets one from ``vlsn_allocator`` now,
   when nothing can fail any more, so the VLSN stream has no gaps;
4. :meth:`_add` packs the header with :func:`~minidb.log.header.pack_header`
   (its ``prev`` names the entry before it in this file), puts header and
   item in the buffer and moves the end of the log past them: the entry's
   LSN is where the end was;
5. after the latch is released, the listeners hear of the entry (the entry
   listeners with the entry itself, header and item as logged).

No hook of :mod:`minidb.impl` is on the append path; group commit's
(``COMMIT_STEP``, exercise 01b) is called in ``sync``. ``LogManager`` is a
hot spot (``LOG_MANAGER``): constructing it makes the log manager the
current mode chooses, this class or its twin in ``minidb/fast/log/manager.py``.

A failed fsync leaves the file's state unknown, so the log manager refuses
all further work (the remedy is to reopen, which trusts only what is on
disk). A full disk refuses the append that needed the space and changes
nothing: the entry is not logged, and earlier buffered entries stay buffered.

Opening finds the end of the log by reading and checking the last file entry
by entry (:mod:`minidb.log.end`), unless its caller just did and passes it on
(``opening_end``: what ``scan_end`` gave, nothing written since). With ``keep_opening_scan`` the log keeps
those checked entries for :meth:`LogManager.take_opening_scan`, once: the log
store's recovery reads the last file from them instead of reading and
checking it again. They describe the file's bytes as opened, so writing
anything to the log files while they are still held is a ``LogError`` (the
check is in the buffer write, ``set_invisible`` and ``remove_head_files``):
the one reader must take them before anything is written.

**The environment id** (:mod:`minidb.log.logdef`): every file's FileHeader
carries it. Opening takes it from ``env_id`` if the opener knows it (a page
store reads it from its volume header), else from the log's files (the first
and last file's; the majority's when those differ: :func:`~minidb.log.end.log_env_id`);
a new log draws one (:func:`~minidb.log.envid.new_env_id`: random for a real
environment, from ``env_seed`` or seed 0 on a simulated disk or with an
injected ``clock``, so runs repeat). Opening refuses a first or last file
that carries another id, and the reader refuses any other such file when it
first opens it (:class:`~minidb.errors.ForeignLogFileError`).

Listeners (``add_listener``) are called after the latch is released with
``(lsn, entry_type, vlsn)``. Entry listeners (``add_entry_listener``) are
called then with the :class:`~minidb.log.entry.LogEntry` as logged (its
header read back from the buffer, its item): the VLSN index registers
mappings this way and keeps the newest entries, so a feeder can send one
without reading the log (JE's ``LogItem``).

**A bounded log** (``max_files``, ``preallocate``, ``admit``) and the room
left on the disk are :mod:`minidb.log.space`'s.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from minidb import impl
from minidb.errors import DiskError, DiskFullError, LogError, LogFullError, UserError
from minidb.io import Disk, File
from minidb.log.deleted import read_deleted_files
from minidb.log.end import CheckedFile, LogEnd, TailCut, scan_end
from minidb.log.entry import LogEntry
from minidb.log.envid import new_env_id
from minidb.log.files import file_name
from minidb.log.groupcommit import (
    COMMIT_STEP,
    FOLLOW,
    GATHER,
    LEAD,
    SERVED,
    WRITE,
    GroupCommitPolicy,
    ManualClock,
    MonotonicClock,
)
from minidb.log.head import HEAD_FILE, read_log_head, write_log_head
from minidb.log.header import (
    HEADER_SIZE,
    INVISIBLE,
    MAX_HEADER_SIZE,
    REPLICATED,
    VLSN_PRESENT,
    Provisional,
    make_flags,
    pack_header,
    read_header,
)
from minidb.log.logdef import FILE_HEADER, FILE_HEADER_ENTRY_SIZE, LOG_VERSION
from minidb.log.lsn import LSN, MAX_OFFSET, NULL_LSN, require_lsn
from minidb.log.reader import LOG_READER
from minidb.log.space import SPARE_PREFIX, LogSpace
from minidb.log.types import EntryType
from minidb.stats import Stats, Trace

DEFAULT_FILE_MAX = 10 * 1024 * 1024
DEFAULT_BUFFER_SIZE = 64 * 1024
MIN_FILE_MAX = 256

Listener = Callable[[LSN, EntryType, "int | None"], None]
EntryListener = Callable[[LogEntry], None]
# admit(entry_type, values, size, room): may raise to refuse; room(waste) is room() under the latch
Admit = Callable[[EntryType, "dict[str, Any]", int, Callable[[int], "int | None"]], "Callable[[LSN], None] | None"]
FILE_HEADER_SIZE = FILE_HEADER_ENTRY_SIZE


class LogManager(LogSpace):
    """The shared log of one environment (see the module documentation)."""

    def __new__(cls, *args: Any, **options: Any) -> "LogManager":
        """The log manager the current mode chooses (:mod:`minidb.impl`): this class or its twin."""
        if cls is LogManager:
            cls = LOG_MANAGER.chosen()
        return super().__new__(cls)

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
        opening_end: tuple[LogEnd, CheckedFile | None] | None = None,
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
        self.deleted = read_deleted_files(disk)  # middle files deleted on purpose (minidb.log.deleted)
        self._allocated = file_max  # bytes of the current file that need no new disk space
        self._free_sample: tuple[int, int] | None = None  # (the disk's free space, nBytes) when last asked
        self._spares: list[str] = []
        self.trace = Trace()
        self.stats = Stats("log", [
            "nEntries", "nBytes", "nWrites", "nBytesWritten", "nFlushes", "nSyncRequests",
            "nFsyncs", "nGroupCommitWaits", "nFileFlips", "nFilesRemoved", "nSparesMade", "nSparesFailed",
        ])
        self.vlsn_allocator: Callable[[], int] | None = None
        self._listeners: list[Listener] = []
        self._entry_listeners: list[EntryListener] = []
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

        if env_id is not None and (not isinstance(env_id, int) or not 0 < env_id < 1 << 64):
            raise UserError(f"env_id {env_id!r} must be a positive 64-bit number")
        found, checked = opening_end or scan_end(disk, erasing=erasing, env_id=env_id)
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
        self._handle: File | None = None
        self._durable_end = LSN(self._file_number, self._next_offset)
        self._files = list(found.files)
        self.reader = LOG_READER.call(disk, self.end, self._buffer_view, self.env_id)
        self.reader.belonging.update(found.files[:1] + found.files[-1:])  # opening checked their FileHeaders
        self.erasing = self.reader.erasing  # an unfinished erasure (the log store's eraser's): file -> offset -> type
        self.erasing.update({number: dict(entries) for number, entries in (erasing or {}).items()})
        if not readonly:
            self._remove_below_head(None)  # left by a crash after the head (or the deleted-files record) was recorded
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
        if self._file_number not in self._files:
            self._files.append(self._file_number)
        if self._next_offset == 0:
            self._log_file_header()

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

    def add_entry_listener(self, listener: EntryListener) -> None:
        """Hear of every entry appended, as logged (after the latch is released, after the listeners)."""
        self._entry_listeners.append(listener)

    def append(
        self,
        entry_type: EntryType,
        values: dict[str, Any] | None = None,
        *,
        provisional: Provisional = Provisional.NO,
        replicated: bool = False,
        vlsn: int | None = None,
        noted: Callable[[LSN], None] | None = None,
    ) -> LSN:
        """Log one entry; return its LSN. Not durable until :meth:`sync` (the steps: module documentation).

        ``replicated``: the entry carries a VLSN, ``vlsn`` or (if None) the next of ``vlsn_allocator``.
        ``noted`` is called with the LSN under the log latch, before any later entry can be appended: what
        a caller records there (a transaction's last LSN) is seen by whoever appends after it (a
        checkpoint's ``chkpt_begin``, then its copy of the transaction table)."""
        values, flags = _append_arguments(entry_type, values, provisional, replicated, vlsn)
        item = entry_type.encode(values)
        size = (MAX_HEADER_SIZE if flags & VLSN_PRESENT else HEADER_SIZE) + len(item)
        with self._latch:
            self._check_usable()
            if flags & REPLICATED and vlsn is None and self.vlsn_allocator is None:
                raise LogError(f"cannot log replicated {entry_type.name}: this log allocates no VLSNs")
            admitted = self.admit(entry_type, values, size, self._room) if self.admit is not None else None
            self._make_room(size)
            if flags & REPLICATED and vlsn is None:
                vlsn = self.vlsn_allocator()  # type: ignore[misc]  (only now that nothing can fail: no gaps)
            lsn = self._add(entry_type.code, flags, item, vlsn)
            if admitted is not None:
                admitted(lsn)
            if noted is not None:
                noted(lsn)
            header = read_header(self._buffer, len(self._buffer) - size)[0] if self._entry_listeners else None
        for listener in self._listeners:
            listener(lsn, entry_type, vlsn)
        if header is not None:
            logged = LogEntry(lsn, header, item)
            for entry_listener in self._entry_listeners:
                entry_listener(logged)
        return lsn

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
        """Put an entry in the buffer at the end of the log (caller holds the latch); its LSN."""
        crc, summed = pack_header(code, flags, self._last_offset or 0, item, vlsn)
        offset = self._next_offset
        lsn = LSN(self._file_number, offset)
        self._buffer += crc + summed + item
        size = len(crc) + len(summed) + len(item)
        self._last_offset = offset
        self._next_offset = offset + size
        self._last_lsn = lsn
        self.stats.add("nEntries")
        self.stats.add("nBytes", size)
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
        self.stats.add("nWrites")
        self.stats.add("nBytesWritten", len(self._buffer))
        self._buffer_base += len(self._buffer)
        self._buffer.clear()

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
            self.stats.add("nSyncRequests")
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
        self.stats.add("nGroupCommitWaits")
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
                for handle in handles.values():
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
        self._closed = True
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


LOG_MANAGER = impl.hot_spot(LogManager)


def open_log(disk: Disk, **options: Any) -> LogManager:
    """Open (or create) the log on ``disk``; see :class:`LogManager`."""
    return LogManager(disk, **options)


__all__ = ["LogManager", "open_log", "DEFAULT_FILE_MAX", "NULL_LSN", "DiskFullError", "LogFullError", "SPARE_PREFIX"]
