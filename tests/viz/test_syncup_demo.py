"""Notebook 14's demo: a failover and the old master's syncup, JE's rollback example, the rollback limit."""

import pytest

from minidb.viz.script import ScriptError
from minidb.viz.syncup import Entry, NodeLog, draw_logs
from minidb.viz.syncup_demo import (
    SCRIPT,
    failover_script,
    failover_step,
    hard_recovery,
    je_rollback_example,
    master_dies,
    restart_refused,
)
from minidb.viz.syncup_widgets import failover_explorer

from tests.replication.test_syncup import failover, matchpoint, puts, rejoin, replicated_entries


def streams(result):
    """Each node's log as (VLSN, type, invisible) of its replicated entries and rollback entries."""
    return {log.name: [(e.vlsn, e.type_name, e.invisible) for e in log.entries] for log in result.logs}


def test_the_default_script_shows_what_the_notebook_says():
    killed = failover_step(4)
    assert killed.master is None and killed.records["n1"] == {"k1": "a", "k2": "b"}
    assert killed.records["n2"] == killed.records["n3"] == {"k1": "a"}  # k2 never left n1
    assert [w.acknowledged for w in killed.writes] == [True, False]
    elected = failover_step(5)
    assert (elected.master, elected.term) == ("n2", 2)  # equal logs (term 1, last_txn_end 4), equal priorities: n2
    assert "last term/last_txn_end n2 1/4, n3 1/4" in elected.lines[-2]
    end = failover_step(len(SCRIPT))
    search = end.searches[0]
    assert [(s.vlsn, s.type_name, s.match) for s in search.steps] == [(6, "Commit", False), (4, "Commit", True)]
    assert search.result.matchpoint_vlsn == 4 and search.result.examined == 2
    assert end.lines[-1].startswith("  n1 syncs up with n2: matchpoint VLSN 4 at")  # the engine agreed
    assert end.rolled_back == {"n1": ((5, "LN_TX"), (6, "Commit")), "n2": (), "n3": ()}
    # k1's write created "accounts" (its MapLN, VLSN 2, replicated with k1): nothing of it is rolled back
    assert streams(end)["n1"] == [(1, "TermStart", False), (2, "MapLN", False), (3, "LN_TX", False),
                                  (4, "Commit", False), (5, "LN_TX", True), (6, "Commit", True),
                                  (None, "RollbackStart", False), (None, "RollbackEnd", False),
                                  (5, "TermStart", False), (6, "LN_TX", False), (7, "Commit", False)]
    assert end.records == {n: {"k1": "a", "k3": "c"} for n in ("n1", "n2", "n3")}
    assert [w.key for w in end.acknowledged] == ["k1", "k3"] and end.lost == ()
    assert end.kept == {n: ("k1", "k3") for n in ("n1", "n2", "n3")}
    assert "lost: none" in end.summary() and end.figure is not None and search.figure(1) is not None


def test_the_master_dying_earlier_leaves_nothing_to_roll_back():
    edited = [("write", "k1", "a", "SIMPLE_MAJORITY"), ("kill", "n1"), ("partition", "n1"),
              ("write", "k2", "b", "NONE"), ("elect",)]
    with pytest.raises(ScriptError, match=r"step 4 .*no master to write to: elect one first"):
        failover_step(len(edited), edited)
    edited[3:] = [("elect",), ("write", "k2", "b", "NONE"), ("rejoin", "n1")]
    result = failover_step(len(edited), edited)
    assert result.rolled_back["n1"] == () and result.searches[0].result.matchpoint_vlsn == 4  # k1's Commit
    assert result.records["n1"] == {"k1": "a", "k2": "b"}  # k2 written by n2, n1 caught up


def test_the_slider_moves_where_the_master_dies():
    assert failover_script() == SCRIPT  # the default script kills n1 where the slider puts it
    outcomes = {after: master_dies(after) for after in range(5)}
    assert {a: o.rolled_back["n1"] for a, o in outcomes.items()} == {
        0: (), 1: (), 2: (),
        3: ((5, "LN_TX"), (6, "Commit")),  # k2, written while cut off (after accounts' creation and k1, VLSNs 2-4)
        4: ((5, "LN_TX"), (6, "Commit"), (7, "LN_TX"), (8, "Commit"))}  # k3 too: InsufficientAcksError on n1
    assert outcomes[4].writes[2].line.endswith("InsufficientAcksError: 1 acks needed, acked by none, after 1000 ms")
    assert [w.key for w in outcomes[4].acknowledged] == ["k1"]
    for o in outcomes.values():
        assert o.master == "n2" and o.lost == () and len({tuple(sorted(r.items())) for r in o.records.values()}) == 1
        assert len({tuple(v) for v in streams_visible(o).values()}) == 1


def streams_visible(result):
    return {name: [(v, t) for v, t, invisible in log if v and not invisible] for name, log in streams(result).items()}


def test_a_minority_elects_nobody_and_a_second_failover_works():
    minority = [("partition", "n3"), ("kill", "n1"), ("elect",)]
    result = failover_step(3, minority)
    assert result.master is None and result.lines[-1].startswith("elect: nobody elected")
    twice = [("write", "k1", "a", "ALL"), ("kill", "n1"), ("elect",), ("write", "k2", "b", "SIMPLE_MAJORITY"),
             ("rejoin", "n1"), ("kill", "n2"), ("elect",), ("write", "k3", "c", "SIMPLE_MAJORITY"), ("rejoin", "n2")]
    result = failover_step(len(twice), twice)
    assert (result.master, result.term) == ("n1", 3)  # n1 and n3 equal again: n1 is the first name
    assert result.records == {n: {"k1": "a", "k2": "b", "k3": "c"} for n in ("n1", "n2", "n3")} and result.lost == ()


@pytest.mark.parametrize("script, message", [
    ([("write", "k", "v", "MOST")], r"step 1 .*policy, one of ALL, SIMPLE_MAJORITY, NONE"),
    ([("kill", "n9")], r"step 1 .*the nodes are n1, n2, n3"),
    ([("kill", "n2"), ("kill", "n2")], r"step 2 .*n2 is not running"),
    ([("elect",)], r"step 1 .*n1 is master and running: kill it first"),
    ([("rejoin", "n2")], r"step 1 .*n2 is running: only a killed node rejoins"),
    ([("kill", "n1"), ("rejoin", "n1")], r"step 2 .*no master to rejoin"),
    ([("heal", 1)], r"step 1 .*heal takes no arguments"),
])
def test_a_bad_script_names_its_step(script, message):
    with pytest.raises(ScriptError, match=message):
        failover_step(len(script), script)


def test_je_rollback_example_is_the_tests_one():
    example = je_rollback_example()
    n1, n2 = failover(matchpoint, puts(("b", "old3")), puts(("c", "new3")))
    before = [(e.vlsn, e.type_name) for e in n1.log.scan() if e.vlsn is not None]
    rejoin(n1, n2)
    expected = [(e.vlsn, e.type_name, e.header.invisible, str(e.lsn)) for e in n1.log.scan()
                if e.vlsn is not None or e.type_name.startswith("Rollback")]
    assert [(e.vlsn, e.type_name, e.invisible, e.lsn) for e in example.after[0].entries] == expected  # same LSNs
    assert [(e.vlsn, e.type_name) for e in example.search.before[0].entries] == before
    assert [(s.vlsn, s.type_name, s.match) for s in example.search.steps] == [(1, "Matchpoint", True)]
    assert example.records == {"n1": {"c": "new3"}, "n2": {"c": "new3"}}  # n1's "accounts" went with b=old3
    assert example.rollback_lines[1:] == ("VLSN 2 MapLN at 0x1/0x457: INVISIBLE", "VLSN 3 LN at 0x1/0x48d: INVISIBLE",
                                          "the stream restarts at VLSN 2")
    assert [t for _, t, _ in replicated_entries(n1)].count("RollbackStart") == 1


def test_a_restarted_master_is_refused_by_the_rollback_limit_and_nothing_changes():
    refused = restart_refused()
    assert refused.error.startswith("RollbackLimitError: sim:n1: rolling back to matchpoint VLSN 4 would undo 1 "
                                    "committed transaction (the oldest ends at VLSN 6") and refused.unchanged
    assert "more than txn_rollback_limit 0: a network restore is needed" in refused.error
    with pytest.raises(ValueError, match="never rejoins n3"):
        restart_refused(node="n3")
    early = [("write", "k1", "a", "SIMPLE_MAJORITY"), ("kill", "n1"), ("elect",), ("rejoin", "n1")]
    accepted = restart_refused(early)  # n1 holds nothing the others lack: nothing committed to roll back
    assert accepted.error.startswith("not refused: n1 syncs up with n2: matchpoint VLSN 4")
    assert not any(invisible for _, _, invisible in accepted.after[2])  # nothing rolled back ...
    assert accepted.after[3] == accepted.before[3]  # ... and the same records (n2's TermStart streamed in)


def test_a_restarted_master_under_the_default_limit_rolls_back_by_hard_recovery():
    example = hard_recovery()
    assert example.matchpoint == (4, "0x1/0x4db") and example.period[0] == "0x1/0x4db"
    assert [c.in_rollback_period for c in example.checkpoints] == [False, True, False]  # recovery's, inside
    assert example.recovered_from == f"from CkptEnd {example.checkpoints[0].end} (CkptStart {example.checkpoints[0].start})"
    assert "the tree rebuilt by hard recovery from CkptEnd" in example.rollback_line
    assert example.recovery_lines[0].startswith(f"checkpoint 2 (CkptStart {example.checkpoints[1].start}, CkptEnd "
                                                f"{example.checkpoints[1].end}) not used: its CkptStart lies inside "
                                                "the rollback period from matchpoint 0x1/0x4db")
    assert example.records["n1"] == example.records["n2"] == {"k1": "a", "k3": "c"}
    rejoined = example.after[0]
    assert [(e.vlsn, e.invisible) for e in rejoined.entries if e.vlsn in (5, 6)] == [
        (5, True), (6, True), (5, False), (6, False)]
    assert example.figure.axes
    with pytest.raises(ValueError, match="never rejoins n3"):
        hard_recovery(node="n3")


def test_the_explorer_driven_from_code():
    explorer = failover_explorer()
    slider = explorer.controls["after"]
    assert (slider.value, slider.max) == (3, 4) and explorer.result.rolled_back["n1"]
    slider.value = 0
    assert explorer.result.rolled_back["n1"] == ()
    assert explorer.result.records["n1"] == {"k1": "a", "k2": "b", "k3": "c"}
    edited = [("write", "x", "1", "SIMPLE_MAJORITY"), ("write", "y", "2", "NONE"), ("kill", "n1"), ("elect",)]
    explorer = failover_explorer(edited)
    assert (explorer.controls["after"].value, explorer.controls["after"].max) == (2, 2)
    assert explorer.result.records["n1"] == {"x": "1", "y": "2"}  # y reached n2 and n3 before n1 died
    with pytest.raises(ScriptError):
        failover_explorer([("kill", "n7")])


def test_the_notebooks_what_if_elects_the_more_up_to_date_n3():
    edited = [op for op in SCRIPT]
    edited[1], edited[2] = ("partition", "n2"), ("write", "k2", "b", "SIMPLE_MAJORITY")  # n3 acks k2, n2 misses it
    edited.insert(4, ("heal",))
    result = failover_step(len(edited), edited)
    assert (result.master, result.term) == ("n3", 2) and any("last_txn_end n2 1/4, n3 1/6" in line for line in result.lines)
    assert result.rolled_back == {"n1": (), "n2": (), "n3": ()} and result.lost == ()
    assert result.records == {n: {"k1": "a", "k2": "b", "k3": "c"} for n in ("n1", "n2", "n3")}


def test_the_ack_mark_goes_only_on_the_acknowledged_commit():
    def commit(checksum, invisible=False):
        return Entry(4, "Commit", "0x1/0x511", invisible, None, checksum)

    logs = [NodeLog("n1", "killed", (commit(0xe8f15a48),)), NodeLog("n2", "master", (commit(0x4021d05f),)),
            NodeLog("n3", "replica", (commit(0x4021d05f, invisible=True),))]
    fig = draw_logs(logs, acked={(4, 0x4021d05f)})
    marks = [line for line in fig.axes[0].lines if line.get_marker() == "v"]
    assert [(line.get_xdata()[0], line.get_ydata()[0]) for line in marks] == [(0.3, -1.35 + 0.3)]  # n2's row only


def test_rolled_back_entries_keep_a_dark_label_on_white():
    from minidb.viz.syncup_demo import failover_step

    fig = failover_step(7).figure
    faint = [t for t in fig.axes[0].texts if t.get_bbox_patch() is not None]
    assert faint and all(t.get_color() == "#212121" for t in faint)
    assert any("k2=b" in t.get_text() for t in faint)  # n1's rolled-back LN_TX
