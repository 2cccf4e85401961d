"""Group commit that batches: the leader gathers the followers it expects, within a bounded wait.

Every interleaving is scripted with events and a manual clock: nothing sleeps."""

import threading

import pytest

from minidb.errors import UserError
from minidb.log import TRACE
from minidb.log.groupcommit import GroupCommitPolicy, ManualClock

from tests.log.helpers import new_log


def expecting(log, served, fsync_seconds=0.010):
    """As if the previous fsync had taken ``fsync_seconds`` and served ``served`` sync requests."""
    log.group_commit.fsync_seconds = fsync_seconds
    log.group_commit.expected = served


def start(target, *args):
    thread = threading.Thread(target=target, args=args)
    thread.start()
    return thread


def finish(*threads):
    for thread in threads:
        thread.join(5)
        assert not thread.is_alive()


def test_the_leader_waits_for_an_expected_follower_and_one_fsync_serves_both():
    clock = ManualClock()
    log = new_log(commit_clock=clock)
    expecting(log, served=2)
    first = log.append(TRACE, {"message": "leader's commit"})
    fsyncs = log.stats["nFsyncs"]
    leader = start(log.sync, first)
    assert clock.waiting.wait(5), "the leader fsynced without waiting for the follower it expects"
    assert log.stats["nFsyncs"] == fsyncs and not log.is_durable(first)
    second = log.append(TRACE, {"message": "follower's commit"})  # appended while the leader gathers
    follower = start(log.sync, second)
    finish(leader, follower)
    assert log.is_durable(first) and log.is_durable(second)
    assert log.stats["nFsyncs"] == fsyncs + 1  # one fsync for both
    assert clock.waits == [pytest.approx(0.005)]  # half the fsync time, never used up
    assert clock.time == 0.0  # the follower's arrival, not the clock, ended the wait
    assert log.group_commit.expected == 2


def test_the_bounded_wait_ends_by_the_clock_when_no_follower_comes():
    clock = ManualClock()
    log = new_log(commit_clock=clock)
    expecting(log, served=3)
    lsn = log.append(TRACE, {"message": "alone"})
    fsyncs = log.stats["nFsyncs"]
    leader = start(log.sync, lsn)
    assert clock.waiting.wait(5)
    clock.waiting.clear()
    clock.advance(0.004)  # not yet the bound (0.005): the leader waits on for the rest
    assert clock.waiting.wait(5)
    assert not log.is_durable(lsn)
    clock.advance(0.001)
    finish(leader)
    assert log.is_durable(lsn) and log.stats["nFsyncs"] == fsyncs + 1
    assert clock.waits == [pytest.approx(0.005), pytest.approx(0.001)]
    assert log.group_commit.expected == 1  # the next leader expects nobody: no wait at all
    clock.waiting.clear()
    log.sync(log.append(TRACE, {"message": "alone again"}))
    assert not clock.waiting.is_set() and len(clock.waits) == 2


def test_a_single_thread_never_waits():
    clock = ManualClock()
    log = new_log(commit_clock=clock)
    for i in range(5):
        log.sync(log.append(TRACE, {"message": f"commit {i}"}))
    assert clock.waits == [] and log.stats["nFsyncs"] >= 5


def test_commit_delay_zero_turns_the_gather_off():
    clock = ManualClock()
    log = new_log(commit_clock=clock, commit_delay=0)
    expecting(log, served=4)
    log.sync(log.append(TRACE, {"message": "no waiting"}))
    assert clock.waits == []


def test_the_policy_learns_the_fsync_time_and_the_batch():
    policy = GroupCommitPolicy(0.5, ManualClock())
    assert policy.max_wait() == 0.0  # nothing measured yet: no wait
    policy.fsynced(0.010, served=4)
    assert policy.max_wait() == pytest.approx(0.005) and policy.expected == 4
    policy.fsynced(0.020, served=1)
    assert policy.fsync_seconds == pytest.approx(0.012) and policy.expected == 1
    with pytest.raises(UserError, match="commit_delay 2 must be a fraction"):
        GroupCommitPolicy(2)
    with pytest.raises(UserError, match="commit_delay"):
        new_log(commit_delay=-1)


def test_an_entry_already_durable_does_not_wait_for_the_fsync_in_flight():
    """A leader's fsync is held up; a commit whose entry an earlier fsync covered returns at once."""
    from tests.log.test_manager import GatedDisk
    disk = GatedDisk()
    log = new_log(disk)
    early = log.append(TRACE, {"message": "already synced"})
    log.sync(early)
    late = log.append(TRACE, {"message": "in the held-up fsync"})
    disk.gated = True
    leader = start(log.sync, late)
    assert disk.in_fsync.wait(5)
    try:
        durable = start(log.sync, early)
        durable.join(5)
        assert not durable.is_alive(), "a durable entry waited for an fsync it does not need"
        assert log.stats["nGroupCommitWaits"] == 0
    finally:
        disk.gate.set()
    finish(leader)
    assert log.is_durable(late)
