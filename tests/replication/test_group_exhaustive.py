"""The group crash test's exhaustive mode (minidb.crashtest.group.exhaustive_sweep): every node
crashed at every one of its disk events, in every crash mode, the group run again from the start each time.

Every (node, event) pair of a small workload is a crash point and none is a violation; a run that does not
repeat itself up to its crash is a violation; a recovery that drops the last committed transaction it finds
is caught.
"""

import dataclasses

from minidb.crashtest.group import (
    NAMES,
    crash_sweep,
    exhaustive_crash_points,
    exhaustive_sweep,
    node_events,
    run_crash_point,
)
from minidb.io import CrashMode
from minidb.logstore.recovery import RecoveryManager

SEED, OPS = 2, 6


def test_the_exhaustive_mode_crashes_every_node_at_every_one_of_its_disk_events():
    events, problems = node_events(SEED, OPS)
    assert problems == []
    points = exhaustive_crash_points(SEED, events)
    pairs = {(name, k) for name in NAMES for k in range(1, len(events[name]) + 1)}
    assert len(pairs) == sum(len(e) for e in events.values()) >= 30
    assert {(at.node, at.k) for at in points} == pairs
    assert {(at.node, at.k) for at in points if at.mode == CrashMode.nothing()} == pairs
    torn = [at for at in points if at.mode.keep == "torn"]
    assert torn and all(at.event.kind == "write" for at in torn)
    result = exhaustive_sweep(SEED, OPS)
    assert (result.points, result.violations) == (len(points), [])


def test_a_run_that_does_not_repeat_itself_up_to_the_crash_is_a_violation():
    events, _ = node_events(SEED, OPS)
    at = exhaustive_crash_points(SEED, events)[0]
    assert run_crash_point(SEED, OPS, at) == []
    moved = dataclasses.replace(at.event, offset=at.event.offset + 1)  # not what the run writes there
    problems = run_crash_point(SEED, OPS, dataclasses.replace(at, event=moved))
    assert len(problems) == 1 and problems[0].startswith(f"the run did not repeat itself: {at.node}'s disk event 1 is")


def test_the_exhaustive_mode_catches_a_recovery_that_drops_the_last_commit(monkeypatch):
    recover = RecoveryManager._redo_and_undo_lns

    def forgetting_the_last_commit(self):  # its transaction becomes a loser, undone; its entries stay
        self.read.commits = self.read.commits[:-1]
        recover(self)

    monkeypatch.setattr(RecoveryManager, "_redo_and_undo_lns", forgetting_the_last_commit)
    assert crash_sweep(SEED, OPS).violations == []  # the points this seed draws miss it
    result = exhaustive_sweep(SEED, OPS)
    assert any("(b)" in v and "crashes after its disk event" in v for v in result.violations), result.violations[:3]


def test_the_command_line_runs_the_exhaustive_mode_for_the_group_only(capsys):
    from minidb.cli import main

    events, _ = node_events(1, 2)
    assert main(["crashtest", "group", "--seed", "1", "--ops", "2", "--exhaustive"]) == 0
    points = len(exhaustive_crash_points(1, events))
    assert capsys.readouterr().out == f"crash points: {points}, violations: 0\n"
    assert main(["crashtest", "log", "--exhaustive"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--exhaustive is for group" in err and "every crash point already" in err
