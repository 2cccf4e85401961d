"""Pictures of the log store and its widgets: data, fixed-size figures, pure callbacks."""

import pytest
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from minidb.logstore.cases import worked_case
from minidb.logstore.tools.verify import live_but_obsolete
from minidb.viz.checkpoint import (
    PROVISIONAL_COLOURS,
    case_legend,
    case_summary,
    draw_checkpoint,
    draw_dirty_map,
    draw_worked_case,
)
from minidb.viz.gallery import FIGURES
from minidb.viz.logstore import colour, draw_tree_and_log, draw_utilization, legend_handles, tree_graph
from minidb.viz.logstore_demo import (
    BANK_SCRIPT,
    SCRIPT,
    bank_writes,
    checkpoint_demo_env,
    eviction_bug_demo,
    logstore_crash_demo,
    tree_step,
)
from minidb.viz.logstore_widgets import eviction_bug_explorer, logstore_crash_explorer, tree_explorer
from minidb.viz.script import ScriptError
from minidb.viz.style import WIDTH

FINAL = {b"alice": b"70", b"bob": b"80", b"carol": b"70", b"erin": b"5", b"frank": b"60", b"grace": b"35",
         b"heidi": b"40"}


def test_tree_and_log_marks_entries_in_use_and_obsolete():
    step = tree_step(len(SCRIPT))
    picture = step.picture
    assert len(picture.boxes) == len(list(step.env.log.scan()))
    for node in picture.view.nodes():
        if not node.lsn.is_null:
            assert picture.box(node.lsn).in_use
    assert not any(b.in_use and b.obsolete for b in picture.boxes)
    assert live_but_obsolete(step.env) == []
    assert any(b.obsolete for b in picture.boxes) and any(b.provisional == "YES" for b in picture.boxes)


def test_draw_tree_and_log_has_a_box_per_node_and_per_entry():
    picture = tree_step(len(SCRIPT)).picture
    fig = draw_tree_and_log(picture, title="t")
    assert isinstance(fig, Figure) and fig.get_size_inches()[0] == WIDTH
    tree_ax, log_ax = fig.axes
    assert sum(isinstance(p, Rectangle) for p in tree_ax.patches) == len(picture.view.nodes())
    assert sum(isinstance(p, Rectangle) for p in log_ax.patches) == len(picture.boxes)


def test_tree_graph_has_a_record_per_node():
    picture = tree_step(len(SCRIPT)).picture
    source = tree_graph(picture).source
    for node in picture.view.nodes():
        assert f"n{node.node_id} [label=" in source
    tree_edges = [line for line in source.splitlines() if "->" in line and "log:" not in line]
    assert len(tree_edges) == sum(len(n.children) for n in picture.view.nodes())
    # Every record slot points into the log strip, where obsolete entries are grey.
    records = sum(1 for n in picture.view.nodes() if n.is_bin for d in n.known_deleted if not d)
    assert sum(1 for line in source.splitlines() if ":s" in line and "-> log:" in line) == records
    assert source.count('BGCOLOR="#d9d9d9"') == sum(1 for b in picture.boxes if b.obsolete)
    assert tree_graph(picture, show_log=False).source.count("log:") == 0


def test_utilization_bars():
    env = tree_step(len(SCRIPT)).env
    fig = draw_utilization(env)
    bars = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    assert len(bars) == 2 * len(env.utilization_report())


def test_tree_steps():
    assert tree_step(0).operation == "a new environment"
    assert "put alice=100" in tree_step(1).summary()
    with pytest.raises(ValueError, match="step must be between"):
        tree_step(len(SCRIPT) + 1)


def test_the_default_script_shows_what_notebook_09_says():
    assert ["split" in line for line in tree_step(5).lines] == [True]  # the fifth record splits the BIN
    before, after = tree_step(14).picture.view, tree_step(15).picture.view
    assert (before.height(), len(before.root.children)) == (2, 4)  # the root is full
    assert (after.height(), len(after.nodes())) == (3, 8)  # ... and splits: a level more
    assert after.root.lsn.is_null and after.root.dirty
    evicted = [n for n in tree_step(18).picture.view.nodes() if not n.resident]
    assert [n.keys for n in evicted if n.is_bin] and tree_step(18).lsn is not None
    assert all(n.resident for n in tree_step(19).picture.view.nodes()) and "liz = 25" in tree_step(19).lines[0]
    assert tree_step(23).lines[0].startswith("refused, nothing changed")
    accounts = tree_step(24).env.database("accounts")
    assert (accounts.get("alice"), accounts.get("bob")) == (b"70", b"80")


def test_an_edited_tree_script_changes_the_engine_state():
    committed = [op if op != ("abort", "T1") else ("commit", "T1") for op in SCRIPT]
    accounts = tree_step(len(committed), committed).env.database("accounts")
    assert (accounts.get("alice"), accounts.get("bob")) == (b"0", None)
    clean_first = SCRIPT[:17] + [("checkpoint",)] + SCRIPT[17:]  # the evicted BIN is clean: nothing logged
    assert tree_step(19, clean_first).lsn is None and "clean: not logged" in tree_step(19, clean_first).lines[0]


@pytest.mark.parametrize("script, where", [
    ([("put", "a", "1"), ("commit", "T9")], "step 2 ('commit', 'T9'): no transaction T9 has begun"),
    ([("begin", "T1"), ("begin", "T1")], "step 2 ('begin', 'T1'): a transaction named T1 has already begun"),
    ([("begin", "T1"), ("abort", "T1"), ("txn_put", "T1", "a", "1")], "step 3 .*T1 has already ended"),
    ([("put", "a", 1)], "step 1 ('put', 'a', 1): value must be a non-empty string"),
    ([("put", "a")], "step 1 .*put takes key, value"),
    ([("split", "a")], "step 1 .*unknown operation 'split'"),
])
def test_a_bad_script_names_the_step(script, where):
    with pytest.raises(ScriptError, match=where.replace("(", r"\(").replace(")", r"\)")):
        tree_step(len(script), script)
    with pytest.raises(ScriptError):
        logstore_crash_demo(1, script=[("put", "a", "1"), ("sync",)] + script)


def test_draw_tree_and_log_fills_by_node_type_and_draws_an_evicted_node_as_a_reference():
    picture = tree_step(18).picture
    fig = draw_tree_and_log(picture)
    tree_ax, log_ax = fig.axes
    boxes = [p for p in tree_ax.patches if isinstance(p, Rectangle)]
    fills = {tuple(b.get_facecolor()[:3]) for b in boxes}
    assert fills == {to_rgb(colour("IN")), to_rgb(colour("BIN")), to_rgb("white")}  # white: not in memory
    texts = [t.get_text() for t in tree_ax.texts]
    evicted = next(t for t in texts if "not in memory" in t)
    assert "liz" not in evicted and not any("liz" in t for t in texts)  # its keys are in the log, not in memory
    offsets = {t.get_text() for t in log_ax.texts}
    assert {f"{b.lsn.offset:x}" for b in picture.boxes} <= offsets  # every entry labelled with its offset


def test_the_tree_legend_lists_only_what_is_drawn():
    fresh = {h.get_label() for h in legend_handles(tree_step(1).picture)}
    assert "dirty node (red outline)" in fresh and "not in memory" not in fresh
    assert "not in memory" in {h.get_label() for h in legend_handles(tree_step(18).picture)}
    clean = tree_step(16).picture  # right after a checkpoint: nothing dirty, nothing evicted
    labels = {h.get_label() for h in legend_handles(clean)}
    assert "dirty node (red outline)" not in labels and "Provisional.BEFORE_CKPT_END" not in labels
    assert {"IN (node, entry)", "BIN (node, entry)", "LN", "obsolete", "Provisional.YES"} <= labels


def test_crash_demo_of_the_default_script_undoes_the_loser_in_the_tree():
    demo = logstore_crash_demo(len(bank_writes()), "nothing", 8)
    assert demo.phases[8].lines == ("undid 1 LNs of 1 losers",) and demo.records[b"erin"] == b"5"
    assert "replayed 1;" in demo.phases[5].lines[-1]  # the BIN the evictor logged, with T3's slot


def test_crash_demo_of_an_edited_script():
    no_evict = [op for op in BANK_SCRIPT if op != ("evict", "erin")]
    demo = logstore_crash_demo(len(bank_writes(no_evict)), "nothing", 8, no_evict)
    assert demo.phases[8].lines == ("undid 0 LNs of 1 losers",) and demo.records[b"erin"] == b"5"
    t3_commits = BANK_SCRIPT[:-3] + [("commit", "T3")] + BANK_SCRIPT[-3:]
    demo = logstore_crash_demo(len(bank_writes(t3_commits)), "nothing", 8, t3_commits)
    assert demo.records[b"erin"] == b"0" and demo.phases[8].lines == ("undid 0 LNs of 0 losers",)


def test_dirty_map_and_checkpoint_pictures():
    env = checkpoint_demo_env()
    run = env.checkpointer.start()
    run.through(4)
    names = {impl.id: impl.name for impl in env.db_tree.by_id.values()}
    fig = draw_dirty_map(run.result.dirty_map, names)
    refs = sum(len(r) for _, _, r in run.result.dirty_map.levels)
    assert sum(isinstance(p, Rectangle) for p in fig.axes[0].patches) == refs
    assert {l for _, l, _ in run.result.dirty_map.levels} == {1, 2}
    half = draw_checkpoint(run.result, current_step=4)
    assert not [p for p in half.axes[1].patches if isinstance(p, Rectangle)]  # nothing logged yet
    result = run.finish()
    fig = draw_checkpoint(result)
    logged = [p for p in fig.axes[1].patches if isinstance(p, Rectangle)]
    assert len(logged) == len(result.logged)
    assert {l.provisional.name for l in result.logged} <= set(PROVISIONAL_COLOURS)


def test_worked_case_strip():
    fig = draw_worked_case(worked_case(3, bug=True))
    texts = " ".join(t.get_text() for t in fig.texts)
    assert "INCORRECT" in texts and "bug option" in texts


def test_worked_cases_name_and_colour_a_by_what_it_is():
    case1, case3 = worked_case(1), worked_case(3)
    assert case1.a_level == 2 and "050 IN-A" in case_summary(case1) and "BIN-A" not in case_summary(case1)
    assert "050 BIN-A" in case_summary(case3)
    ax = draw_worked_case(case1).axes[0]
    names = [t.get_text() for t in ax.texts]
    assert "200 IN-A" in names and not any("BIN" in n for n in names)
    a_new = [p for p in ax.patches if isinstance(p, Rectangle)][3]  # 200 IN-A
    assert tuple(a_new.get_facecolor()[:3]) == to_rgb(colour("IN"))
    labels = [h.get_label() for h in case_legend([case1])]
    assert "IN" in labels and "BIN" not in labels and "used, yet counted obsolete" not in labels
    assert "BIN" in [h.get_label() for h in case_legend([case3])]


def test_eviction_bug_demo_and_its_control():
    on, off = eviction_bug_demo(True), eviction_bug_demo(False)
    assert on.error and "erased from the log" in on.error and off.error is None and off.records == 18  # A is empty
    assert on.erased == off.erased + 1
    explorer = eviction_bug_explorer()
    assert explorer.result.bug and explorer.result.error
    explorer.controls["bug"].value = False
    assert not explorer.result.bug and explorer.result.error is None


def test_crash_demo_gives_the_committed_state():
    last = len(bank_writes())
    nothing = logstore_crash_demo(last, "nothing")
    assert nothing.records == FINAL  # ivan was never synced; erin's loser write undone; dave deleted
    everything = logstore_crash_demo(last, "everything")
    assert everything.records == {**FINAL, b"ivan": b"90"}
    assert logstore_crash_demo(1, "nothing").records == {}
    assert [p.name for p in nothing.phases][-1] == "checkpoint" and len(nothing.phases) == 11
    assert nothing.phases[0].picture is None or nothing.phases[0].name == "find the end of the log"
    assert "records after recovery" in nothing.summary()


def test_crash_demo_every_point_keeps_committed_writes():
    for k in range(1, len(bank_writes()) + 1):
        for keep in ("nothing", "torn", "everything"):
            records = logstore_crash_demo(k, keep).records
            assert b"erin" not in records or records[b"erin"] == b"5"  # the loser never shows
            if b"alice" in records:
                assert records[b"alice"] in (b"100", b"70")


def test_crash_demo_rejects_bad_arguments():
    with pytest.raises(ValueError, match="after_write must be between 1 and"):
        logstore_crash_demo(0)
    with pytest.raises(ValueError, match="keep must be one of"):
        logstore_crash_demo(1, "some")
    with pytest.raises(ValueError, match="phase must be between"):
        logstore_crash_demo(1, "nothing", 99)


def test_explorers_are_driven_by_their_controls():
    explorer = logstore_crash_explorer()
    explorer.controls["after_write"].value = len(bank_writes())
    explorer.controls["keep"].value = "everything"
    explorer.controls["phase"].value = 7
    result = explorer.result
    assert (result.after_write, result.keep, result.phase) == (len(bank_writes()), "everything", 7)
    assert result.phases[7].name == "redo LNs" and b"ivan" in result.records
    trees = tree_explorer()
    trees.controls["step"].value = 3
    assert trees.result.step == 3 and trees.result.operation == "put carol=75"


def test_explorers_take_an_edited_script():
    short = [("put", "alice", "1"), ("begin", "T1"), ("txn_put", "T1", "bob", "2"), ("commit", "T1")]
    trees = tree_explorer(short)
    assert trees.controls["step"].max == 4 and trees.result.operation == "commit T1"
    trees.controls["step"].value = 1
    assert trees.result.env.database("accounts").get("alice") == b"1"
    crash = logstore_crash_explorer(short)
    assert crash.controls["after_write"].max == len(bank_writes(short))
    crash.controls["phase"].value = 10
    assert crash.result.records == {}  # the crash comes after the commit's write, before its fsync
    crash.controls["keep"].value = "everything"
    assert crash.result.records == {b"alice": b"1", b"bob": b"2"}
    with pytest.raises(ScriptError, match="step 2"):
        tree_explorer([("put", "a", "1"), ("abort", "T1")])


def test_the_gallery_lists_the_log_store_pictures():
    assert {"logstore_tree.png", "logstore_utilization.png", "logstore_dirty_map.png", "logstore_checkpoint.png",
            "logstore_worked_cases.png", "logstore_recovery.png"} <= set(FIGURES)
    assert isinstance(FIGURES["logstore_dirty_map.png"](), Figure)


def test_log_cells_name_their_nodes_and_records_instead_of_lines_into_the_log():
    from matplotlib.patches import ConnectionPatch

    picture = tree_step(len(SCRIPT)).picture
    fig = draw_tree_and_log(picture)
    assert not any(isinstance(a, ConnectionPatch) for a in fig.artists)  # no lines to tangle
    written = [t.get_text() for t in fig.axes[1].texts]
    for node in picture.view.nodes():
        if not node.lsn.is_null:
            assert str(node.node_id) in written
    assert "bob" in written  # a record's key in its LN's cell (where it fits)
