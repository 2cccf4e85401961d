"""R*-trees under rollback and restart: logical undo, compensated structure changes, crashes in a split."""

import pytest

from minidb.io import SimDisk, crash_points
from minidb.log import LogManager
from minidb.pagestore import Box, StorageManager, check_rtree
from minidb.pagestore.lock import LockManager, LockTimeout

from tests.pagestore.sm_helpers import OPTIONS, new_sm, reopen

BASE = [(Box(i * 10, i * 7 % 30, i * 10 + 4, i * 7 % 30 + 3), b"base%d" % i) for i in range(9)]
MORE = [(Box(i * 3, 50 - i, i * 3 + 2, 52 - i), b"more%d" % i) for i in range(14)]


def contents(sm, ix):
    problems, found = check_rtree(sm.volume, sm.rtrees.tree(ix).root)
    assert problems == []
    return found


def with_base(sm, fanout=4):
    with sm.transaction() as t:
        ix = sm.create_rtree(t, fanout=fanout)
        for box, el in BASE:
            sm.rtree_insert(t, ix, box, el)
    return ix


def test_an_abort_restores_the_committed_index_and_keeps_the_restructuring():
    sm = new_sm()
    ix = with_base(sm)
    t = sm.begin()
    for box, el in MORE:
        sm.rtree_insert(t, ix, box, el)
    for box, el in BASE[:6]:
        sm.rtree_remove(t, ix, box, el)
    assert contents(sm, ix) == sorted(BASE[6:] + MORE)
    steps = sm.abort(t)
    assert contents(sm, ix) == sorted(BASE)
    # each logical record was undone once; each compensated action was jumped over, never undone
    undone = [s.type_name for s in steps if s.action == "undone"]
    assert sorted(undone) == sorted(["rtree_insert"] * len(MORE) + ["rtree_remove"] * 6)
    assert not any(s.type_name.startswith("rtree_page") for s in steps)


def test_rolling_back_to_a_savepoint_undoes_only_what_followed_it():
    sm = new_sm()
    ix = with_base(sm)
    t = sm.begin()
    for box, el in MORE[:7]:
        sm.rtree_insert(t, ix, box, el)
    point = sm.save_point(t)
    for box, el in MORE[7:] + BASE[:5]:
        (sm.rtree_insert if el.startswith(b"more") else sm.rtree_remove)(t, ix, box, el)
    sm.rollback_to(t, point)
    assert contents(sm, ix) == sorted(BASE + MORE[:7])
    sm.commit(t)
    assert contents(reopen(sm, "clean"), ix) == sorted(BASE + MORE[:7])


def test_restart_keeps_committed_boxes_and_drops_uncommitted_ones():
    sm = new_sm(frames=6)
    ix = with_base(sm)
    with sm.transaction() as t:
        for box, el in MORE[:5]:
            sm.rtree_insert(t, ix, box, el)
    loser = sm.begin()
    for box, el in MORE[5:]:
        sm.rtree_insert(loser, ix, box, el)
    for box, el in BASE[:4]:
        sm.rtree_remove(loser, ix, box, el)
    sm.log.flush()  # the loser's entries reach the log: restart must undo them
    sm = reopen(sm, "crash")
    assert contents(sm, ix) == sorted(BASE + MORE[:5])
    assert sm.check() == []
    t = sm.begin()
    assert sm.rtree_search(t, ix, BASE[0][0], "exact") == [BASE[0]]


def test_a_crash_at_every_write_of_a_split_restarts_to_the_committed_index():
    """One write per log entry (a one-byte log buffer): the crash points fall between every two pieces of
    the root's split and of the leaf split after it, and restart undoes the pieces of the cut split
    physically before the logical record's undo finds the new entry absent."""
    disk = SimDisk("rtree-split")
    sm = StorageManager.format(disk, num_pages=128, ext_sz=4, page_size=512, frames=16, buffer_size=1, **OPTIONS)
    with sm.transaction() as t:
        ix = sm.create_rtree(t, fanout=4)
        for box, el in BASE[:4]:  # the root leaf is full
            sm.rtree_insert(t, ix, box, el)
    start = len(disk.events)
    loser = sm.begin()
    for box, el in MORE[:6]:  # the root splits, then a leaf overflows: a reinsertion, a split
        sm.rtree_insert(loser, ix, box, el)
    assert any("splits" in s for s in sm.rtrees.trace.lines)
    cut = 0
    for point in crash_points(disk, start=start, torn_variants=1):
        log = LogManager(point.disk.clone(), readonly=True)
        names = [e.type_name for e in log.scan()]
        log.close()
        tail = names[len(names) - 1 - names[::-1].index("rtree_insert"):]  # from the last logical record on
        cut += "rtree_header" in tail and "compensate" not in tail
        restarted = StorageManager.open(point.disk, frames=16, **OPTIONS)
        assert contents(restarted, ix) == sorted(BASE[:4]), point
        assert restarted.check() == []
    assert cut >= 4  # crashes inside splits (a new page's header logged, no compensate yet)


def test_the_whole_index_is_locked_ex_to_change_and_sh_to_search():
    sm = new_sm(locking=LockManager(escalation_threshold=None))
    sm.rtrees.lock_timeout = 0
    ix = with_base(sm)
    writer, reader, other = sm.begin(), sm.begin(), sm.begin()
    sm.rtree_insert(writer, ix, (1, 1, 2, 2), b"w")
    with pytest.raises(LockTimeout):
        sm.rtree_search(reader, ix, (0, 0, 100, 100))
    with pytest.raises(LockTimeout):
        sm.rtree_insert(other, ix, (5, 5, 6, 6), b"o")  # far from the writer's box: still refused
    sm.commit(writer)
    assert (Box(1, 1, 2, 2), b"w") in sm.rtree_search(reader, ix, (0, 0, 100, 100))
    assert sm.rtree_search(other, ix, (1, 1, 2, 2), "exact") == [(Box(1, 1, 2, 2), b"w")]  # readers share
    with pytest.raises(LockTimeout):
        sm.rtree_remove(other, ix, (1, 1, 2, 2), b"w")  # the reader's SH holds off a writer until it ends
    sm.commit(reader)
    sm.rtree_remove(other, ix, (1, 1, 2, 2), b"w")
    sm.commit(other)


def test_a_named_rtree_is_found_by_name_checked_by_verify_and_destroyed():
    sm = new_sm()
    with sm.transaction() as t:
        ix = sm.create_rtree(t, name="map", fanout=5)
        for box, el in BASE + MORE:
            sm.rtree_insert(t, ix, box, el)
    assert sm.find_index("map") == ix and sm.rtrees.rtrees() == [ix]
    from minidb.pagestore.directory import check_directory
    assert check_directory(sm.volume, sm.directory, sm.root_index) == []
    with sm.transaction() as t:
        sm.destroy_rtree(t, ix)
    assert sm.find_index("map") is None and sm.rtrees.rtrees() == []
    assert check_directory(sm.volume, sm.directory, sm.root_index) == []


def test_check_rtree_reports_a_box_larger_than_its_child():
    sm = new_sm()
    ix = with_base(sm)
    tree = sm.rtrees.tree(ix)
    root = tree.read(tree.root.page)
    assert root.level == 2
    with sm.transaction() as t:  # a box one unit too wide, written as a structure piece would be
        loose = Box(root.entries[0].box.xlo - 1, *root.entries[0].box[1:])
        tree._replace(t, root, 0, type(root.entries[0]).node(loose, root.entries[0].child))
    problems, _ = check_rtree(sm.volume, tree.root)
    assert len(problems) == 1 and "is not the union of its entries" in problems[0]
