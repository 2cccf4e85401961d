"""Pictures and the widget of the lock manager: scenarios, figures, the pure callback, graphviz source."""

import pytest
from matplotlib.figure import Figure

from minidb.pagestore.lock import LockManager
from minidb.pagestore.lock.modes import EX, SH
from minidb.viz.gallery import FIGURES
from minidb.viz.lock_widgets import lock_explorer, scenario_step
from minidb.viz.locks import (
    cycle_edges, draw_digests, draw_lock_table, draw_mode_tables, draw_waits_for, node_positions, table_rows,
    waits_for_dot,
)
from minidb.viz.locks_demo import SCENARIOS, DemoTxn, detection_figure, lock_step, rec, steps_of
from minidb.viz.style import WIDTH


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_scenario_replays_to_its_end(name):
    last = lock_step(name, steps_of(name))
    assert isinstance(last.figure, Figure) and last.figure.get_size_inches()[0] == WIDTH
    assert len(last.log) >= steps_of(name) and last.summary().startswith(f"step {steps_of(name)}: ")


def test_replays_are_deterministic():
    a, b = lock_step("cycle", 6), lock_step("cycle", 6)
    assert a.snapshot == b.snapshot and a.graph == b.graph and a.trace == b.trace and a.log == b.log


def test_the_cycle_scenario_step_by_step():
    five = lock_step("cycle", 5)
    t1, t3 = five.snapshot.owner(1), five.snapshot.owner(3)
    assert t1.digest & t3.fingerprint == t3.fingerprint  # refreshed with T3's bits, in T1's thread
    assert five.detection is None and five.graph.cycles() == []
    six = lock_step("cycle", 6)
    assert six.new_log == (" 6. T3: SH r(1.3.48.1) -> DeadlockVictim",)
    assert any("T3 found its fingerprint" in line for line in six.trace)
    snapshot, graph = six.detection
    assert graph.cycles() == [(1, 2, 3)] and cycle_edges(graph) == {(1, 2), (2, 3), (3, 1)}
    assert snapshot.owner(3).waiting_on == rec(48, 1)
    assert isinstance(detection_figure(six), Figure)
    assert six.stats["nDeadlocks"] == 1 and six.stats["nFalseDeadlocks"] == 0
    end = lock_step("cycle", 8)
    assert end.snapshot.owner(1).held[-1][0] == rec(48, 2)
    with pytest.raises(ValueError, match="found no cycle"):
        detection_figure(five)


def test_the_hierarchy_scenario_queues_a_compatible_reader_behind_a_waiter():
    four = lock_step("hierarchy", 4)
    page = four.snapshot.heads[2]
    assert [r.describe() for r in page.requests] == ["T1(IX)", "T2(IS)", "T3(SH*)", "T4(IS*)"]
    seven = lock_step("hierarchy", 7)
    assert [line.strip() for line in seven.new_log] == [
        "7. T2: release all -> ok", "T3: SH p(1.3.48) (step 3) -> ok", "T4: SH r(1.3.48.3) (step 4) -> ok"]


def test_the_escalation_scenario():
    four = lock_step("escalation", 4)
    assert [str(lid) for lid, _, _ in four.snapshot.owner(1).held] == ["v(1)", "s(1.3)", "p(1.3.50)"]
    assert four.stats["nEscalations"] == 1
    assert lock_step("escalation", 5).stats["nCovered"] == 1


def test_the_false_positive_scenario():
    last = lock_step("false positive", 4)
    assert last.stats["nFingerprintCollisions"] == 1 and last.stats["nFalseDeadlocks"] == 1
    assert last.detection is not None and last.detection[1].cycles() == []


def test_bad_arguments():
    with pytest.raises(ValueError, match="scenario must be one of"):
        lock_step("nope", 1)
    with pytest.raises(ValueError, match="step must be between 0 and 5 for 'upgrade'"):
        lock_step("upgrade", 6)


def test_the_explorer_drives_the_pure_callback():
    explorer = lock_explorer()
    assert explorer.result.scenario == "cycle" and explorer.result.step == steps_of("cycle")
    explorer.controls["step"].value = 6
    assert explorer.result.detection is not None
    explorer.controls["scenario"].value = "upgrade"  # 5 steps: the step is clamped
    assert explorer.result.scenario == "upgrade" and explorer.result.step == 5
    explorer.controls["step"].value = 4
    assert explorer.result.new_log == (" 4. T2: EX p(1.3.48) -> DeadlockVictim",)
    assert scenario_step("upgrade", 99).step == 5 and scenario_step("upgrade", -1).step == 0


def test_drawings_from_plain_data():
    lm = LockManager(escalation_threshold=None)
    t1 = DemoTxn(1)
    lm.lock(t1, rec(48, 2), EX)
    snapshot = lm.snapshot()
    assert table_rows(snapshot) == [(0, None), (1, 0), (2, 1), (3, 2)]
    assert tuple(draw_lock_table(snapshot, title="t").get_size_inches()) == (WIDTH, 0.5 + 0.45 + 0.3 * 4)
    assert isinstance(draw_digests(snapshot), Figure)
    graph = lm.waits_for()
    assert node_positions(graph) == {1: (0.0, 1.0)}
    assert isinstance(draw_waits_for(graph, title="t"), Figure)
    assert isinstance(draw_mode_tables(), Figure)


def test_graphviz_source_of_a_cycle():
    _, graph = lock_step("upgrade", 4).detection
    source = waits_for_dot(graph, title="upgrade").source
    assert 'T1 -> T2 [label="p(1.3.48) SH\\nconflicting mode" color="#d62728"' in source
    assert 'T2 -> T1 [label="p(1.3.48) SH\\nconflicting mode" color="#d62728"' in source


def test_the_gallery_has_the_lock_pictures():
    for name in ("lock_modes.png", "locks_hierarchy.png", "locks_deadlock.png"):
        assert isinstance(FIGURES[name](), Figure)
