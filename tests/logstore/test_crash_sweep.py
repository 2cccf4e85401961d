"""The log store's crash sweep: 200 seeded workloads, every crash point, zero violations.

Each workload (minidb.crashtest.logstore) spans at least two checkpoints, some of them stepped with
operations and evictions between their steps, with a tiny node budget; every write, truncate and
fsync of its disk history is a crash point (keeping nothing, everything, a torn write, a random
subset of the unsynced writes), and recovery must give exactly the committed state. The log cleaner
cleans files and a later checkpoint deletes them; some workloads run the data eraser (a checkpoint,
then erasure of up to two of the files outside the recovery interval): all their writes and fsyncs are crash points
too, and an erasure whose last fsync returned must hold. Half of the cleaner's runs migrate LNs lazily.
"""

import random

import pytest

from minidb.crashtest import logstore as logstore_crashtest
from minidb.crashtest.logstore import DATABASES, CommittedStates, check_point, crash_sweep, run_workload
from minidb.io import CrashMode, crash_points
from minidb.log import LSN

from tests.sweeps import assert_chunk_has_no_violations

CHUNKS = 10
SEEDS_PER_CHUNK = 20  # 10 x 20 = 200 workloads
OPS = 12


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_crash_sweep_has_no_violations(chunk):
    assert_chunk_has_no_violations(crash_sweep, chunk, SEEDS_PER_CHUNK, ops=OPS, min_points_per_seed=40)


def test_every_workload_spans_two_checkpoints():
    for seed in range(10):
        workload = run_workload(seed, OPS)
        assert workload.checkpoints >= 2
        assert workload.writes


def test_the_cleaner_cleans_and_deletes_files_in_the_sweep():
    workloads = [run_workload(seed, OPS) for seed in range(40)]
    assert sum(w.files_cleaned for w in workloads) >= 10
    assert sum(w.files_deleted > 0 for w in workloads) >= 5  # deleted at a checkpoint's step 9: crash points too


def test_some_cleaner_runs_of_the_sweep_migrate_lazily():
    workloads = [run_workload(seed, OPS) for seed in range(40)]
    lazy = [w for w in workloads if w.lns_marked]
    assert sum(w.lns_marked for w in lazy) >= 10
    assert sum(w.files_deleted > 0 for w in lazy) >= 2  # a marked file deleted after its LNs were logged


def test_the_checker_catches_a_wrong_committed_state():
    workload = run_workload(seed=4, ops=OPS)
    last = len(workload.disk.events) - 1
    image = workload.disk.crash_image(last, CrashMode.everything())
    assert check_point(workload, image, last) is None
    workload = run_workload(seed=4, ops=OPS)  # the model is read once it is complete: a new one, changed first
    lsn, db, key, value, txn = workload.writes[0]
    workload.writes[0] = (lsn, db, key, b"something else", None)
    image = workload.disk.crash_image(last, CrashMode.everything())
    assert "wrong values" in check_point(workload, image, last) or "missing" in check_point(workload, image, last)


def test_the_checker_catches_a_broken_promise():
    workload = run_workload(seed=5, ops=OPS)
    image = workload.disk.crash_image(1, CrashMode.nothing())
    workload.promises.append((0, LSN(0x7F, 0)))
    assert "was fsynced before the crash" in check_point(workload, image, 1)


def test_workloads_erase_and_the_checker_catches_an_erasure_that_did_not_hold():
    erasing = [seed for seed in range(20) if run_workload(seed, OPS).erasures]
    assert len(erasing) >= 2
    workload = run_workload(erasing[0], OPS)
    done, number, entries = workload.erasures[0]
    image = workload.disk.crash_image(done, CrashMode.nothing())
    assert check_point(workload, image, done) is None
    # Just before the intent was recorded (the rename of the state before the one at ``done``), the file is
    # untouched and nothing will finish its erasure: its promise does not hold there.
    intent = max(e.index for e in workload.disk.events[:done] if e.kind == "rename")
    before = intent - 1
    image = workload.disk.crash_image(before, CrashMode.nothing())
    workload.erasures[0] = (before, number, entries)
    assert "is not in its erased form" in check_point(workload, image, before)
    # From the intent on, opening finishes the erasure, whatever was written of it.
    image = workload.disk.crash_image(intent, CrashMode.nothing())
    workload.erasures[0] = (intent, number, entries)
    assert check_point(workload, image, intent) is None


def replayed(workload, end: LSN) -> dict[str, dict[bytes, bytes]]:
    """The committed state at ``end`` by its definition: every write that counts before it, in LSN order."""
    state = {name: {} for name in DATABASES}
    for lsn, db, key, value, txn_id in sorted(workload.writes, key=lambda write: write[0]):
        if lsn >= end or txn_id is not None and not (txn_id in workload.commits and workload.commits[txn_id] < end):
            continue
        if value is None:
            state[db].pop(key, None)
        else:
            state[db][key] = value
    return state


def test_the_committed_state_at_any_end_is_the_replay_of_the_writes_that_count_before_it():
    """Whatever order the ends come in (a crash keeping nothing unsynced ends the log before the last
    point's end), the state built from the nearest known one is the replay from the start."""
    for seed in range(8):
        workload = run_workload(seed, OPS)
        ends = sorted({write[0] for write in workload.writes} | set(workload.commits.values()))
        ends += [LSN(end.file, end.offset + 1) for end in ends] + [LSN(0, 0), LSN(0xFFFF, 0)]
        random.Random(seed).shuffle(ends)
        states = CommittedStates(workload.writes, workload.commits)
        for end in ends:
            assert states.at(end) == replayed(workload, end), (seed, end)


class CountedList(list):
    """A list that counts how often it is read through."""

    reads = 0

    def __iter__(self):
        self.reads += 1
        return super().__iter__()


def test_a_sweep_builds_each_crash_points_state_from_the_point_before_not_from_the_start():
    """The writes are read once for a whole sweep, and each write is added about once over all the states
    the points ask for (not once per point: the replay from the start, which grows with the history)."""
    for seed in range(4):
        workload = run_workload(seed, OPS)
        workload.writes = CountedList(workload.writes)
        recovered: dict = {}
        for point in crash_points(workload.disk, seed=seed):
            assert check_point(workload, point.disk, point.event.index, deep=False, cache=recovered) is None
        assert len(recovered) > 20 and workload.writes.reads == 1, (seed, len(recovered), workload.writes.reads)
        assert workload.states.applied <= 2 * len(workload.writes), (seed, workload.states.applied)


def test_a_longer_workload_starts_as_the_shorter_one_of_its_seed():
    """The forced checkpoints come at fixed operations: for each seed, the disk history of its workload of 12
    operations is the start of its workload of 24 (so a sweep at 2N operations covers the one at N)."""
    for seed in range(6):
        short, long = run_workload(seed, OPS).disk.events, run_workload(seed, 2 * OPS).disk.events
        assert [(e.kind, e.name, e.offset, e.data) for e in long[:len(short)]] == [
            (e.kind, e.name, e.offset, e.data) for e in short], seed


def test_an_erasure_of_the_workload_takes_at_most_erase_files_files(monkeypatch):
    """An erasure over every file outside the recovery interval would cost the whole log each time."""
    taken = []
    erase = logstore_crashtest._Runner.erase

    def counted(runner):
        before = len(runner.workload.erasures)
        erase(runner)
        taken.append(len(runner.workload.erasures) - before)

    monkeypatch.setattr(logstore_crashtest._Runner, "erase", counted)
    for seed in range(12):
        run_workload(seed, 48)
    assert max(taken) == logstore_crashtest.ERASE_FILES and sum(taken) >= 10
