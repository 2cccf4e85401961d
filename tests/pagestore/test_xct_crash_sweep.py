"""The page store's crash sweep: transactions crashed at every write and fsync, restarted, compared with a model."""

import pytest

from minidb.crashtest.pagestore import crash_sweep
from minidb.crashtest.pagestore_workload import CHKPT_BYTES, FILE_MAX, TXN_BYTES, Runner, run_workload
from minidb.io import CrashMode
from minidb.log import LogManager
from minidb.pagestore.restart.master import read_master
from minidb.pagestore.transactions.rollback import UndoStep

from tests.sweeps import assert_chunk_has_no_violations

CHUNKS = 4
SEEDS_PER_CHUNK = 25  # 100 workloads crashed at every point here; `make sweep` crashes 1,000
OPS = 16
WORKLOADS = 200  # run without crashing, to show what the workloads do


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_pagestore_crash_sweep_has_no_violations(chunk):
    assert_chunk_has_no_violations(crash_sweep, chunk, SEEDS_PER_CHUNK, ops=OPS, min_points_per_seed=20)


def test_the_workloads_commit_abort_and_leave_transactions_in_flight():
    workloads = [run_workload(seed, OPS) for seed in range(SEEDS_PER_CHUNK)]
    assert sum(1 for w in workloads if w.commits) > SEEDS_PER_CHUNK // 2  # most workloads commit
    assert any(len(w.states[-1]) > 1 for w in workloads)
    # two-phase commit in some seeds: prepared transactions, some resolved before the end each way
    prepared = [t for w in workloads for t in w.prepared]
    prepared += [t for seed in range(SEEDS_PER_CHUNK, 3 * SEEDS_PER_CHUNK) for t in run_workload(seed, OPS).prepared]
    assert 1 <= sum(1 for w in workloads if w.prepared) < SEEDS_PER_CHUNK and len(prepared) >= 10
    assert {t.resolution for t in prepared} == {"", "commit", "abort"}


def test_the_workloads_on_a_bounded_log_scavenge_and_run_out_of_log_space():
    workloads = [run_workload(seed, OPS) for seed in range(SEEDS_PER_CHUNK)]
    bounded = [w for w in workloads if w.log_size is not None]
    assert len(bounded) >= 4 and any(w.disk.capacity for w in bounded)
    assert sum(w.files_removed for w in bounded) >= 1 and sum(w.refused for w in bounded) >= 3


def test_the_sweep_catches_a_restart_that_does_not_undo(monkeypatch):
    """With the undo pass doing nothing, in-flight changes survive the crash: violations."""
    import minidb.pagestore.restart.undo as undo_module  # restart's own undo (an aries_restart edition has none)

    def skip(volume, entry, xct):
        return UndoStep(entry.lsn, entry.type_name, "skipped", entry.values["txn_prev_lsn"])

    monkeypatch.setattr(undo_module, "undo_step", skip)
    assert any(crash_sweep(seed, ops=OPS).violations for seed in range(4))  # stops at the first that catches it


def test_minidb_crashtest_pagestore(capsys):
    from minidb.cli import main

    assert main(["crashtest", "pagestore", "--seed", "3", "--ops", "10"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("crash points: ") and out.strip().endswith("violations: 0")


def test_the_workloads_grow_records_to_large_2_and_shrink_them_back():
    reshapes = set()
    for seed in range(WORKLOADS):
        reshapes |= run_workload(seed, OPS).reshapes
    changes = {change for change in reshapes if change[0] != change[1]}
    assert {("SMALL", "LARGE_0"), ("LARGE_0", "LARGE_1"), ("LARGE_0", "LARGE_2"), ("LARGE_1", "LARGE_2")} <= changes
    assert {("LARGE_2", "LARGE_0"), ("LARGE_2", "SMALL"), ("LARGE_0", "SMALL")} <= changes  # and back down


def test_the_workload_catches_an_allocation_that_ignores_other_transactions_locks(monkeypatch):
    """Without the lock table's answer to "does another transaction hold it?", the free-extent and page
    searches hand an in-flight transaction's extent and pages to another one: the workload reports it."""
    from minidb.crashtest.script_locking import ScriptLocking

    assert run_workload(184, 60).problems == [] and run_workload(192, 60).problems == []
    monkeypatch.setattr(ScriptLocking, "held_by_other", lambda self, xct, target: False)
    problems = run_workload(184, 60).problems + run_workload(192, 60).problems
    assert problems and all("is still in flight" in p for p in problems)


def test_the_workloads_read_in_quarks_and_free_extents_at_commit(monkeypatch):
    from minidb.crashtest.script_locking import ScriptLocking

    upgrades = []
    upgrade = ScriptLocking.upgrade_extent_to_free
    monkeypatch.setattr(ScriptLocking, "upgrade_extent_to_free",
                        lambda self, xct, xid: upgrades.append(upgrade(self, xct, xid)) or upgrades[-1])
    quarks = 0
    for seed in range(WORKLOADS):
        runner = Runner(seed, OPS)
        runner.run()
        quarks += runner.locking.quarks_opened
    assert quarks > SEEDS_PER_CHUNK and True in upgrades  # extents freed at commit, after an EX upgrade


def test_a_repeated_crash_image_gets_the_result_its_own_check_would(monkeypatch):
    """The sweep checks each (image, expectations) once, a point that also crashes during restart included
    (its second crash is built from the first point's restart, and checked): with a restart that does not
    undo, the memo must give every crash point exactly the verdict the point's own check gives, restart
    each distinct (image, expectations) once, and crash during restart at the same points."""
    import minidb.crashtest.pagestore as sweep_module
    import minidb.crashtest.sweep as sweep_loop
    import minidb.pagestore.restart.undo as undo_module  # restart's own undo (an aries_restart edition has none)
    from minidb.io import crash_points

    def skip(volume, entry, xct):
        return UndoStep(entry.lsn, entry.type_name, "skipped", entry.values["txn_prev_lsn"])

    monkeypatch.setattr(undo_module, "undo_step", skip)
    checks, second_crashes = [], []
    check_point, crash_during_restart = sweep_module.check_point, sweep_loop.crash_during_restart
    monkeypatch.setattr(sweep_module, "check_point", lambda *args: checks.append(1) or check_point(*args))
    monkeypatch.setattr(sweep_loop, "crash_during_restart",
                        lambda *args: second_crashes.append(1) or crash_during_restart(*args))
    memoized = crash_sweep(0, ops=10)
    memo_checks, memo_second, checks[:], second_crashes[:] = len(checks), len(second_crashes), [], []
    workload = run_workload(0, 10)
    distinct = {(point.disk.content_digest(), sweep_module.expectations(workload, point.event.index))
                for point in crash_points(workload.disk, start=workload.formatted_at + 1, torn_variants=1,
                                          random_variants=1, seed=0)}
    assert memo_checks == len(distinct)
    monkeypatch.setattr(sweep_module, "expectations", lambda workload, event: object())  # never repeats
    every = crash_sweep(0, ops=10)
    assert len(checks) == every.points == memoized.points > memo_checks
    assert len(second_crashes) == memo_second > 0
    assert 0 < len(memoized.violations) < memoized.points
    assert [v.split(": ")[0] for v in memoized.violations] == [v.split(": ")[0] for v in every.violations]


CHECKPOINT_ENTRIES = 1000  # bytes: a checkpoint's own entries (its tables), part of what analysis reads


def test_a_restart_reads_at_most_a_checkpoint_interval_of_log_however_long_the_workload():
    """Restart's analysis reads the log from the master checkpoint on, and the workload takes a checkpoint
    once CHKPT_BYTES were logged since the last (after the step that passed it): at every crash point of
    long workloads, the log a restart reads is at most an interval, the largest step and a checkpoint,
    not the workload's history."""
    for seed in range(8):
        workload = run_workload(seed, 48)
        bound = CHKPT_BYTES + workload.largest_step + CHECKPOINT_ENTRIES
        for event in workload.disk.events[workload.formatted_at + 1:]:
            if event.kind not in ("write", "truncate", "fsync"):
                continue
            image = workload.disk.crash_image(event.index, CrashMode.everything())
            master = read_master(image)
            log = LogManager(image, file_max=FILE_MAX, readonly=True)
            scanned = sum(entry.size for entry in log.scan(None if master is None else master.master))
            log.close()
            assert scanned <= bound, (seed, str(event), scanned, bound)


def test_no_transaction_stays_in_flight_for_more_than_a_few_intervals_of_log():
    """The workload ends every transaction (prepared or not) once TXN_BYTES were logged since it began (after
    the step that passed it): in long workloads, no transaction's entries span more than that and the
    largest step. Restart's undo walks each loser back to its first entry, and the check resolves each
    in-doubt one: so they too read at most that at a crash point, not the workload's history."""
    spans = []
    for seed in range(12):
        workload = run_workload(seed, 48)
        if workload.log_size is not None:
            continue  # a bounded log: its first files were scavenged
        log = LogManager(workload.disk, file_max=FILE_MAX, readonly=True)
        logged, first, span = 0, {}, {}
        for entry in log.scan(None):
            logged += entry.size
            if entry.txn_id:
                span[entry.txn_id] = logged - first.setdefault(entry.txn_id, logged - entry.size)
        log.close()
        assert max(span.values()) <= TXN_BYTES + workload.largest_step, (seed, max(span.values()))
        spans += span.values()
    assert max(spans) > 2 * CHKPT_BYTES  # transactions still live through checkpoints


def test_a_crash_during_restart_leaves_what_a_crash_scheduled_in_a_second_restart_would():
    """The sweep crashes a restart by replaying what one restart of the image wrote, up to the crash
    (``SimDisk.crash_image_after``), instead of restarting a copy again until a scheduled crash: restart
    is deterministic, so at every operation of restarts of two seeds (in-doubt transactions, a bounded log,
    files), the replayed image is the one the scheduled crash leaves, byte for byte."""
    from minidb.crashtest.pagestore import open_sm
    from minidb.errors import SimulatedCrash
    from minidb.io import crash_points

    compared = 0
    for seed in (4, 0):
        workload = run_workload(seed, OPS)
        points = list(crash_points(workload.disk, start=workload.formatted_at + 1, torn_variants=0))
        for point in points[::max(1, len(points) // 6)]:
            image, twin = point.disk, point.disk.clone()
            before = len(image.events)
            sm = open_sm(workload, image)
            restart = image.events[before:]  # closing writes too: not restart's
            sm.close()
            ops = [i for i, event in enumerate(restart) if event.kind in ("write", "truncate", "fsync")]
            for at, last in enumerate(ops, start=1):
                scheduled = twin.clone()
                scheduled.schedule_crash(after_ops=at)
                with pytest.raises(SimulatedCrash):
                    open_sm(workload, scheduled)
                assert twin.crash_image_after(restart[:last + 1]).content_digest() == scheduled.content_digest(), \
                    (seed, str(point), at)
                compared += 1
    assert compared > 100
