"""The page store's background threads: the checkpoint thread and the page cleaner (Shore's
``chkpt_thread_t`` and ``bf_cleaner_t``).

Without them (the default) the storage manager takes a checkpoint itself,
after a commit, every ``chkpt_every`` bytes of log, and pages are written
when a victim is evicted, when a caller cleans the pool and at a clean
close: every run of a workload does the same things in the same order, which
is what demos and tests want. ``StorageManager.open(..., background=True)``
starts two threads that do that work beside the transactions:

- the **checkpoint thread** sleeps until it is *kicked*: by the log, when a
  log partition fills (an entry is the first of a new log file), by a commit
  once ``chkpt_every`` bytes were logged since the last checkpoint, or by
  the clock, when ``chkpt_interval`` seconds passed with something logged.
  It then takes the same fuzzy checkpoint :meth:`StorageManager.checkpoint`
  takes (scavenging included), and kicks the cleaner: pages written move
  the next checkpoint's redo point on.
- the **page cleaner** sleeps until kicked by a commit that finds at least
  ``clean_threshold`` of the frames dirty, by the checkpoint thread, or by
  the clock every ``clean_interval`` seconds. It runs the buffer pool's
  cleaner (:meth:`BufferPool.clean`): the dirty pages sorted by page id and
  coalesced into runs of contiguous pages, one write per run, the log
  forced first up to the largest page LSN of the run (the write-ahead
  rule), frames latched EX passed over (they are being changed: the next
  round takes them), one fsync per volume.

Worked example: a cleaner round that finds pages 5, 6, 7, 9 and 20 dirty
writes them in three runs (5-7, 9, 20): ``nRunsWritten`` 3,
``nThreadPagesWritten`` 5, ``pages_per_run()`` 1.67. One run of 400 commits of
a 44-byte record each, 16 frames of 512 bytes, ``chkpt_every=16384``: 4
kicks of the checkpoint thread (one per 100 commits or so) and 4 checkpoints;
126 kicks of the cleaner by commits that found 4 frames dirty, 28 rounds (a
kick while a round runs is one more round, not one each), 86 pages in 49
runs, ``runSizes`` {1: 31, 2: 3, 3: 11, 4: 4}. The numbers change from run
to run: the threads run when the interpreter lets them.

**Time** comes from a clock object, the group commit's
(:class:`~minidb.log.groupcommit.MonotonicClock`, or a
:class:`~minidb.log.groupcommit.ManualClock` a test moves on): a thread
waits on its condition with the clock's ``wait(cond, timeout)``, never
sleeps. A test drives the threads with events: ``kick_checkpoint()`` then
``checkpoint_done.wait()`` (the event is set after each round of the
thread; clear it first), the same for the cleaner.

**Stopping.** :meth:`stop` (a clean close, before its final checkpoint)
tells both threads, wakes them and joins them: a round under way finishes
first. A crash stops them too: each thread ties itself to the disk's life
(:meth:`Disk.bind_thread`), so after a crash of a
:class:`~minidb.io.SimDisk` every disk operation it tries is refused, and the
disk's crash listener (:meth:`Disk.on_crash`) wakes the sleeping ones; a
thread whose round meets the crash leaves. No thread writes into what a
crash left, and none outlives it for long: :meth:`join` waits for the last.
A thread that meets any other error records it (``failure``) and stops;
:meth:`stop` raises it, so it is not lost. A checkpoint refused for log
space (it would eat into restart's reserve) is counted and skipped.

**The thread protocol** (who holds what, in order; a thread never holds a
page latch while it waits for a mutex, so it never stalls a transaction):

=====================  =========================================================
thread                 holds, in this order
=====================  =========================================================
checkpoint thread      the checkpointer's mutex; then, one at a time, the log
                       latch (each append), the pool mutex (a copy of the dirty
                       page table), the transaction table latch (the copy of
                       the transaction table and ``chkpt_xct_tab``). No latch.
page cleaner           each chosen frame's latch SH, *tried* (EX held: passed
                       over), for the copy of the page, without the pool mutex;
                       then the pool mutex for the writes (the log's sync in
                       them), and in it each written frame's latch SH, tried
                       again, to mark it clean if it is unchanged.
a transaction          its page latches EX; a change's entry is noted in the
                       transaction under the log latch (``append(noted=)``).
=====================  =========================================================

Why the fuzzy checkpoint stays right while the cleaner writes: a page the
cleaner writes stays in the dirty page table until its volume is fsynced
(and the frame leaves it only when it is marked clean, under the latch
tried SH, so no transaction sees it clean while changing it); so the table a
checkpoint copies never omits a page that may differ from its durable
image. And every entry logged before ``chkpt_begin`` has been noted in its
transaction, under the log latch, before ``chkpt_begin`` could be appended,
so the transaction table copied after it misses no entry that analysis,
reading from ``chkpt_begin``, will not see; a commit point and the state it
sets (``xct_freeing_space``, ``xct_end``) go together under the table latch.

What this module leaves out: Shore runs several cleaners (one per volume)
and lets a transaction wait for a cleaner when the pool has no clean frame;
here one cleaner serves every volume and a transaction that needs a frame
evicts a dirty victim itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from minidb.errors import DiskError, SimulatedCrash
from minidb.log.groupcommit import ManualClock, MonotonicClock
from minidb.pagestore.errors import OutOfLogSpaceError
from minidb.stats import Stats, Trace

DEFAULT_CHKPT_INTERVAL = 30.0  # seconds between checkpoints, when something was logged
DEFAULT_CLEAN_INTERVAL = 1.0  # seconds between rounds of the cleaner
DEFAULT_CLEAN_THRESHOLD = 0.25  # of the frames dirty: a commit kicks the cleaner

STAT_NAMES = ["nThreadCheckpoints", "nCheckpointKicks", "nCheckpointWakeups", "nCheckpointsRefused",
              "nThreadPagesWritten", "nRunsWritten", "nCleanerKicks", "nCleanerWakeups", "nCleanerRounds"]


@dataclass(frozen=True)
class Background:
    """How the threads run: ``StorageManager.open(..., background=Background(...))`` (``True``: these
    defaults). ``clock``: the threads' clock (a real one when None); the intervals in its seconds (None:
    no interval, kicks only); ``clean_threshold``: the share of the frames dirty at which a commit kicks
    the cleaner."""

    clock: MonotonicClock | ManualClock | None = None
    chkpt_interval: float | None = DEFAULT_CHKPT_INTERVAL
    clean_interval: float | None = DEFAULT_CLEAN_INTERVAL
    clean_threshold: float = DEFAULT_CLEAN_THRESHOLD


class Worker:
    """One background thread: sleeps on its condition until kicked, stopped, or its interval passes,
    then does one round of ``work`` (see the module documentation)."""

    def __init__(self, name: str, work: Callable[[bool], None], interval: float | None, clock: Any,
                 stats: Stats, kicks: str, wakeups: str, disk: Any):
        self.name = name
        self.work = work
        self.interval = interval
        self.clock = clock
        self.stats = stats
        self.kicks, self.wakeups = kicks, wakeups
        self.disk = disk
        self.done = threading.Event()  # set after each round
        self.failure: BaseException | None = None
        self._cond = threading.Condition()
        self._kicked = False
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name=f"minidb-{name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def kick(self) -> None:
        with self._cond:
            self.stats.add(self.kicks)
            self._kicked = True
            self._cond.notify_all()

    def tell_stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()

    def join(self) -> None:
        if self._thread is not threading.current_thread() and self._thread.ident is not None:
            self._thread.join()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def _wait(self) -> bool | None:
        """Sleep until kicked, stopped or the interval passes: whether kicked, None when stopped."""
        with self._cond:
            started = self.clock.now()
            while not self._kicked and not self._stopping:
                left = None if self.interval is None else self.interval - (self.clock.now() - started)
                if left is not None and left <= 0:
                    break  # the interval passed
                if left is None:
                    self._cond.wait()
                else:
                    self.clock.wait(self._cond, left)
                self.stats.add(self.wakeups)
            kicked, self._kicked = self._kicked, False
            return None if self._stopping else kicked

    def _run(self) -> None:
        self.disk.bind_thread()  # after a crash, this thread may touch nothing
        try:
            while (kicked := self._wait()) is not None:
                self.work(kicked)
                self.done.set()
        except (SimulatedCrash, DiskError) as e:  # the disk crashed (or failed) under the round: leave
            self.failure = e
        except BaseException as e:  # recorded, and raised by stop()
            self.failure = e
        finally:
            self.done.set()  # nobody waits for a round that will not come


class BackgroundThreads:
    """The checkpoint thread and the page cleaner of one storage manager (see the module documentation).

    ``checkpoint``: takes a checkpoint (the storage manager's); ``clean``: one round of the buffer
    pool's cleaner, returning its :class:`~minidb.pagestore.buffer.bufferpool.WriteRun` list."""

    def __init__(self, disk: Any, checkpoint: Callable[[], Any], clean: Callable[[], list[Any]],
                 options: Background = Background(), trace: bool = False, log_file: int = 1):
        self.disk = disk
        self.log_file = log_file  # the log partition being filled (a new one kicks the checkpoint thread)
        self.options = options
        self.clock = options.clock if options.clock is not None else MonotonicClock()
        chkpt_interval, clean_interval = options.chkpt_interval, options.clean_interval
        self.stats = Stats("background", STAT_NAMES)
        self.trace = Trace(enabled=trace)
        self.run_sizes: dict[int, int] = {}  # pages per run -> runs the cleaner thread wrote
        self._checkpoint, self._clean = checkpoint, clean
        self._logged = threading.Event()  # something was logged since the thread's last checkpoint
        self.checkpointer = Worker("checkpoint", self._checkpoint_round, chkpt_interval, self.clock, self.stats,
                                   "nCheckpointKicks", "nCheckpointWakeups", disk)
        self.cleaner = Worker("cleaner", self._clean_round, clean_interval, self.clock, self.stats,
                              "nCleanerKicks", "nCleanerWakeups", disk)
        self.checkpoint_done, self.cleaner_done = self.checkpointer.done, self.cleaner.done
        self._stopped = False
        disk.on_crash(self._crashed)
        self.checkpointer.start()
        self.cleaner.start()

    # -- what the storage manager and the log tell --------------------------------------------------
    def kick_checkpoint(self, why: str = "") -> None:
        self.trace.emit("checkpoint thread kicked%s", f" ({why})" if why else "")
        self.checkpointer.kick()

    def kick_cleaner(self, why: str = "") -> None:
        self.trace.emit("cleaner kicked%s", f" ({why})" if why else "")
        self.cleaner.kick()

    def logged(self) -> None:
        """Something was logged (the interval's checkpoint is due only then)."""
        self._logged.set()

    def entry_logged(self, lsn: Any) -> None:
        """The log's kick: an entry at ``lsn`` was logged; the first entry of a new log file means a
        partition filled."""
        self.logged()
        if lsn.file != self.log_file:
            self.log_file = lsn.file
            self.kick_checkpoint(f"log partition {lsn.file - 1} full")

    # -- the rounds -------------------------------------------------------------------------------
    def _checkpoint_round(self, kicked: bool) -> None:
        if not kicked and not self._logged.is_set():
            return  # the interval passed, but nothing was logged since the last checkpoint
        self._logged.clear()
        try:
            result = self._checkpoint()
        except OutOfLogSpaceError:
            self.stats.add("nCheckpointsRefused")
            return
        self.stats.add("nThreadCheckpoints")
        self.trace.emit("checkpoint thread: %s", result.summary())
        self.cleaner.kick()

    def _clean_round(self, kicked: bool) -> None:
        runs = self._clean()
        self.stats.add("nCleanerRounds")
        self.stats.add("nRunsWritten", len(runs))
        self.stats.add("nThreadPagesWritten", sum(run.count for run in runs))
        for run in runs:
            self.run_sizes[run.count] = self.run_sizes.get(run.count, 0) + 1
        if runs:
            self.trace.emit("cleaner: %s", "; ".join(str(run) for run in runs))

    # -- stopping ---------------------------------------------------------------------------------
    def _crashed(self) -> None:
        """The disk crashed: wake and stop both threads (no join: the crashing thread may be one of them,
        or hold what they wait for)."""
        self.checkpointer.tell_stop()
        self.cleaner.tell_stop()

    def stop(self) -> None:
        """Stop both threads and wait for them (a round under way finishes); raise a thread's failure."""
        self._stopped = True
        self._crashed()
        self.join()
        for worker in (self.checkpointer, self.cleaner):
            if worker.failure is not None:
                raise worker.failure

    def join(self) -> None:
        """Wait until both threads have left (after :meth:`stop`, or a crash)."""
        self.checkpointer.join()
        self.cleaner.join()

    @property
    def alive(self) -> bool:
        return self.checkpointer.alive or self.cleaner.alive

    # -- looking ----------------------------------------------------------------------------------
    def pages_per_run(self) -> float:
        runs = self.stats["nRunsWritten"]
        return self.stats["nThreadPagesWritten"] / runs if runs else 0.0

    def counters(self) -> dict[str, Any]:
        """The counters, with the pages per run and the runs by size: what ``sm.background_stats`` shows."""
        return {**{name: self.stats[name] for name in STAT_NAMES},
                "pagesPerRun": round(self.pages_per_run(), 2), "runSizes": dict(sorted(self.run_sizes.items()))}
