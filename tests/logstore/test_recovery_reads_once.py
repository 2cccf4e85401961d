"""Recovery reads the log since the checkpoint once, and counts utilization in bulk: the same recovery.

Opening the log checks its last file entry by entry to find where it ends; recovery takes those
checked entries (``LogManager.take_opening_scan``) for its search of the last CkptEnd and its
forward read, instead of reading and checking the file again, and it counts the entries it read for
utilization file by file (``count_in_runs``) instead of one call per entry. Each seed recovers two
copies of a crashed disk, one the careful way (the file read again, entries counted one by one) and
one the fast way: the same tree, the same utilization counts and the same log after recovery.
"""

import gc

import pytest

from minidb.errors import LogError
from minidb.log.manager import LogManager
from minidb.logstore import Environment
from minidb.logstore.recovery import RecoveryManager

from tests.logstore.helpers import new_env, small_config
from tests.logstore.test_recovery_fast_paths import SEEDS, run_workload, slots


def careful_reads(monkeypatch):
    """Recovery as it was: the opening scan dropped unused, utilization counted entry by entry."""
    taken = LogManager.take_opening_scan

    def dropped(self):
        taken(self)
        return None

    monkeypatch.setattr(LogManager, "take_opening_scan", dropped)
    monkeypatch.setattr(RecoveryManager, "count_in_runs", False)


def utilization_of(env):
    tracker = env.utilization
    files = {n: (s.total_count, s.total_size, s.node_count, s.node_size, dict(s.obsolete))
             for n, s in tracker.files.items()}
    return files, dict(tracker.sizes), set(tracker.dirty), tracker.stats["nEntriesCounted"]


def recovered(disk, budget, careful: bool):
    with pytest.MonkeyPatch.context() as monkeypatch:
        if careful:
            careful_reads(monkeypatch)
        env = Environment.open(disk.clone(), small_config(node_budget=budget))
    log = [(e.lsn, e.header, e.item) for e in env.log.scan()]
    return env, log


@pytest.mark.parametrize("seed", SEEDS)
def test_reading_once_and_counting_in_bulk_recover_the_same(seed):
    disk, budget = run_workload(seed)
    careful, careful_log = recovered(disk, budget, careful=True)
    fast, fast_log = recovered(disk, budget, careful=False)
    assert fast.recovery_info.summary() == careful.recovery_info.summary()
    assert slots(fast) == slots(careful)
    assert utilization_of(fast) == utilization_of(careful)
    assert fast_log == careful_log


def test_recovery_takes_the_opening_scan_before_anything_is_written():
    """The environment opens its log keeping the last file's checked entries, and recovery takes them
    first thing: none is left afterwards, and one left untaken would make the first write fail."""
    disk, env = new_env("taken")
    db = env.database("t")
    for i in range(30):
        db.put(f"k{i:02d}", "v")
    env.close()
    env = Environment.open(disk, small_config())
    assert env.log.take_opening_scan() is None
    env.close()
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(LogManager, "take_opening_scan", lambda self: None)  # left with the log
        with pytest.raises(LogError, match="take_opening_scan"):
            Environment.open(disk, small_config())


def test_the_checked_entries_are_what_recovery_reads():
    """Recovery of a log whose last file holds everything since the checkpoint reads no byte of it again."""
    disk, env = new_env("read-once")
    db = env.database("t")
    env.checkpoint()
    for i in range(60):
        db.put(f"k{i:02d}", "v")
    env.sync()
    env.log.close()
    reads = []
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr("minidb.log.reader.LogReader.file_bytes", lambda self, n: reads.append(n))
        env = Environment.open(disk, small_config())
    assert reads == []
    assert sorted(env.database("t").keys()) == [f"k{i:02d}".encode() for i in range(60)]


def test_the_collector_is_paused_while_recovery_runs_and_back_after():
    disk, env = new_env("collector")
    env.database("t").put("k", "v")
    env.close()
    during = []
    env = Environment.open(disk, small_config(), phase_listener=lambda phase, env: during.append(gc.isenabled()))
    assert during and not any(during)
    assert gc.isenabled()
    env.close()
