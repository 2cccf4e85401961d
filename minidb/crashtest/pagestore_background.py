"""The page store's crash test with its background threads on: the disk crashes while they run.

``minidb crashtest pagestore --background``. The workload is the page
store's (:mod:`minidb.crashtest.pagestore_workload`), run with the checkpoint
thread and the page cleaner (:mod:`minidb.pagestore.restart.background`)
kicked often (a checkpoint every :data:`CHKPT_EVERY` bytes, the cleaner on
real-clock intervals of a millisecond), so their checkpoints, scavenging and
page writes interleave with the transactions' own. A seeded
``schedule_crash`` fires after one of the first :data:`CRASH_WITHIN` disk
operations, whichever thread makes it; a workload that ends first is
crashed at its end, the threads still running. Then:

1. both threads have left (the crash stopped them), and the disk recorded
   no operation after the crash: no thread touched what it left (the
   workload's thread is tied to the disk's life too, as a real crash ends
   it with the others);
2. what the crash left is checked exactly as the sweep checks a crash
   image (:func:`minidb.crashtest.pagestore.check_point`: the surviving
   commits a prefix including every durable one, the files the model's
   committed state, maps, directory, log space and torn pages repaired),
   a crash during restart at a quarter of the seeds.

A live crash can cut a commit short: if its commit point reached the log,
the model counts it as the last commit (it did not return, so it need not
survive, but it may). Two-phase commit is off in this mode, as a prepare cut
short is not in the model. Unlike the sweep, one run checks one crash point:
threads make each run's interleaving its own, so a run is not replayed.
"""

from __future__ import annotations

import random

from minidb.crashtest.pagestore import check_point
from minidb.crashtest.pagestore_workload import FILE_MAX, Commit, Runner, Workload, applied
from minidb.crashtest.sweep import SweepResult, crash_restarted
from minidb.errors import MinidbError
from minidb.io import SimDisk
from minidb.log import LogManager
from minidb.pagestore import Background

CHKPT_EVERY = 1500  # bytes of log between the commits that kick the checkpoint thread
CRASH_WITHIN = 400  # the crash comes after one of the first this many disk operations
THREADS = Background(chkpt_interval=0.002, clean_interval=0.001)  # real time: the threads run beside the work


def crash_sweep(seed: int, ops: int) -> SweepResult:
    """One seeded workload with the threads on, crashed live, checked (see the module documentation)."""
    rng = random.Random((seed << 8) | 0xB6)
    result = SweepResult(points=1)
    runner = Runner(seed, ops, background=THREADS)
    runner.sm.chkpt_every = CHKPT_EVERY
    disk = runner.disk
    disk.schedule_crash(after_ops=rng.randint(1, CRASH_WITHIN))
    disk.bind_thread()  # a crash ends this thread's work too, whichever thread it meets first
    try:
        runner.steps()
    except MinidbError as e:  # the crash, met by this thread, or after a thread met it
        if not disk.stats["crashes"]:
            result.violations.append(f"seed {seed}, while running: {type(e).__name__}: {e}")
            return result
    if not disk.stats["crashes"]:
        disk.cancel_crash()
        disk.crash()  # the workload ended first: crash now, the threads still running
    disk.bind_thread()  # the checks work on what the crash left
    problem = check_stopped(runner)
    if problem is None:
        workload = in_flight(runner)
        twin = disk.clone() if rng.random() < 0.25 else None  # what the crash left: its restart changes the disk
        problem = crash_restarted(check_point(workload, disk, crashed_after(disk)), twin, rng)
    result.violations.extend(f"seed {seed}, while running: {p}" for p in runner.problems)
    if problem is not None:
        result.violations.append(f"seed {seed}, background crash after event {crashed_after(disk)}: {problem}")
    return result


def crashed_after(disk: SimDisk) -> int:
    """The last event before the (first) crash."""
    return next(e.index for e in disk.events if e.kind == "crash") - 1


def check_stopped(runner: Runner) -> str | None:
    """None if both threads left and nothing touched the disk after its crash."""
    background = runner.sm.background
    background.join()
    if background.alive:
        return "a background thread still runs after the crash"
    after = [str(e) for e in runner.disk.events[crashed_after(runner.disk) + 2:]]
    return f"the disk was touched after its crash: {after[:3]}" if after else None


def in_flight(runner: Runner) -> Workload:
    """The workload's model, with the commit the crash cut short counted last if its commit point is in
    the log the crash left."""
    workload = runner.workload()
    t = runner.committing
    if t is None:
        return workload
    log = LogManager(runner.disk, file_max=FILE_MAX, readonly=True)
    try:
        point = next((e.lsn for e in log.scan() if e.txn_id == t.xct.txn_id and (
            e.type_name == "xct_freeing_space" or (e.type_name == "xct_end" and e.values["committed"]))), None)
    finally:
        log.close()
    if point is not None:
        workload.commits.append(Commit(t.xct.txn_id, point, None))
        workload.states.append(applied(runner.committed, t))
    return workload
