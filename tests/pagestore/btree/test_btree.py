"""B+tree operations, splits, scans, logical undo, nested top actions and restart, on 512-byte pages."""

import pytest

import minidb.pagestore.btree.btree as btree_module
from minidb.io import CrashMode
from minidb.pagestore import BadRequestError, DuplicateKeyError, KeyNotFoundError, PageId, check_tree
from minidb.pagestore.btree.keyed import KeyedPage, max_entry
from minidb.pagestore.buffer.latch import EX, SH

from tests.pagestore.sm_helpers import entries, new_sm, open_again, reopen


def filled(sm, n=120, unique=True, el=b"e" * 20, desc="i4"):
    with sm.transaction() as t:
        ix = sm.create_index(t, desc, unique)
        for k in range(n):
            sm.index_insert(t, ix, k * 10, el)
    return ix


def root_page(sm, ix):
    page = sm.bp.fix(sm.indexes.index(ix).root, SH)
    try:
        return KeyedPage(page).level, KeyedPage(page).count
    finally:
        sm.bp.unfix(page)


def test_insert_lookup_update_remove():
    sm = new_sm()
    with sm.transaction() as t:
        ix = sm.create_index(t, "str")
        sm.index_insert(t, ix, "pear", b"1")
        sm.index_insert(t, ix, "apple", b"2")
        assert sm.index_lookup(t, ix, "pear") == [b"1"] and sm.index_lookup(t, ix, "plum") == []
        assert sm.index_update(t, ix, "pear", b"3") == b"1"
        assert sm.index_lookup(t, ix, "pear") == [b"3"]
        assert sm.index_remove(t, ix, "apple") == b"2"
        assert list(sm.index_scan(t, ix)) == [("pear", b"3")]
        assert sm.indexes.indexes() == [ix]
    assert sm.indexes.check(ix) == []


def test_bad_requests_change_nothing():
    sm = new_sm()
    ix = filled(sm, 5)
    with sm.transaction() as t:
        last = t.last_lsn
        with pytest.raises(DuplicateKeyError, match="already holds key"):
            sm.index_insert(t, ix, 10, b"x")
        with pytest.raises(KeyNotFoundError, match="holds no key"):
            sm.index_remove(t, ix, 11)
        with pytest.raises(KeyNotFoundError):
            sm.index_update(t, ix, 11, b"x")
        with pytest.raises(BadRequestError, match=f"1 to {max_entry(512)} bytes"):
            sm.index_insert(t, ix, 12, b"x" * max_entry(512))
        with pytest.raises(BadRequestError, match="element is bytes"):
            sm.index_insert(t, ix, 12, "x")
        with pytest.raises(BadRequestError, match="is not an index"):
            sm.index_lookup(t, PageId(1, 1, 0).stid, 1)
        assert t.last_lsn == last
    with sm.transaction() as t:
        assert [k for k, _ in sm.index_scan(t, ix)] == [0, 10, 20, 30, 40]


def test_splits_grow_the_tree_from_a_root_that_stays_put():
    sm = new_sm(num_pages=256)
    ix = filled(sm, 400)
    root = sm.indexes.index(ix).root
    level, _ = root_page(sm, ix)
    assert level >= 3  # two levels of splits on 512-byte pages
    problems, found = check_tree(sm.bp, root, True)
    assert problems == [] and len(found) == 400
    with sm.transaction() as t:
        assert sm.indexes.index(ix).root == root
        assert [k for k, _ in sm.index_scan(t, ix)] == [k * 10 for k in range(400)]
    names = [e.type_name for e in entries(sm)]
    assert {"page_link", "btree_header", "page_insert", "page_remove"} <= set(names)


@pytest.mark.parametrize("backward", [False, True])
def test_range_scans_with_every_kind_of_bound(backward):
    sm = new_sm(num_pages=256)
    ix = filled(sm, 150)
    keys = [k * 10 for k in range(150)]
    with sm.transaction() as t:
        for lo in (None, -5, 0, 15, 20, 700, 1490, 2000):
            for hi in (None, -1, 0, 20, 25, 700, 1490, 5000):
                for lo_incl in (True, False):
                    for hi_incl in (True, False):
                        want = [k for k in keys if (lo is None or k > lo or (lo_incl and k == lo))
                                and (hi is None or k < hi or (hi_incl and k == hi))]
                        got = [k for k, _ in sm.index_scan(t, ix, lo, hi, lo_incl, hi_incl, backward)]
                        assert got == (want[::-1] if backward else want), (lo, hi, lo_incl, hi_incl)


def test_scans_pass_over_empty_leaves():
    """Removes are lazy: leaves emptied stay in the tree; scans and lookups go past them."""
    sm = new_sm(num_pages=256)
    ix = filled(sm, 150)
    with sm.transaction() as t:
        for k in range(20, 120):
            sm.index_remove(t, ix, k * 10)
    with sm.transaction() as t:
        want = [k * 10 for k in list(range(20)) + list(range(120, 150))]
        assert [k for k, _ in sm.index_scan(t, ix)] == want
        assert [k for k, _ in sm.index_scan(t, ix, backward=True)] == want[::-1]
        assert [k for k, _ in sm.index_scan(t, ix, lo=500, hi=1300)] == [1200, 1210, 1220, 1230, 1240, 1250, 1260,
                                                                          1270, 1280, 1290, 1300]
    assert sm.indexes.check(ix) == []


def test_a_non_unique_index_orders_equal_keys_by_element():
    sm = new_sm(num_pages=256)
    with sm.transaction() as t:
        ix = sm.create_index(t, "u2,str", unique=False)
        for n in range(60):
            for el in (b"c", b"a", b"b"):
                sm.index_insert(t, ix, (n % 4, "k"), el + bytes([n]))
        assert sm.index_lookup(t, ix, (1, "k"))[:3] == [b"a\x01", b"a\x05", b"a\x09"]
        with pytest.raises(DuplicateKeyError, match="with element"):
            sm.index_insert(t, ix, (1, "k"), b"a\x01")
        with pytest.raises(BadRequestError, match="removes a key with its element"):
            sm.index_remove(t, ix, (1, "k"))
        assert sm.index_remove(t, ix, (1, "k"), b"a\x05") == b"a\x05"
        assert sm.index_update(t, ix, (2, "k"), b"z", old_el=b"b\x02") == b"b\x02"
        got = list(sm.index_scan(t, ix, lo=(2, "k"), hi=(2, "k")))
        assert [e for _, e in got] == sorted(e for _, e in got) and got[-1] == ((2, "k"), b"z") and len(got) == 45
        assert len(list(sm.index_scan(t, ix))) == 179
    assert sm.indexes.check(ix) == []


def test_rollback_keeps_the_split_and_removes_the_key_where_it_lives_now():
    sm = new_sm(num_pages=256)
    ix = filled(sm, 4)
    t1 = sm.begin()
    sm.index_insert(t1, ix, 35, b"T1")
    inserted = [e for e in entries(sm, ("btree_insert",)) if e.txn_id == t1.txn_id][0]
    with sm.transaction() as t2:  # fills the leaf: splits move key 35 off the root
        for k in range(36, 300):
            sm.index_insert(t2, ix, k, b"e" * 20)
    levels = root_page(sm, ix)
    pages = len(sm.volume.store_pages(ix))
    sm.abort(t1)
    removed = [e for e in entries(sm, ("btree_remove",)) if e.txn_id == t1.txn_id]
    assert len(removed) == 1 and removed[0].values["key"] == inserted.values["key"]
    assert removed[0].values["page"] != inserted.values["page"]  # logical undo, on another page
    assert root_page(sm, ix) == levels and len(sm.volume.store_pages(ix)) == pages  # the splits stay
    with sm.transaction() as t:
        assert sm.index_lookup(t, ix, 35) == [] and len(list(sm.index_scan(t, ix))) == 4 + 264
    assert sm.indexes.check(ix) == []


def test_rolling_back_its_own_splits_keeps_them_but_takes_every_key_out():
    sm = new_sm(num_pages=256)
    ix = filled(sm, 3)
    with sm.transaction() as t:
        point = sm.save_point(t)
        for k in range(100, 400):
            sm.index_insert(t, ix, k, b"e" * 20)
        steps = sm.rollback_to(t, point)
        assert any(s.action == "jumped" for s in steps)  # over the splits' compensate entries
        assert [k for k, _ in sm.index_scan(t, ix)] == [0, 10, 20]
    assert root_page(sm, ix)[0] >= 2 and sm.indexes.check(ix) == []


def test_undoing_a_remove_may_split():
    sm = new_sm(num_pages=256)
    ix = filled(sm, 8)
    t1 = sm.begin()
    for k in range(8):
        sm.index_remove(t1, ix, k * 10)
    with sm.transaction() as t2:
        for k in range(1, 10):
            sm.index_insert(t2, ix, k, b"e" * 20)
    before = len(sm.volume.store_pages(ix))
    sm.abort(t1)  # re-inserting 8 keys into a full leaf splits it
    assert len(sm.volume.store_pages(ix)) > before
    with sm.transaction() as t:
        assert len(list(sm.index_scan(t, ix))) == 17
    assert sm.indexes.check(ix) == []


def test_a_crash_in_the_middle_of_a_split_is_undone_first_at_restart(monkeypatch):
    sm = new_sm(num_pages=256)
    ix = filled(sm, 8)
    t1 = sm.begin()
    sm.index_insert(t1, ix, 5, b"e" * 20)
    calls = []

    def crash_on_second_link(volume, xct, page, prev, nxt):
        calls.append(page.pid)
        if len(calls) == 2:
            volume.log.sync()
            raise RuntimeError("power cut")
        return real_link(volume, xct, page, prev, nxt)

    real_link = btree_module.log_link
    monkeypatch.setattr(btree_module, "log_link", crash_on_second_link)
    with pytest.raises(RuntimeError):
        for k in range(100, 200):
            sm.index_insert(t1, ix, k, b"e" * 20)
    monkeypatch.undo()
    disk = sm.disk
    disk.crash(CrashMode.nothing())
    sm = open_again(disk)
    order = [(tid, step.type_name) for tid, step in sm.restart_report.undo.steps if step.action == "undone"]
    first_logical = next(i for i, (_, name) in enumerate(order) if name == "btree_insert")
    assert {"page_insert", "page_link"} <= {name for _, name in order[:first_logical]}
    with sm.transaction() as t:
        assert [k for k, _ in sm.index_scan(t, ix)] == [k * 10 for k in range(8)]
    assert sm.indexes.check(ix) == []


def test_restart_redoes_committed_inserts_and_undoes_the_losers():
    sm = new_sm(num_pages=256)
    ix = filled(sm, 200)
    loser = sm.begin()
    for k in range(200, 300):
        sm.index_insert(loser, ix, k * 10, b"L")
    sm.log.sync()
    sm = reopen(sm)
    with sm.transaction() as t:
        assert [k for k, _ in sm.index_scan(t, ix)] == [k * 10 for k in range(200)]
    assert sm.indexes.check(ix) == []


def test_an_aborted_creation_leaves_no_index_and_destroy_drops_one():
    sm = new_sm()
    t = sm.begin()
    ix = sm.create_index(t, "i4")
    sm.index_insert(t, ix, 1, b"x")
    sm.abort(t)
    assert sm.indexes.indexes() == []
    ix = filled(sm, 3)
    with sm.transaction() as t:
        sm.destroy_index(t, ix)
        with pytest.raises(BadRequestError, match="not an index"):
            sm.index_lookup(t, ix, 1)
    assert sm.indexes.indexes() == [] and ix.store not in [s.store for s in sm.volume.stores()]


def test_the_checker_finds_broken_links_order_and_levels():
    sm = new_sm(num_pages=256)
    ix = filled(sm, 60)
    root = sm.indexes.index(ix).root
    assert check_tree(sm.bp, root, True)[0] == []
    page = sm.bp.fix(root, SH)
    leaf = KeyedPage(page).children()[1]
    sm.bp.unfix(page)
    page = sm.bp.fix(PageId(1, root.store, leaf), EX)
    page.next = 0
    sm.bp.unfix(page)
    assert any("leaf links" in p for p in check_tree(sm.bp, root, True)[0])
    page = sm.bp.fix(root, EX)
    page.buf[page.slot_entry(0)[0]] = 5  # the root's level
    sm.bp.unfix(page)
    assert any("level" in p for p in check_tree(sm.bp, root, True)[0])


def test_an_error_in_the_middle_of_a_split_rolls_the_operation_back(monkeypatch):
    from minidb.pagestore.errors import VolumeError

    sm = new_sm(num_pages=256)
    ix = filled(sm, 8)
    real_link = btree_module.log_link

    def failing_link(volume, xct, page, prev, nxt):
        raise VolumeError("no room (a test)")

    with sm.transaction() as t:
        sm.index_insert(t, ix, 1, b"kept")
        monkeypatch.setattr(btree_module, "log_link", failing_link)
        with pytest.raises(VolumeError):
            for k in range(100, 200):
                sm.index_insert(t, ix, k, b"e" * 20)
        monkeypatch.setattr(btree_module, "log_link", real_link)
        assert sm.indexes.check(ix) == []
        keys = [k for k, _ in sm.index_scan(t, ix)]
        done = len(keys) - 9  # the inserts before the one that failed stay
        assert keys == [0, 1] + [k * 10 for k in range(1, 8)] + list(range(100, 100 + done))
        assert sm.indexes.entries(ix) == list(sm.index_scan(t, ix))
    assert sm.indexes.check(ix) == []


LONE = "\ud800"


@pytest.mark.parametrize("call", [
    lambda sm, t, ix: sm.index_insert(t, ix, "a" + LONE, b"1"),
    lambda sm, t, ix: sm.index_lookup(t, ix, LONE),
    lambda sm, t, ix: sm.index_remove(t, ix, LONE),
    lambda sm, t, ix: sm.index_update(t, ix, LONE, b"2"),
    lambda sm, t, ix: list(sm.index_scan(t, ix, lo=LONE)),
    lambda sm, t, ix: list(sm.index_scan(t, ix, hi=LONE)),
    lambda sm, t, ix: sm.create_index(t, "str", name=LONE),
    lambda sm, t, ix: sm.bulk_load_index(t, "str", [("a", b"1"), (LONE, b"2")]),
    lambda sm, t, ix: sm.find_index(LONE, t),
], ids=["insert", "lookup", "remove", "update", "scan-lo", "scan-hi", "index-name", "bulk-load", "find-index"])
def test_a_str_key_without_utf8_is_a_user_error_naming_it_and_changes_nothing(call):
    """A lone surrogate has no UTF-8 form: the page store says so, as the log store does, before any change."""
    sm = new_sm()
    with sm.transaction() as t:
        ix = sm.create_index(t, "i4,str", name="fruit")
        sm.index_insert(t, ix, (1, "pear"), b"1")
    with sm.transaction() as t:
        ix2 = sm.create_index(t, "str")
        sm.index_insert(t, ix2, "apple", b"1")

    def state():
        with sm.transaction() as t:
            return list(sm.index_scan(t, ix)), list(sm.index_scan(t, ix2)), sm.index_names()

    before = state()
    t = sm.begin()
    with pytest.raises(BadRequestError, match=r"key field str '.*\\ud800' is not valid Unicode: surrogates not allowed"):
        call(sm, t, ix2)
    with pytest.raises(BadRequestError, match="is not valid Unicode"):
        sm.index_insert(t, ix, (2, LONE), b"2")  # a compound key's str field too
    sm.commit(t)
    assert state() == before
