"""The data eraser (JE's ``DataEraser``): obsolete user data overwritten in the log files.

A log-structured store never overwrites: a deleted record's key and data stay
in old log files until the cleaner deletes those files, which may be never.
The data eraser bounds that time. It works in *cycles* of one *erase period*
``N``: a cycle selects, when it starts, every log file that may hold
obsolete data, and erases its obsolete entries before the cycle ends. Data
that became obsolete at time ``t`` lies in a file the next cycle selects (it
starts before ``t + N``), so it is erased before ``t + 2N``: in JE's words,
files become obsolete "between N and 2N periods ago" when they are erased.

**Which entries** (:meth:`DataEraser.entries_to_erase`): an entry the
utilization tracker counts obsolete, not erased yet, that holds a key or the
data of a record that is

- *deleted* (``erase_deleted``): the record's database no longer has the key
  (no slot, or a known-deleted one) and no transaction has it locked; this
  covers every old version of the record, its deletion LN and every obsolete
  BIN or IN version that names the key;
- *extinct* (``erase_extinct``): the application's *extinction filter*
  (``extinction_filter(db_name, key)``) says ``EXTINCT``. When it says
  ``MAYBE_EXTINCT`` (the application has not loaded its metadata yet) the
  erasure of the file is aborted and retried later in the cycle.

Records of internal databases (the mapping tree, ``_utilization``, the VLSN
index) are never erased.

**Exclusions**: the file being written, every file of the *recovery
interval* (from the last CkptEnd's firstActiveLSN, or CkptStart, and the
first LSN of any active transaction, to the end: recovery reads them; JE
does not erase there either, so obsolete data at the tail end of the log is
not erased and a warning says so), files in ``protected_files()`` (a backup,
a network restore, a feeder: the cleaner's protection registry). Files in
``reserved_files()`` (cleaned, kept for replication) are deleted with
``delete_reserved(n)`` instead of erased (when it returns False, not now:
the file is erased). :meth:`DataEraser.attach` takes these three from the
environment's cleaner unless told otherwise. Before erasing a file that the VLSN
index covers, ``truncate_vlsn_index(n)`` is called; it returns False when it
cannot truncate (it would leave fewer than 1 000 VLSNs, or the files hold no
VLSN) and the file is then left alone: the cycle records it *skipped*, not
erased, and the next cycle selects it again. The hooks default to "none" and to
``None``; the replication layer registers its own (the log store never
imports it). Just before a file begins to change, every callable in the
environment's ``hooks.before_file_erased`` is called with its number, so that
whoever caches what the file holds (a network restore server's checksums of
whole files) forgets it first.

**Aborts**: the erasure of a file stops when the file becomes protected
(:meth:`DataEraser.abort_erase`, called by a backup) or the extinction filter
says ``MAYBE_EXTINCT``; the file stays to do and is tried again after the
others. Aborts (and the throttle's waits) come before the eraser records its
intent (:mod:`.protocol`): once a file begins to change, its erasure is
finished, so a recorded intent never outlives the step but for a crash (or a
disk error), and the next open finishes it. A cycle not finished by its end time is aborted and a fresh one
starts (throttling never catches up: :mod:`.throttle`).

**Persistence**: the cycle's state is written after each file
(:mod:`.state`). At :meth:`close` an unfinished cycle is *suspended*; at
:meth:`open` it is *resumed* if its end time has not passed, else a fresh
cycle starts. Every message starts with ``ERASER`` and names the cycle's
start and end (UTC), the files processed and the files still to do.

**Before erasing** a file the eraser makes the whole log durable (an fsync of
the log): the entries that made the data obsolete (a deletion, a commit)
must survive any crash that the erasure survives.

Configuration (:class:`EraserConfig`, JE's parameter names) may change at run
time through :meth:`DataEraser.config_update` (JE's ``EnvConfigObserver``):
turning the eraser off or changing the period aborts the current cycle. If
the thread is processing a file then, the cycle is dropped (its state file
deleted) when that file is done, after the thread wrote the cycle's state:
a dropped cycle's state is never written back, so it never resumes.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING

from minidb.errors import UserError
from minidb.log import LSN, LogEntry
from minidb.log.files import file_name, log_file_numbers
from minidb.log.scan import FileScanner
from minidb.logstore.eraser.protocol import STEP_SHARES, erase_file, locate
from minidb.logstore.eraser.state import (
    DELETED,
    ERASED,
    SKIPPED,
    STATE_FILE,
    TO_DO,
    CycleState,
    read_state,
    write_state,
)
from minidb.logstore.eraser.throttle import EraserShutdown, SystemClock, WorkThrottle, work_estimate
from minidb.logstore.errors import LockConflictError
from minidb.logstore.logdef import IN_TYPES, USER_LN_TYPES, recovery_start
from minidb.stats import Stats, Trace

if TYPE_CHECKING:
    from minidb.logstore.env import Environment

ERASER_STATS = ["eraserCycleStart", "eraserCycleEnd", "eraserFilesRemaining", "eraserFilesErased",
                "eraserFilesDeleted", "eraserFilesAlreadyDeleted", "eraserFSyncs", "eraserReads",
                "eraserReadBytes", "eraserWrites", "eraserWriteBytes"]

IDLE_WAIT_MS = 1000  # the thread's wait when every file still to do is protected

EXTINCT, NOT_EXTINCT, MAYBE_EXTINCT = "EXTINCT", "NOT_EXTINCT", "MAYBE_EXTINCT"


@dataclass(frozen=True)
class EraserConfig:
    """The eraser's settings (JE's parameters; all of them mutable at run time).

    =========================  ==========================  ========
    setting                    JE parameter                default
    =========================  ==========================  ========
    ``run_eraser``             je.env.runEraser            False
    ``erase_period_ms``        je.erase.period             0 (none)
    ``erase_deleted``          je.erase.deletedDatabases   True
    ``erase_extinct``          je.erase.extinctRecords     True
    =========================  ==========================  ========

    The log store has no database removal, so ``erase_deleted`` applies to
    deleted records (and to the records of a database id that no longer
    exists). The eraser runs only when ``run_eraser`` is on and the period is
    positive.
    """

    run_eraser: bool = False
    erase_period_ms: int = 0
    erase_deleted: bool = True
    erase_extinct: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.erase_period_ms, int) or self.erase_period_ms < 0:
            raise UserError(f"erase_period_ms {self.erase_period_ms!r} must be a whole number of ms, 0 or more")

    @property
    def active(self) -> bool:
        return self.run_eraser and self.erase_period_ms > 0


class EraserAbort(Exception):
    """Erasure of the current file stops (protected, MAYBE_EXTINCT); the file stays to do."""


class CycleLate(Exception):
    """The cycle did not finish by its end time."""


def utc(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


class DataEraser:
    """The data eraser of one environment (see the module documentation)."""

    def __init__(self, env: "Environment", config: EraserConfig | None = None, clock=None, *,
                 protected_files: Callable[[], set[int]] = set, reserved_files: Callable[[], set[int]] = set,
                 delete_reserved: Callable[[int], bool | None] | None = None,
                 truncate_vlsn_index: Callable[[int], bool] | None = None,
                 extinction_filter: Callable[[str, bytes], str] | None = None):
        env.check_writable("run the data eraser")  # it overwrites log entries in place
        self.env = env
        self.disk = env.disk
        self.config = config or EraserConfig()
        self.clock = clock or SystemClock()
        self.protected_files = protected_files
        self.reserved_files = reserved_files
        self.delete_reserved = delete_reserved
        self.truncate_vlsn_index = truncate_vlsn_index
        self.extinction_filter = extinction_filter
        self.stats = Stats("Eraser", ERASER_STATS)
        self.trace = Trace()
        self.messages: list[str] = []
        self.cycle: CycleState | None = None
        self.throttle: WorkThrottle | None = None
        self.current_file: int | None = None
        self._aborted: set[int] = set()
        self._cycle_lock = threading.Lock()  # guards _busy and _drop_requested
        self._busy = False  # the thread is processing a file of the cycle (and will write its state)
        self._drop_requested = False  # config_update aborted the cycle meanwhile: drop it when the file is done
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.saved_shutdown_exception: Exception | None = None

    @classmethod
    def attach(cls, env: "Environment", config: EraserConfig | None = None, clock=None, **hooks) -> "DataEraser":
        """An eraser that follows ``env``: a suspended cycle resumed now, suspended again at ``env.close()``.

        Unless ``hooks`` say otherwise it works with the environment's cleaner: ``protected_files`` are
        the protection registry's, ``reserved_files`` the cleaned files a checkpoint let go but kept, and
        ``delete_reserved`` deletes them through the cleaner's step-9 path (deletion listeners first)."""
        cleaner = env.cleaner
        hooks = {"protected_files": cleaner.protected_files, "reserved_files": cleaner.reserved_files,
                 "delete_reserved": cleaner.delete_reserved, **hooks}
        eraser = cls(env, config, clock, **hooks)
        eraser.open()
        env.hooks.close_listeners = [*env.hooks.close_listeners, eraser.close]  # the list may be shared
        return eraser

    # -- messages and statistics -----------------------------------------------------------
    def _say(self, what: str) -> None:
        c = self.cycle
        line = f"ERASER {what}"
        if c is not None:
            line += (f" (cycle {utc(c.start_ms)} to {utc(c.end_ms)} UTC; processed "
                     f"{[f'0x{n:x}' for n in c.processed]}, to do {[f'0x{n:x}' for n in c.remaining]})")
        self.messages.append(line)
        self.trace.emit(line)

    def load_stats(self) -> Stats:
        """The stat group ``Eraser`` (JE's ``loadStats``), cycle fields brought up to date."""
        c = self.cycle
        self.stats.set("eraserCycleStart", c.start_ms if c else 0)
        self.stats.set("eraserCycleEnd", c.end_ms if c else 0)
        self.stats.set("eraserFilesRemaining", len(c.remaining) if c else 0)
        return self.stats

    # -- configuration (JE's EnvConfigObserver) ------------------------------------------------
    def config_update(self, **changes) -> EraserConfig:
        """Change settings at run time; turning the eraser off or a new period aborts the cycle."""
        known = {f.name for f in fields(EraserConfig)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise UserError(f"unknown eraser setting(s) {unknown} (known: {sorted(known)})")
        old, new = self.config, replace(self.config, **changes)
        self.config = new
        if self.cycle is not None and (not new.active or new.erase_period_ms != old.erase_period_ms):
            self._say("cycle aborted: the configuration changed")
            with self._cycle_lock:
                if self._busy:  # dropped when the file is done, after the thread wrote the cycle's state
                    self._drop_requested = True
                else:
                    self._drop_cycle()
        return new

    # -- opening and closing -------------------------------------------------------------------
    def open(self) -> None:
        """At environment open: resume a suspended cycle whose end has not passed, or note why not."""
        state, problem = read_state(self.disk)
        if problem is not None:
            self._say(f"cycle state unreadable ({problem}): a fresh cycle will start")
            return
        if state is None or not state.remaining:
            self.cycle = state
            return
        now = self.clock.now_ms()
        self.cycle = state
        if now < state.end_ms and self.config.active:
            self._say("incomplete cycle resumed at startup")
            self._start_throttle(now)
        else:
            self._say("incomplete cycle cannot be resumed at startup: its end time has passed; a fresh cycle starts")
            self._drop_cycle()

    def close(self) -> None:
        """At environment close: the thread stops; an unfinished cycle is suspended (its state is on disk)."""
        self.shutdown()
        if self.cycle is not None and self.cycle.remaining:
            self._say("cycle suspended because the environment is closed")
        self.throttle = None

    def _drop_cycle(self) -> None:
        unfinished = self.cycle.erasing if self.cycle is not None else None
        self.cycle = None
        self.throttle = None
        if unfinished is not None:  # an erasure a disk error cut short: its intent stays until it is finished
            write_state(self.disk, CycleState(0, 0, {}, unfinished))
        elif self.disk.exists(STATE_FILE):
            self.disk.delete(STATE_FILE)

    # -- cycles --------------------------------------------------------------------------------
    def recovery_start(self) -> LSN | None:
        """Where recovery would start reading today (None: no checkpoint, the whole log)."""
        env = self.env
        end_lsn = env.checkpointer.last_ckpt_end
        if end_lsn.is_null:
            return None
        start = recovery_start(env.log.read(end_lsn).values)
        active = env.txn_manager.first_active_lsn()
        return start if active.is_null else min(start, active)

    def eligible_files(self) -> tuple[list[int], list[int]]:
        """(files a cycle may erase, files of the log's tail end that it may not)."""
        numbers = log_file_numbers(self.disk)
        last = self.env.log.end_lsn.file
        start = self.recovery_start()
        limit = last if start is None else min(last, start.file)
        protected = self.protected_files()
        return ([n for n in numbers if n < limit and n not in protected], [n for n in numbers if n >= limit])

    def start_cycle(self) -> CycleState:
        """Select the files of a new cycle, persist it and set up its throttle."""
        now = self.clock.now_ms()
        with self.env.latch:
            files, tail = self.eligible_files()
        self.cycle = CycleState(now, now + self.config.erase_period_ms, {n: TO_DO for n in files})
        self._aborted.clear()
        write_state(self.disk, self.cycle)
        self._say("cycle started")
        if tail:
            self._say(f"obsolete data at the tail end of the log is not erased (files "
                      f"{[f'0x{n:x}' for n in tail]}: the file being written and the recovery interval)")
        self._start_throttle(now)
        return self.cycle

    def _start_throttle(self, now: int) -> None:
        assert self.cycle is not None
        work = work_estimate([self.disk.size(file_name(n)) for n in self.cycle.remaining
                              if self.disk.exists(file_name(n))])
        self.throttle = WorkThrottle(self.clock, work, now, self.cycle.end_ms)

    def _work(self, units: float) -> None:
        assert self.throttle is not None and self.cycle is not None
        self.throttle.work(units)
        if self.clock.now_ms() > self.cycle.end_ms:
            raise CycleLate()

    def run_cycle(self) -> CycleState | None:
        """Run (or go on with) a cycle: every selected file, throttled over the period.

        A new cycle starts where the last one ends (waiting for its end time if
        needed), so data obsolete at time t is erased before t + 2N.
        """
        if not self.config.active:
            return None
        if self.cycle is None or not self.cycle.remaining:
            if self.cycle is not None and self.clock.now_ms() < self.cycle.end_ms:
                self.clock.wait_ms(self.cycle.end_ms - self.clock.now_ms())  # cycles follow each other
            self.start_cycle()
        while self.cycle is not None and self.cycle.remaining:
            if not self.step():
                break
        return self.cycle

    def step(self) -> bool:
        """Process the next file of the cycle; False when nothing more can be done now."""
        cycle = self.cycle
        if cycle is None or not cycle.remaining or not self.config.active or self._stop.is_set():
            return False
        if self.throttle is None:
            self._start_throttle(self.clock.now_ms())
        if self.clock.now_ms() > cycle.end_ms:
            self._late()
            return False
        protected = self.protected_files()
        order = sorted(cycle.remaining, key=lambda n: (n in self._aborted, n))
        candidates = [n for n in order if n not in protected]
        if not candidates:
            return False
        number = candidates[0]
        with self._cycle_lock:
            if self.cycle is not cycle:  # config_update dropped it meanwhile
                return False
            self._busy = True
        try:
            return self._step_file(cycle, number)
        finally:
            with self._cycle_lock:
                self._busy = False
                if self._drop_requested:
                    self._drop_requested = False
                    self._drop_cycle()

    def _step_file(self, cycle: CycleState, number: int) -> bool:
        try:
            status = self.process_file(number)
        except EraserAbort as e:
            self._aborted.add(number)
            self._say(f"erasure of file 0x{number:x} aborted: {e}")
            return True
        except CycleLate:
            self._late()
            return False
        finally:
            self.current_file = None
        cycle.files[number] = status
        self._aborted.discard(number)
        write_state(self.disk, cycle)
        if not cycle.remaining:
            self._say("cycle complete")
        return True

    def _late(self) -> None:
        self._say("cycle aborted: not finished by its end time; a fresh cycle starts")
        self._drop_cycle()

    # -- the eraser's thread (JE's StoppableThread) ---------------------------------------------
    def start_thread(self) -> None:
        """Run cycle after cycle in a thread of its own, until :meth:`shutdown`."""
        if self._thread is not None:
            raise UserError("the eraser's thread is already running")
        self._stop.clear()
        if hasattr(self.clock, "stopped"):
            self.clock.stopped.clear()
        self._thread = threading.Thread(target=self.run, name=f"eraser {self.env.where()}", daemon=True)
        self._thread.start()

    def run(self) -> None:
        """The thread's loop; an error stops it and is kept in ``saved_shutdown_exception`` (JE's name)."""
        try:
            while not self._stop.is_set() and self.config.active:
                with self.env.latch:
                    if self.env.closed:
                        return
                cycle = self.run_cycle()
                if cycle is not None and cycle.remaining:
                    self.clock.wait_ms(IDLE_WAIT_MS)  # every file left is protected: try again later
        except EraserShutdown:
            pass
        except Exception as e:  # noqa: BLE001 - the thread must not die silently
            self.saved_shutdown_exception = e
            self._say(f"thread stopped by {type(e).__name__}: {e}")

    def shutdown(self) -> None:
        """Stop the thread (a wait of the throttle is cut short) and wait for it to end."""
        self._stop.set()
        if hasattr(self.clock, "stop"):
            self.clock.stop()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    # -- one file --------------------------------------------------------------------------------
    def abort_erase(self, file_number: int) -> None:
        """A backup or network restore needs ``file_number`` (already protected): stop erasing it."""
        if self.current_file == file_number:
            raise EraserAbort(f"file 0x{file_number:x} is needed for a backup or network restore")

    def _check_protected(self, number: int) -> None:
        if number in self.protected_files():
            raise EraserAbort(f"file 0x{number:x} became protected")

    def process_file(self, number: int) -> int:
        """Erase (or delete, if reserved) one file, throttled; its new status."""
        self.current_file = number
        name = file_name(number)
        exists = self.disk.exists(name)
        length = self.disk.size(name) if exists else 0
        if number in self.reserved_files():
            if not exists:
                self.stats.add("eraserFilesAlreadyDeleted")
                self._work(3 * length)
                return DELETED
            if self.delete_reserved is None:
                raise EraserAbort(f"reserved file 0x{number:x} cannot be deleted: no delete_reserved hook")
            if self.delete_reserved(number) is not False:
                self.stats.add("eraserFilesDeleted")
                self._work(3 * length)
                return DELETED
            self._say(f"reserved file 0x{number:x} could not be deleted now: it is erased instead")
        if not exists:
            self._work(3 * length)
            return ERASED
        # Component 1: the VLSN index must not cover a file that changes.
        if self.truncate_vlsn_index is not None and not self.truncate_vlsn_index(number):
            self._say(f"file 0x{number:x} skipped, not erased: the VLSN index cannot be truncated past it "
                      f"(it would keep fewer VLSNs than the minimum, or the files hold none)")
            self._work(3 * length)
            return SKIPPED
        self._work(length)
        # Component 2: read the file, choose the entries.
        self._check_protected(number)
        with self.disk.open(name) as handle:
            buf = handle.read_all()
        self.stats.add("eraserReads")
        self.stats.add("eraserReadBytes", len(buf))
        with self.env.latch:
            offsets = self.entries_to_erase(number, buf)
            if offsets:
                self.env.log.sync()  # what made the data obsolete is durable before the data goes
        self._work(length)
        if not offsets:
            self._work(length)
            return ERASED

        # Components 3 to 6: throttled and checked for aborts before the intent is written, so that
        # nothing stops an erasure once the file begins to change (protocol: the intent is finished).
        for step in sorted(STEP_SHARES):
            self._check_protected(number)
            self._work(STEP_SHARES[step] * length)
        self._check_protected(number)
        assert self.cycle is not None
        for listener in self.env.hooks.before_file_erased:  # e.g. a restore server's cached checksums
            listener(number)
        erase_file(self.disk, number, locate(buf, offsets), self.stats, self.cycle, erasing=self.env.log.erasing)
        self.stats.add("eraserFilesErased")
        return ERASED

    def entries_to_erase(self, number: int, buf: bytes) -> list[int]:
        """Offsets of the entries of file ``number`` (its bytes ``buf``) to erase (module docs)."""
        env = self.env
        chosen = []
        for offset, header in FileScanner(buf, number):
            lsn = LSN(number, offset)
            if header.erased or not env.utilization.is_obsolete(lsn):
                continue
            entry = LogEntry(lsn, header, bytes(buf[offset + header.size: offset + header.entry_size]))
            name = entry.type_name
            if name in USER_LN_TYPES:
                keys = [entry.values["key"]]
            elif name in IN_TYPES:
                values = entry.values
                keys = [values["id_key"], values["high_key"]] + [e["key"] for e in values["entries"]]
            else:
                continue
            if any(self._gone(entry.values["db_id"], key) for key in keys):
                chosen.append(offset)
        return chosen

    def _gone(self, db_id: int, key: bytes) -> bool:
        """Is the record ``key`` of database ``db_id`` deleted or extinct (as configured)?"""
        impl = self.env.db_tree.get_by_id(db_id)
        if impl is None:
            return self.config.erase_deleted
        if impl.internal or not key:
            return False
        if self.config.erase_extinct and self.extinction_filter is not None:
            verdict = self.extinction_filter(impl.name, key)
            if verdict == MAYBE_EXTINCT:
                raise EraserAbort(f"the extinction filter returned MAYBE_EXTINCT for {impl.name!r} key {key!r}")
            if verdict == EXTINCT:
                return True
        if not self.config.erase_deleted:
            return False
        try:
            self.env.locks.check(impl.id, impl.name, key, None, "erasure")
        except LockConflictError:
            return False
        bin_node = impl.tree.search(key)
        index, exact = bin_node.find(key)
        return not exact or bin_node.known_deleted[index]

    def is_entry_erased(self, lsn: LSN) -> bool:
        """Has the entry at ``lsn`` been erased (it is LOG_ERASED)?"""
        return self.env.log.read(lsn).header.erased


__all__ = ["DataEraser", "EraserConfig", "EraserAbort", "ERASER_STATS", "EXTINCT", "NOT_EXTINCT", "MAYBE_EXTINCT"]
