"""Bulk loading: a loaded tree equals the tree built by inserts; bad input leaves nothing; LOAD logging; crashes."""

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from minidb.io import CrashMode, crash_points
from minidb.pagestore import BadRequestError, DuplicateKeyError
from minidb.pagestore.btree.bulkload import UnsortedInputError
from minidb.pagestore.btree.keyed import KeyedPage
from minidb.pagestore.buffer.latch import SH
from minidb.pagestore.pages.page import StoreFlags
from minidb.pagestore.verify import verify_pagestore

from tests.pagestore.sm_helpers import entries, new_sm, open_again, reopen


def element(k: int, size: int = 30) -> bytes:
    return (b"%d:" % k * size)[:size]


def leaves_full(sm, ix) -> list[int]:
    """The leaves' entry counts, in key order."""
    root = sm.indexes.index(ix).root
    counts, page = [], sm.bp.fix(root, SH)
    while not KeyedPage(page).is_leaf:
        child = KeyedPage(page).pid0
        sm.bp.unfix(page)
        page = sm.bp.fix(root.__class__(root.vol, root.store, child), SH)
    while True:
        counts.append(KeyedPage(page).count)
        nxt = page.next
        sm.bp.unfix(page)
        if not nxt:
            return counts
        page = sm.bp.fix(root.__class__(root.vol, root.store, nxt), SH)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(keys=st.lists(st.integers(-2**40, 2**40), max_size=400, unique=True),
       unique=st.booleans(), page_size=st.sampled_from([512, 1024]), fill=st.sampled_from([0.3, 0.7, 0.9, 1.0]),
       dups=st.integers(1, 3), size=st.integers(1, 60))
def test_a_loaded_tree_equals_the_tree_built_by_inserts(keys, unique, page_size, fill, dups, size):
    pairs = sorted((k, element(k + j, size)) for k in keys for j in range(1 if unique else dups))
    pairs = sorted(set(pairs))
    sm = new_sm(num_pages=1024, page_size=page_size, frames=16)
    with sm.transaction() as t:
        loaded, report = sm.bulk_load_index(t, "i8", iter(pairs), unique=unique, fill=fill)
        built = sm.create_index(t, "i8", unique=unique)
        for k, el in pairs:
            sm.index_insert(t, built, k, el)
    assert report.rows == len(pairs)
    assert sm.indexes.check(loaded) == [] and sm.indexes.check(built) == []
    with sm.transaction() as t:
        for ix in (loaded, built):
            assert list(sm.index_scan(t, ix)) == pairs
            assert list(sm.index_scan(t, ix, backward=True)) == pairs[::-1]
        if pairs:
            lo, hi = pairs[len(pairs) // 4][0], pairs[3 * len(pairs) // 4][0]
            assert list(sm.index_scan(t, loaded, lo, hi, lo_incl=False)) == \
                list(sm.index_scan(t, built, lo, hi, lo_incl=False))
        for k in keys[:20] + [2**41]:
            assert sm.index_lookup(t, loaded, k) == sm.index_lookup(t, built, k)
    counts = leaves_full(sm, loaded)
    assert len(counts) == report.leaves and sum(counts) == len(pairs)


def test_leaves_are_filled_to_the_fill_factor_and_the_levels_built_bottom_up():
    sm = new_sm(num_pages=512)
    with sm.transaction() as t:  # the worked example of the module documentation
        ix, report = sm.bulk_load_index(t, "u4", ((k, b"e" * 40) for k in range(100)))
    assert (report.leaves, report.pages, report.height) == (15, 16, 2)
    assert leaves_full(sm, ix) == [7] * 14 + [2]
    with sm.transaction() as t:
        ix, report = sm.bulk_load_index(t, "u4", ((k, b"e" * 40) for k in range(100)), fill=0.5)
    assert leaves_full(sm, ix) == [4] * 25 and report.height == 3 and sm.indexes.check(ix) == []
    with sm.transaction() as t:
        ix, report = sm.bulk_load_index(t, "u4", ((k, b"e" * 40) for k in range(5)))
    assert (report.leaves, report.pages, report.height) == (1, 1, 1)  # the root is the only leaf


def test_the_load_logs_space_only_and_forces_its_pages_at_commit():
    sm = new_sm(num_pages=512)
    t = sm.begin()
    start = sm.log.end_lsn
    ix, report = sm.bulk_load_index(t, "u4", ((k, b"e" * 40) for k in range(300)), name="ix")
    logged = entries(sm, ("page_insert", "page_link", "btree_header", "btree_insert"), start)
    assert [e.values["store"] for e in logged] == [1, 2]  # the directory's entry and the name's, nothing of ix
    assert len([e for e in entries(sm, ("page_format",), start) if e.values["store"] == ix.store]) == report.pages
    assert sm.volume.store_node(ix.store).flags == StoreFlags.LOAD_FILE
    sm.commit(t)
    assert sm.volume.store_node(ix.store).flags == StoreFlags.REGULAR
    sm = reopen(sm, "crash")  # the pages were forced: the log need not hold their entries
    assert sm.find_index("ix") == ix and sm.indexes.check(ix) == []
    with sm.transaction() as t:
        assert [k for k, _ in sm.index_scan(t, ix)] == list(range(300))
        sm.index_insert(t, ix, 1000, b"later")  # a loaded page's first logged change logs its image first
    sm = reopen(sm, "crash")
    with sm.transaction() as t:
        assert sm.index_lookup(t, ix, 1000) == [b"later"] and len(list(sm.index_scan(t, ix))) == 301


@pytest.mark.parametrize("pairs, error, text", [
    ([(1, b"a"), (2, b"b"), (5, b"c"), (4, b"d"), (9, b"e")], UnsortedInputError,
     "key 4 at position 403 is below the one before it: the input must be sorted by key"),
    ([(1, b"a"), (2, b"b"), (2, b"c")], DuplicateKeyError, "key 2 at position 402 repeats the key before it"),
])
def test_bad_input_is_refused_naming_the_key_and_nothing_is_left(pairs, error, text):
    sm = new_sm(num_pages=1024)
    many = [(k, b"e" * 40) for k in range(-400, 0)] + pairs  # pages written before the refusal
    with sm.transaction() as t:
        kept = sm.create_index(t, "i8")
        sm.index_insert(t, kept, 7, b"kept")
        stores = set(sm.volume.stores())
        with pytest.raises(error, match=text.replace("(", r"\(")):
            sm.bulk_load_index(t, "i8", iter(many), name="ix")
        assert set(sm.volume.stores()) == stores and sm.find_index("ix") is None
        assert sm.index_lookup(t, kept, 7) == [b"kept"]  # the transaction's earlier work stays
    assert sm.check() == [] and sm.indexes.indexes() == [kept]
    verify_pagestore(sm.disk)
    with sm.transaction() as t:  # the name is free again
        ix, _ = sm.bulk_load_index(t, "i8", iter(many[:400]), name="ix")
    assert sm.find_index("ix") == ix


def test_a_non_unique_index_takes_equal_keys_sorted_by_element():
    sm = new_sm()
    with sm.transaction() as t:
        ix, _ = sm.bulk_load_index(t, "str", [("a", b"1"), ("a", b"2"), ("b", b"1")], unique=False)
        assert sm.index_lookup(t, ix, "a") == [b"1", b"2"]
        with pytest.raises(UnsortedInputError, match="key 'a' at position 1 .* sorted by key and element"):
            sm.bulk_load_index(t, "str", [("a", b"2"), ("a", b"1")], unique=False)
        with pytest.raises(DuplicateKeyError, match="key 'a' at position 1 repeats the key and element"):
            sm.bulk_load_index(t, "str", [("a", b"2"), ("a", b"2")], unique=False)


def test_other_bad_requests_change_nothing():
    sm = new_sm()
    with sm.transaction() as t:
        sm.bulk_load_index(t, "i8", [(1, b"x")], name="taken")
    stores = set(sm.volume.stores())
    with sm.transaction() as t:
        with pytest.raises(BadRequestError, match="index name 'taken' is taken"):
            sm.bulk_load_index(t, "i8", [(1, b"x")], name="taken")
        with pytest.raises(BadRequestError, match="an index name is a non-empty string, not ''"):
            sm.bulk_load_index(t, "i8", [(1, b"x")], name="")
        with pytest.raises(BadRequestError, match="fill factor 0 must be"):
            sm.bulk_load_index(t, "i8", [(1, b"x")], fill=0)
        with pytest.raises(BadRequestError, match="an element is bytes"):
            sm.bulk_load_index(t, "i8", [(1, "x")])
        with pytest.raises(BadRequestError, match="1 to 98 bytes"):
            sm.bulk_load_index(t, "i8", [(1, b"x"), (2, b"x" * 200)])

        def failing():
            yield 1, b"x"
            raise OSError("the source failed")
        with pytest.raises(OSError):
            sm.bulk_load_index(t, "i8", failing())
    assert set(sm.volume.stores()) == stores and sm.check() == []


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_crash_during_a_bulk_load_or_its_commit_leaves_all_of_it_or_none(seed):
    """Crash after every write and fsync (and torn writes) of a load and its commit; restart; check."""
    import random
    rng = random.Random(seed)
    keys = sorted(rng.sample(range(10_000), 50 + 25 * seed))
    pairs = [(k, element(k, rng.randint(10, 50))) for k in keys]
    sm = new_sm(name=f"bulk{seed}", num_pages=256, frames=8)
    with sm.transaction() as t:
        before = sm.create_index(t, "u4", name="before")
        sm.index_insert(t, before, 1, b"one")
    sm.checkpoint()
    start = len(sm.disk.events)
    t = sm.begin()
    ix, _ = sm.bulk_load_index(t, "u4", iter(pairs), name="loaded")
    sm.commit(t)
    disk = sm.disk
    seen = {"all": 0, "none": 0}
    for point in crash_points(disk, start=start, torn_variants=1, seed=seed):
        after = open_again(point.disk, frames=8)
        found = after.find_index("loaded")
        with after.transaction() as t:
            assert after.index_lookup(t, after.find_index("before"), 1) == [b"one"], point
            if found is None:
                seen["none"] += 1
                assert after.indexes.indexes() == [after.find_index("before")], point
            else:
                seen["all"] += 1
                assert list(after.index_scan(t, found)) == pairs, point
                assert after.indexes.check(found) == [], point
        assert after.check() == [], point
        after.close()
        verify_pagestore(after.disk)
    assert seen["all"] and seen["none"]
    disk.crash(CrashMode.nothing())
