"""The R*-tree demo of notebook 18 and its pictures: the default script step by step, bad scripts, the map,
the control."""

import pytest

from minidb.pagestore import Box
from minidb.viz.rtree import LEVEL_COLOURS, NodeBox, RTreePicture, draw_rtree, level_colour, node_lines, outline
from minidb.viz.rtree_demo import OPS, SCRIPT, rtree_explorer, rtree_step
from minidb.viz.script import ScriptError
from minidb.viz.widgets import show_figure_and_text

from tests.viz.test_readability import problems


def said(step: int) -> str:
    return rtree_step(step, draw=False).summary()


def test_the_root_splits_at_step_6_and_the_tree_grows():
    assert "root p16 splits" in said(6) and "grows to 2 levels" in said(6)
    picture = rtree_step(6, draw=False).picture
    assert picture.height == 2 and [n.level for n in picture.nodes] == [2, 1, 1]
    assert sorted(n.entries for n in picture.nodes[1:]) == [2, 3]


def test_forced_reinsertion_comes_before_a_split_once_per_level():
    assert "overflows: reinsert [41,54 45,58]" in said(9) and "splits" not in said(9)
    assert "reinsert" in said(12) and "p17 (level 1) splits" in said(12)
    assert said(12).index("reinsert") < said(12).index("splits")


def test_the_search_reads_only_the_nodes_whose_boxes_overlap_the_window():
    step = rtree_step(15, draw=False)
    assert "i f g; it read 2 of 5 pages" in step.summary()
    assert step.picture.query == Box(55, 5, 90, 35) and step.picture.visited == {16, 18}


def test_an_abort_undoes_the_entries_logically_and_keeps_the_dissolved_leaf_gone():
    assert "p17 (level 1) has 1 entries, fewer than 2: dissolved" in said(19)
    assert "3 logical records undone" in said(21)
    assert rtree_step(21, draw=False).demo.names() == rtree_step(13, draw=False).demo.names()


def test_a_crash_in_a_split_and_restart_give_back_the_committed_boxes():
    assert rtree_step(24, draw=False).figure is None  # the disk waits for restart
    assert "page_format, rtree_header, rtree_page_insert" in said(24)
    end = said(len(SCRIPT))
    assert end.startswith("step 25 restart undoes, newest first: rtree_page_insert, rtree_header")
    assert end.endswith("check_rtree sound; the index holds exactly the committed boxes")


def test_the_pages_a_step_changed_are_marked():
    step = rtree_step(12)
    assert set(step.changed) == {16, 17, 20}
    assert all(line.endswith("changed") == (int(line[1:3]) in step.changed)
               for line, _ in node_lines(step.picture, {}, step.changed))


@pytest.mark.parametrize("step", [0, 6, 12, 15, 21, 25])
def test_the_maps_read_at_notebook_size(step):
    assert problems(rtree_step(step).figure) == []


@pytest.mark.parametrize("bad, why", [
    (("insert", "T9", "z", 1, 1, 2, 2), "T9 has not begun"),
    (("insert", "T1", "z", 5, 1, 2, 2), "a box is four whole numbers"),
    (("search", "T1", "near", 1, 1, 2, 2), "cond is overlap, cover, inside or exact"),
    (("remove", "T1", "nobody"), "no box was ever named"),
    (("crash_in_insert", "T1", "z", 1, 1, 2, 2, 0), "pieces is how many"),
    (("restart",), "the disk has not crashed"),
    (("fly", "T1"), "unknown operation"),
])
def test_a_bad_step_names_itself(bad, why):
    with pytest.raises(ScriptError, match=why):
        rtree_step(3, [("begin", "T1"), ("insert", "T1", "a", 0, 0, 1, 1), bad], draw=False)


def test_every_operation_is_in_the_default_script():
    assert {op[0] for op in SCRIPT} == set(OPS)


def test_level_colours_and_outlines():
    assert level_colour(1) == LEVEL_COLOURS[0] and level_colour(2) != level_colour(1)
    assert len(set(LEVEL_COLOURS)) == len(LEVEL_COLOURS)
    assert outline(Box(0, 0, 10, 4), 1) == pytest.approx((-0.6, -0.6, 11.2, 5.2))
    assert outline(Box(0, 0, 10, 4), 2)[2] > outline(Box(0, 0, 10, 4), 1)[2]  # a parent's stands outside


def test_draw_rtree_draws_a_box_per_node_and_entry_and_a_point_as_a_dot():
    picture = RTreePicture(2, 1, (NodeBox(1, 2, Box(0, 0, 9, 9), 2), NodeBox(2, 1, Box(0, 0, 3, 3), 2),
                                  NodeBox(3, 1, Box(5, 5, 9, 9), 1)),
                           ((Box(0, 0, 3, 3), "a"), (Box(1, 1, 1, 1), "p"), (Box(5, 5, 9, 9), "b")))
    ax = draw_rtree(picture, "t").axes[0]
    assert len(ax.patches) == 3 + 2 and len(ax.lines) == 1  # three node outlines, two boxes, one dot


def test_the_explorer_is_driven_from_code():
    explorer = rtree_explorer()
    assert explorer.result.step == len(SCRIPT)
    explorer.controls["step"].value = 15
    assert explorer.result.picture.visited == {16, 18}
    show_figure_and_text(explorer.result)
    explorer.controls["step"].value = 24  # the crashed disk: no map, only what the step said
    assert explorer.result.figure is None
    show_figure_and_text(explorer.result)
