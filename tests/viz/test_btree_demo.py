"""The B+tree demo of notebook 07: its default script, edited scripts, bad scripts, the pictures, the control."""

import ast
import json

import pytest

from minidb.viz.btree import smo_spans, tree_graph
from minidb.viz.btree_demo import (
    LOAD_SCRIPT,
    LOCKS_SCRIPT,
    OPS,
    SCRIPT,
    btree_explorer,
    btree_step,
    run_script,
    show_step,
)
from minidb.viz.script import ScriptError

from tests.viz.helpers import ROOT
from tests.viz.test_readability import graphviz_problems, problems


def step_of(op, script=SCRIPT) -> int:
    return list(script).index(op) + 1


def edited(old, new, script=SCRIPT) -> list[tuple]:
    return [new if op == old else op for op in script]


def layout(step: int, script=SCRIPT) -> dict[int, tuple]:
    """Page number -> its keys, after ``step`` steps."""
    return {p.number: p.keys for p in btree_step(step, script, draw=False).picture.pages}


@pytest.mark.parametrize("name, script", [("script", SCRIPT), ("locks_script", LOCKS_SCRIPT),
                                          ("load_script", LOAD_SCRIPT)])
def test_the_notebook_shows_the_scripts(name, script):
    cells = json.loads((ROOT / "notebooks" / "07_btree.ipynb").read_text(encoding="utf-8"))["cells"]
    [cell] = [c for c in cells if c["cell_type"] == "code" and "".join(c["source"]).startswith(f"{name} = [")]
    assert ast.literal_eval(ast.parse("".join(cell["source"])).body[0].value) == script


# -- key-value locks and bulk load ---------------------------------------------------------------------------------
def test_a_scan_locks_its_keys_and_the_next_and_an_insert_into_its_range_waits():
    waits = step_of(("insert", "T3", 35, "phantom?"), LOCKS_SCRIPT)
    demo = run_script(LOCKS_SCRIPT, waits)
    assert demo.locks() == {k: [("T2", "SH")] for k in (20, 30, 40, 50)}
    assert demo.outcomes[-1].endswith("T3 waits: it needs the key-value lock of 40, which T2 (SH) holds")
    assert 35 not in demo.entries() and demo.waiting == {"T3": ("insert", "T3", 35, "phantom?")}
    end = run_script(LOCKS_SCRIPT)
    assert end.outcomes[12].endswith("T2 scans 20..40: [20, 30, 40]")  # no phantom
    assert end.outcomes[13].endswith("T2 commits; then T3 goes on: T3 inserts 35")
    assert 35 in end.entries() and end.check()[0] == [] and end.waiting == {}
    with pytest.raises(ScriptError, match=r"step 13 .*T3 waits for a lock"):
        run_script([*LOCKS_SCRIPT[:waits], ("insert", "T3", 36, "x")])


def test_an_insert_outside_the_scanned_keys_does_not_wait():
    script = edited(("insert", "T3", 35, "phantom?"), ("insert", "T3", 65, "x"), LOCKS_SCRIPT)
    demo = run_script(script, step_of(("insert", "T3", 65, "x"), script))
    assert demo.outcomes[-1].endswith("T3 inserts 65") and demo.waiting == {}


def test_the_bulk_load_fills_leaves_to_the_fill_factor_and_builds_the_root_above():
    step = btree_step(len(LOAD_SCRIPT), LOAD_SCRIPT)
    assert step.demo.outcomes[1].endswith("bulk-loads 28 keys: 4 leaves, 5 pages, height 2")
    assert [p.keys for p in step.picture.leaves()] == [tuple(range(s, s + 70, 10)) for s in (10, 80, 150, 220)]
    assert step.picture.pages[0].keys == (80, 150, 220) and step.demo.check()[0] == []
    leaves_only = tree_graph(step.picture, levels=1).source
    assert f"p{step.picture.root} (root)" not in leaves_only and "p17 level 1" in leaves_only
    half = run_script(edited(("bulk_load", "T1", 28, 0.9), ("bulk_load", "T1", 28, 0.5), LOAD_SCRIPT))
    assert half.outcomes[1].endswith("7 leaves, 8 pages, height 2")
    with pytest.raises(ScriptError, match=r"step 2 .*fill factor 'x' must be a number"):
        run_script([("begin", "T1"), ("bulk_load", "T1", 28, "x")])


# -- the default script: what the notebook shows ------------------------------------------------------------------
def test_eight_keys_fill_the_root_a_leaf():
    pic = btree_step(10, draw=False).picture
    assert pic.height == 1 and [p.number for p in pic.pages] == [pic.root] == [12]
    assert pic.keys() == list(range(10, 90, 10))


def test_the_root_grows_in_place_and_its_new_child_splits():
    step = btree_step(step_of(("insert", "T2", 90, "i")))
    assert step.picture.root == 12 and step.picture.height == 2
    assert layout(step.step) == {12: (50,), 13: (10, 20, 30, 40), 14: (50, 60, 70, 80, 90)}
    assert (step.picture.page(13).prev, step.picture.page(13).next) == (0, 14)
    assert (step.picture.page(14).prev, step.picture.page(14).next) == (13, 0)
    spans = smo_spans(step.rows, step.picture.pages[0] and _root(step))
    assert [s.label for s in spans] == ["the root grows", "a split"]
    assert all(step.rows[s.compensate].type_name == "compensate" for s in spans)
    assert step.rows[-1].type_name == "btree_insert" and step.rows[-1].page.page == 14
    assert step.changed == (12, 13, 14)


def _root(step):
    from minidb.pagestore.ids import PageId

    index = step.demo.index
    return PageId(index.vol, index.store, step.picture.root)


def test_a_leaf_split_moves_an_uncommitted_key_to_the_new_page():
    before = layout(step_of(("insert", "T3", 115, "rolled back")))
    assert before[14] == (50, 60, 70, 80, 90, 100, 110, 115)
    after = btree_step(step_of(("insert", "T4", 120, "l")), draw=False)
    assert layout(after.step) == {12: (50, 90), 13: (10, 20, 30, 40), 14: (50, 60, 70, 80),
                                  15: (90, 100, 110, 115, 120)}
    assert [s.label for s in smo_spans(after.rows, _root(after))] == ["a split"]


def test_the_rollback_keeps_the_split_and_removes_the_key_where_it_is_now():
    insert_step = step_of(("insert", "T3", 115, "rolled back"))
    [named] = [r for r in btree_step(insert_step, draw=False).rows if r.type_name == "btree_insert"]
    assert named.page.page == 14
    step = btree_step(step_of(("abort", "T3")), draw=False)
    assert layout(step.step)[15] == (90, 100, 110, 120) and 15 in layout(step.step)
    [undo] = [r for r in step.rows if r.type_name == "btree_remove"]
    assert undo.page.page == 15  # not the page the btree_insert named
    assert 115 not in step.demo.entries()


def test_removes_leave_an_empty_leaf_linked():
    step = btree_step(step_of(("commit", "T5")), draw=False)
    assert layout(step.step)[13] == () and step.picture.page(13).next == 14
    assert step.demo.outcomes[step_of(("lookup", "T5", 20)) - 1].endswith("looks up 20: not there")
    assert step.demo.outcomes[step_of(("scan", "T5", 1, 60)) - 1].endswith("scans 1..60: [50, 60]")
    assert step.demo.check()[0] == []


def test_a_crash_in_the_middle_of_a_split_is_repaired_by_restart():
    crash = step_of(("crash_in_split", "T6", 170, "q", 6))
    cut = btree_step(crash, draw=False)
    assert cut.picture is None and cut.demo.crashed
    end = btree_step(len(SCRIPT))
    rows = end.rows
    assert [r.type_name for r in rows[:6]] == ["create_ext_list", "alloc_pages_in_ext", "page_format",
                                               "btree_header", "page_insert", "page_link"]
    assert "compensate" not in [r.type_name for r in rows[:6]]
    undone = [r.type_name for r in rows[6:]]
    assert undone.index("free_pages_in_ext") < undone.index("btree_remove")  # the SMO first, then logical undo
    assert undone.count("btree_remove") == 4 and "xct_end" in undone
    assert end.demo.check()[0] == []
    assert end.demo.entries() == end.demo.committed == {k: v for k, v in zip(
        [50, 60, 70, 80, 90, 100, 110, 120], "efghijkl", strict=True)}
    assert layout(end.step) == layout(step_of(("commit", "T5")))
    assert "check_tree: sound" in end.summary() and "losers rolled back: T6" in end.summary()


# -- edited scripts --------------------------------------------------------------------------------------------
def test_if_t3_commits_instead_its_key_stays():
    script = edited(("abort", "T3"), ("commit", "T3"))
    demo = run_script(script, step_of(("commit", "T3"), script))
    assert 115 in demo.entries() and demo.check()[0] == []
    with pytest.raises(ScriptError, match=r"step 36 .*the leaf for 170 has room"):  # 160 split the leaf already
        run_script(script)


def test_if_t6_commits_before_the_crash_its_keys_survive():
    script = [*SCRIPT[:step_of(("insert", "T6", 160, "p"))], ("commit", "T6"), ("begin", "T7"),
              ("crash_in_split", "T7", 170, "q", 2), ("restart",)]
    demo = run_script(script)
    assert {130, 140, 150, 160} <= set(demo.entries()) and 170 not in demo.entries()
    assert demo.check()[0] == []


def test_a_plain_crash_and_restart():
    script = [*SCRIPT[:step_of(("insert", "T3", 115, "rolled back"))], ("crash",), ("restart",)]
    demo = run_script(script)
    assert demo.entries() == {k: v for k, v in zip(range(10, 120, 10), "abcdefghijk", strict=True)}


def test_more_keys_make_the_tree_grow_a_level():
    script = [("begin", "T1"), *[("insert", "T1", k, "v") for k in range(1, 170)], ("commit", "T1")]
    step = btree_step(len(script), script, draw=False)
    assert step.picture.height == 3 and step.picture.root == 12 and step.demo.check()[0] == []


# -- bad scripts -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op, why", [
    (("commit", "T9"), "step 2 ('commit', 'T9'): no transaction T9 has begun"),
    (("insert", "T1", "ten", "x"), "a key is a whole number"),
    (("insert", "T1", 10, "x" * 41), "a value is a string of 1 to 40 bytes"),
    (("remove", "T1", 99), "step 2 ('remove', 'T1', 99): "),
    (("crash_in_split", "T1", 10, "x", 3), "the leaf for 10 has room"),
    (("crash_in_split", "T1", 10, "x", 9), "pieces is how many"),
    (("restart",), "the disk has not crashed"),
    (("frobnicate",), "unknown operation 'frobnicate'"),
])
def test_a_bad_step_is_a_script_error_naming_it(op, why):
    with pytest.raises(ScriptError, match=__import__("re").escape(why)):
        run_script([("begin", "T1"), op])


def test_a_step_after_a_crash_needs_a_restart_and_a_duplicate_is_named():
    with pytest.raises(ScriptError, match=r"step 3 \('begin', 'T2'\): the disk crashed"):
        run_script([("begin", "T1"), ("crash",), ("begin", "T2")])
    with pytest.raises(ScriptError, match=r"step 3 .*already holds key"):
        run_script([("begin", "T1"), ("insert", "T1", 1, "a"), ("insert", "T1", 1, "b")])
    with pytest.raises(ScriptError, match=r"step 3 .*T1 has already committed"):
        run_script([("begin", "T1"), ("commit", "T1"), ("commit", "T1")])


def test_the_operations_table_names_every_operation():
    assert set(OPS) == {"begin", "insert", "remove", "lookup", "scan", "commit", "abort", "bulk_load", "checkpoint",
                        "crash", "crash_in_split", "restart"}


# -- pictures and the control ----------------------------------------------------------------------------------
def test_the_tree_picture_shows_pages_keys_levels_and_both_links():
    step = btree_step(step_of(("insert", "T4", 120, "l")))
    svg = step.figure.pipe(format="svg").decode()
    for text in ("p12 (root) level 2", "p15 level 1", "115", "inf", "next", "prev"):
        assert text in svg, text
    assert svg.count(">next<") == 2 and svg.count(">prev<") == 2  # two pairs of neighbours, both ways
    assert graphviz_problems(step.figure) == []
    assert problems(step.log_figure) == []


def test_the_changed_pages_are_filled():
    pic = btree_step(10, draw=False).picture
    assert "#fff59d" in tree_graph(pic, changed=[12]).source and "#fff59d" not in tree_graph(pic).source


def test_the_explorer_is_driven_from_code_with_an_edited_script(capsys):
    script = [("begin", "T1"), *[("insert", "T1", k, "v") for k in range(1, 12)]]
    explorer = btree_explorer(script)
    assert explorer.controls["step"].max == len(script) and explorer.result.step == len(script)
    assert explorer.result.picture.height == 2
    explorer.controls["step"].value = 3
    assert explorer.result.picture.keys() == [1, 2] and explorer.result.summary() == "step  3 T1 inserts 2"
    show_step(explorer.result)
    assert "T1 inserts 2" in capsys.readouterr().out
    with pytest.raises(ScriptError):
        btree_explorer([("nope",)])


def test_show_step_while_the_disk_waits_for_restart(capsys):
    show_step(btree_step(step_of(("crash_in_split", "T6", 170, "q", 6)), draw=False))
    assert "the machine fails after 6" in capsys.readouterr().out
