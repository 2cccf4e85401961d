"""Pictures and the widget of the lock manager: scripts, figures, the pure callback, graphviz source."""

import pytest
from matplotlib.figure import Figure

from minidb.pagestore.lock import LockManager
from minidb.pagestore.lock.modes import EX
from minidb.viz.gallery import FIGURES
from minidb.viz.lock_widgets import lock_explorer
from minidb.viz.locks import (
    cycle_edges,
    draw_digests,
    draw_lock_table,
    draw_mode_tables,
    draw_waits_for,
    node_positions,
    table_rows,
    waits_for_dot,
)
from minidb.viz.locks_demo import SCENARIOS, SCRIPT, DemoTxn, detection_figure, lock_step, page, rec, scenario_step
from minidb.viz.script import ScriptError
from minidb.viz.style import WIDTH

from tests.viz.helpers import notebook_scripts

CYCLE = list(SCENARIOS["cycle"].script)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_scenario_replays_to_its_end(name):
    steps = len(SCENARIOS[name].script)
    last = scenario_step(name, steps)
    assert isinstance(last.figure, Figure) and last.figure.get_size_inches()[0] == WIDTH
    assert len(last.log) >= steps and last.summary().startswith(f"step {steps}: ")


def test_the_default_script_is_the_hierarchy_scenario():
    assert list(SCENARIOS["hierarchy"].script) == SCRIPT
    assert lock_step(7).snapshot == scenario_step("hierarchy", 7).snapshot


def test_replays_are_deterministic():
    a, b = scenario_step("cycle", 6), scenario_step("cycle", 6)
    assert a.snapshot == b.snapshot and a.graph == b.graph and a.trace == b.trace and a.log == b.log


def test_the_cycle_scenario_step_by_step():
    five = scenario_step("cycle", 5)
    t1, t3 = five.snapshot.owner(1), five.snapshot.owner(3)
    assert t1.digest & t3.fingerprint == t3.fingerprint  # refreshed with T3's bits, in T1's thread
    assert five.detection is None and five.graph.cycles() == []
    six = scenario_step("cycle", 6)
    assert six.new_log == (" 6. T3: SH r(1.3.48.1) -> DeadlockVictim",)
    assert six.description == "T3 asks for SH on r(1.3.48.1): deadlock victim"
    assert any("T3 found its fingerprint" in line for line in six.trace)
    snapshot, graph = six.detection
    assert graph.cycles() == [(1, 2, 3)] and cycle_edges(graph) == {(1, 2), (2, 3), (3, 1)}
    assert snapshot.owner(3).waiting_on == rec(48, 1)
    assert isinstance(detection_figure(six), Figure)
    assert six.stats["nDeadlocks"] == 1 and six.stats["nFalseDeadlocks"] == 0
    end = scenario_step("cycle", 8)
    assert end.snapshot.owner(1).held[-1][0] == rec(48, 2)
    assert end.description == "T2 commits; then T1 granted"
    with pytest.raises(ValueError, match="found no cycle"):
        detection_figure(five)


def test_an_edited_cycle_script_without_the_closing_request_has_no_deadlock():
    # T3 commits instead of asking for T1's record: a chain T1 -> T2 -> T3, no cycle, no victim
    edited = CYCLE[:5] + [("commit", "T3"), ("commit", "T2")]
    step = lock_step(7, edited)
    assert step.stats["nDeadlocks"] == 0
    assert [line.strip() for line in step.new_log] == ["7. T2: commit -> ok", "T1: EX r(1.3.48.2) (step 4) -> ok"]
    assert step.snapshot.owner(2) is None and step.snapshot.owner(1).waiting_on is None


def test_an_edited_cycle_script_changes_the_victim():
    # T1 asks last, so T1 closes the cycle: it finds itself in T2's digest; of T1 and T2, T2 is the younger
    edited = CYCLE[:3] + [CYCLE[4], CYCLE[5], CYCLE[3]]
    step = lock_step(6, edited)
    assert step.stats["nDeadlocks"] == 1 and step.detection[1].cycles() == [(1, 2, 3)]
    assert [line.strip() for line in step.new_log] == ["6. T1: EX r(1.3.48.2) -> blocked",
                                                      "T2: SH r(1.3.48.3) (step 4) -> DeadlockVictim"]
    assert step.description == "T1 asks for EX on r(1.3.48.2): waits; then T2 deadlock victim"


def test_the_hierarchy_scenario_queues_a_compatible_reader_behind_a_waiter():
    four = lock_step(4)
    page_head = four.snapshot.heads[2]
    assert [r.describe() for r in page_head.requests] == ["T1(IX)", "T2(IS)", "T3(SH*)", "T4(IS*)"]
    seven = lock_step(7)
    assert [line.strip() for line in seven.new_log] == [
        "7. T2: commit -> ok", "T3: SH p(1.3.48) (step 3) -> ok", "T4: SH r(1.3.48.3) (step 4) -> ok"]


def test_an_edited_hierarchy_script_lets_the_reader_in_first():
    # T4 reads before T3 asks for the page: nobody waits ahead of T4, so it is granted at once
    edited = [SCRIPT[0], SCRIPT[1], SCRIPT[3], SCRIPT[2]]
    step = lock_step(4, edited)
    assert [line.strip() for line in step.log][2:] == ["3. T4: SH r(1.3.48.3) -> ok", "4. T3: SH p(1.3.48) -> blocked"]
    assert step.snapshot.owner(4).waiting_on is None and step.snapshot.owner(3).waiting_on == page(48)


def test_the_escalation_scenario():
    four = scenario_step("escalation", 4)
    assert [str(lid) for lid, _, _ in four.snapshot.owner(1).held] == ["v(1)", "s(1.3)", "p(1.3.50)"]
    assert four.stats["nEscalations"] == 1
    assert scenario_step("escalation", 5).stats["nCovered"] == 1
    # the same script without escalation: five record locks, and T2 is granted at once
    script = SCENARIOS["escalation"].script
    assert lock_step(6, script).stats["nEscalations"] == 0 and lock_step(6, script).snapshot.owner(2).waiting_on is None


def test_the_false_positive_scenario():
    last = scenario_step("false positive", 4)
    assert last.stats["nFingerprintCollisions"] == 1 and last.stats["nFalseDeadlocks"] == 1
    assert last.detection is not None and last.detection[1].cycles() == []
    # with the 16-bit bitmap every thread has bits of its own: no false positive, T3 simply waits
    wide = lock_step(4, SCENARIOS["false positive"].script)
    assert wide.stats["nDeadlocks"] == 0 and wide.snapshot.owner(3).waiting_on == rec(48, 2)


@pytest.mark.parametrize("script, message", [
    ([("lock", "T1", "r(1.3.48.2)")], r"step 1 \('lock', 'T1', 'r\(1.3.48.2\)'\): lock takes txn, lock_id, mode"),
    ([("lock", "T1", "r(1.3.48.2)", "EX"), ("lock", "X2", "r(1.3.48.2)", "EX")], r"step 2 .*not 'X2'"),
    ([("lock", "T1", "q(1)", "EX")], r"step 1 .*bad lock id 'q\(1\)'"),
    ([("lock", "T1", "r(1.3.48.2)", "XX")], r"step 1 .*the mode is one of IS, IX, SH, SIX, UD, EX, not 'XX'"),
    ([("lock", "T1", "r(1.3.48.2)", "EX"), ("commit", "T9")], r"step 2 \('commit', 'T9'\): T9 holds no locks"),
    ([("lock", "T1", "r(1.3.48.2)", "EX"), ("commit", "T1"), ("abort", "T1")], r"step 3 .*already ended"),
    ([("grab", "T1")], r"step 1 .*unknown operation 'grab'"),
])
def test_a_bad_script_names_the_step(script, message):
    with pytest.raises(ScriptError, match=message):
        lock_step(len(script), script)


def test_a_waiting_transaction_can_do_nothing_else():
    script = [("lock", "T1", "r(1.3.48.2)", "EX"), ("lock", "T2", "r(1.3.48.2)", "SH"),
              ("lock", "T2", "r(1.3.48.3)", "SH")]
    with pytest.raises(ScriptError, match=r"step 3 .*T2 still waits \(step 2\)"):
        lock_step(3, script)
    assert lock_step(2, script).snapshot.owner(2).waiting_on == rec(48, 2)  # the first two steps run


def test_bad_step():
    with pytest.raises(ValueError, match="step must be between 0 and 7 for this script, not 8"):
        lock_step(8)
    with pytest.raises(ValueError, match="scenario must be one of"):
        scenario_step("nope", 1)


def test_the_explorer_drives_the_pure_callback_over_an_edited_script():
    explorer = lock_explorer(CYCLE, 6)
    assert explorer.result.step == 6 and explorer.result.detection is not None
    explorer.controls["step"].value = 8
    assert explorer.result.description == "T2 commits; then T1 granted"
    assert explorer.controls["step"].max == len(CYCLE)
    edited = lock_explorer(CYCLE[:5] + [("commit", "T3")])
    assert edited.controls["step"].max == 6 and edited.result.stats["nDeadlocks"] == 0
    assert lock_explorer().result.step == len(SCRIPT)
    wide = lock_explorer(SCENARIOS["false positive"].script, fingerprint_bits=4)
    assert wide.result.stats["nFalseDeadlocks"] == 1
    with pytest.raises(ScriptError, match="step 1"):
        lock_explorer([("lock", "T0", "r(1.3.48.2)", "EX")])


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
    _, graph = scenario_step("upgrade", 4).detection
    source = waits_for_dot(graph, title="upgrade").source
    assert 'T1 -> T2 [label="p(1.3.48) SH\\nconflicting mode" color="#d62728"' in source
    assert 'T2 -> T1 [label="p(1.3.48) SH\\nconflicting mode" color="#d62728"' in source


def test_the_gallery_has_the_lock_pictures():
    for name in ("lock_modes.png", "locks_hierarchy.png", "locks_deadlock.png"):
        assert isinstance(FIGURES[name](), Figure)


def test_the_notebooks_show_the_modules_scripts():
    assert notebook_scripts("05_locks")["script"] == SCRIPT
    shown = notebook_scripts("05b_deadlocks")
    for name, scenario in (("script", "cycle"), ("escalation", "escalation"), ("upgrade", "upgrade"),
                           ("false_positive", "false positive")):
        assert shown[name] == list(SCENARIOS[scenario].script), name
