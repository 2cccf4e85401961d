"""The allocation protocol's locks, escalation thresholds per level and per store, and quarks.

The storage manager runs with Shore's lock manager. Layout of every test's
volume (512-byte pages, ``ext_sz`` 4): the file ``s(1.3)`` has its first page
16 in extent ``x(1.4)``; its large-record store ``s(1.4)`` starts with extent
``x(1.5)`` (pages 20-23). A chunk holds 448 bytes. Interleavings of threads
are scripted (:class:`~minidb.pagestore.lock.Interleaving`): no sleeps.
"""

import pytest

from minidb.pagestore import ExtentId, PageId, StoreId
from minidb.pagestore.errors import BadRequestError
from minidb.pagestore.lock import Interleaving, LockId, LockManager, LockMode
from minidb.pagestore.transactions.xctmgr import XctError
from minidb.pagestore.volume.volpages import AllocMode

from tests.pagestore.sm_helpers import new_sm

CHUNK = 448
LARGE = StoreId(1, 4)
IS, IX, SH, EX = LockMode.IS, LockMode.IX, LockMode.SH, LockMode.EX


def locked_sm(**lock_options):
    lm = LockManager(**{"escalation_threshold": None, "trace": True, **lock_options})
    sm = new_sm(locking=lm, trace=True)
    with sm.transaction() as t:
        fid = sm.create_file(t)
    assert fid == StoreId(1, 3) and sm.volume.store_pages(LARGE) == []
    return sm, lm, fid


def x(ext):
    return LockId.extent(ExtentId(1, ext))


def has_pages_bit(lm, ext):
    return {h.lock_id: h.has_page_alloc for h in lm.snapshot().heads}[x(ext)]


def chunks(n):
    """A body that needs ``n`` chunk pages."""
    return b"c" * (CHUNK * (n - 1) + 200)  # more than max_small_rec (128): a large record


# -- 1. the "has pages" bit --------------------------------------------------------------------------
def test_allocating_sets_the_has_pages_bit_and_freeing_the_last_page_clears_it():
    sm, lm, fid = locked_sm()
    t = sm.begin()
    rid = sm.create_rec(t, fid, chunks(1))  # one chunk: page 20 of x(1.5)
    assert [p.page for p in sm.volume.store_pages(LARGE)] == [20]
    assert lm.held(t)[x(5)] == IX and has_pages_bit(lm, 5)
    assert lm.held(t)[LockId.page(PageId(1, 4, 20))] == IX  # the page allocated: IX, long
    sm.free_rec(t, rid)
    assert not has_pages_bit(lm, 5)  # x(1.5) holds only reserved pages now: removable
    sm.commit(t)


# -- 2. the free-extent search and the reserved-page search ------------------------------------------
def test_the_free_extent_search_skips_an_extent_another_transaction_holds():
    """T1 creates a file and rolls the creation back: its extents are free again, but T1 still holds their
    IX locks (it might reuse them), so T2's new file takes the next free extents."""
    sm, lm, fid = locked_sm()
    t1 = sm.begin()
    point = sm.save_point(t1)
    sm.create_file(t1)  # s(1.5) gets x(1.6), s(1.6) gets x(1.7)
    sm.rollback_to(t1, point)
    assert sm.volume.extlink(6).owner == 0 and sm.volume.extlink(7).owner == 0
    assert lm.held(t1)[x(6)] == IX and lm.held(t1)[x(7)] == IX
    t2 = sm.begin()
    mine = sm.create_file(t2)
    firsts = [sm.volume.store_node(s).first_ext for s in (mine.store, sm.files.file_info(mine).large)]
    assert firsts == [8, 9]
    assert "skipped x(1.6): another transaction has it locked" in sm.volume.trace.lines
    sm.commit(t2)
    sm.commit(t1)
    t3 = sm.begin()
    again = sm.create_file(t3)  # T1 is gone: x(1.6) is the lowest free extent again
    assert sm.volume.store_node(again.store).first_ext == 6
    sm.commit(t3)
    assert sm.check() == []


def test_a_page_another_transaction_allocated_is_not_handed_to_a_second_one():
    """T1 writes three chunks (pages 20-22) and rolls back: the pages are reserved again, but T1 still holds
    their page locks. T2's chunk goes to page 23, not 20."""
    sm, lm, fid = locked_sm()
    t1, t2 = sm.begin(), sm.begin()
    point = sm.save_point(t1)
    sm.create_rec(t1, fid, chunks(3))
    sm.rollback_to(t1, point)
    assert sm.volume.store_pages(LARGE) == []
    assert all(lm.held(t1)[LockId.page(PageId(1, 4, p))] == IX for p in (20, 21, 22))
    sm.create_rec(t2, fid, chunks(1))  # appending: past the pages T1 holds
    assert [p.page for p in sm.volume.store_pages(LARGE)] == [23]
    assert sm.volume.alloc_page(LARGE, AllocMode.COMPACT, t2).page == 24  # the reserved-page search too
    assert "skipped x(1.5): its reserved pages are held by active transactions" in sm.volume.trace.lines
    sm.commit(t1)
    t3 = sm.begin()
    assert sm.volume.alloc_page(LARGE, AllocMode.COMPACT, t3).page == 20  # T1 ended: free for all
    sm.commit(t2)
    sm.commit(t3)


def test_two_threads_allocating_in_one_store_get_different_pages():
    sm, lm, fid = locked_sm()
    t1, t2 = sm.begin(), sm.begin()
    point = sm.save_point(t1)
    with Interleaving(lm) as script:
        a = script.run(t1, "T1 creates", lambda: sm.create_rec(t1, fid, chunks(2)))  # pages 20, 21
        b = script.run(t2, "T2 creates", lambda: sm.create_rec(t2, fid, chunks(2)))  # pages 22, 23
        script.run(t1, "T1 rolls back", lambda: sm.rollback_to(t1, point))
        c = script.run(t2, "T2 allocates", lambda: sm.volume.alloc_page(LARGE, AllocMode.COMPACT, t2))
        script.run(t2, "commit", lambda: sm.commit(t2))
        script.run(t1, "commit", lambda: sm.commit(t1))
    assert [s.status for s in (a, b, c)] == ["done"] * 3
    assert c.result == PageId(1, 4, 24)  # not 20 or 21: T1 holds their page locks until its end
    assert sm.check() == []


# -- 3. freeing an extent at commit ------------------------------------------------------------------
def committed_two_extents(sm, fid):
    """A record of four chunks (x(1.5) full) and one of one chunk (page 24 of x(1.6))."""
    with sm.transaction() as t:
        sm.create_rec(t, fid, chunks(4))
        last = sm.create_rec(t, fid, chunks(1))
    assert [p.page for p in sm.volume.store_pages(LARGE)] == [20, 21, 22, 23, 24]
    return last


def test_the_free_at_commit_upgrades_the_extent_lock_to_ex():
    sm, lm, fid = locked_sm()
    last = committed_two_extents(sm, fid)
    t1 = sm.begin()
    sm.free_rec(t1, last)
    assert lm.held(t1)[x(6)] == IX and not has_pages_bit(lm, 6)
    sm.commit(t1)
    assert "T3 EX x(1.6): upgraded to free the extent" in lm.trace.lines
    assert sm.volume.extlink(6).owner == 0 and sm.check() == []


def test_the_free_at_commit_skips_an_extent_another_transaction_holds():
    """T4 allocated a chunk in x(1.6) and rolled it back: it holds x(1.6) IX, so T3's commit keeps it."""
    sm, lm, fid = locked_sm()
    last = committed_two_extents(sm, fid)
    t1, t2 = sm.begin(), sm.begin()
    sm.free_rec(t1, last)
    point = sm.save_point(t2)
    sm.create_rec(t2, fid, chunks(1))  # page 25 of x(1.6)
    sm.rollback_to(t2, point)
    assert sm.volume.extlink(6).pmap == 0 and lm.held(t2)[x(6)] == IX
    sm.commit(t1)
    assert "T3 cannot free x(1.6): T4(IX) hold it" in lm.trace.lines
    assert sm.volume.extlink(6).owner == LARGE.store  # kept: T4 may still use it
    assert any("x(1.6): another active transaction holds it" in line for line in sm.xcts.trace.lines)
    sm.commit(t2)
    assert sm.check() == []


def test_an_extent_whose_lock_says_it_has_pages_is_not_freed():
    sm, lm, fid = locked_sm()
    last = committed_two_extents(sm, fid)
    t1 = sm.begin()
    sm.free_rec(t1, last)
    lm.mark_extent(t1, ExtentId(1, 6), True)  # as if a page were allocated there
    sm.commit(t1)
    assert "T3 cannot free x(1.6): it has allocated pages" in lm.trace.lines
    assert sm.volume.extlink(6).owner == LARGE.store


# -- 4. escalation thresholds per level and per store ------------------------------------------------
def records_on_one_page(sm, fid, n):
    with sm.transaction() as t:
        rids = [sm.create_rec(t, fid, b"r%d" % i) for i in range(n)]
    assert len({r.page for r in rids}) == 1
    return rids


def test_page_level_escalation_happens_exactly_at_the_threshold():
    sm, lm, fid = locked_sm()
    rids = records_on_one_page(sm, fid, 4)
    sm.set_escalation(page_threshold=3)
    t = sm.begin()
    page = LockId.page(rids[0].pid)
    for rid in rids[:2]:
        sm.read_rec(t, rid)
    assert lm.held(t)[page] == IS and lm.stats["nEscalations"] == 0
    sm.read_rec(t, rids[2])  # the third record lock under the page
    assert lm.held(t)[page] == SH and not any(lid.code == "r" for lid in lm.held(t))
    assert lm.stats["nEscalations"] == 1
    sm.commit(t)


@pytest.mark.parametrize("off", [0, None])
def test_escalation_disabled_for_one_store_with_0_or_none(off):
    sm, lm, fid = locked_sm()
    rids = records_on_one_page(sm, fid, 4)
    sm.set_escalation(page_threshold=2)
    sm.set_escalation(store=fid, page_threshold=off)
    assert lm.escalation_threshold(LockId.page(rids[0].pid)) is None
    assert lm.escalation_threshold(LockId.page(PageId(1, 9, 40))) == 2  # other stores keep the manager's
    t = sm.begin()
    for rid in rids:
        sm.read_rec(t, rid)
    assert sum(lid.code == "r" for lid in lm.held(t)) == 4 and lm.stats["nEscalations"] == 0
    sm.commit(t)


def test_store_level_escalation_at_its_own_threshold():
    sm, lm, fid = locked_sm()
    with sm.transaction() as t:
        rids = [sm.create_rec(t, fid, bytes(100)) for _ in range(9)]
    pages = sorted({r.pid for r in rids})
    assert len(pages) == 3
    sm.set_escalation(store=fid, store_threshold=3)  # pages under s(1.3); records never escalate (None)
    t = sm.begin()
    firsts = [next(r for r in rids if r.pid == pid) for pid in pages]
    sm.read_rec(t, firsts[0])
    sm.read_rec(t, firsts[1])
    assert lm.held(t)[LockId.store(fid)] == IS and lm.stats["nEscalations"] == 0
    sm.read_rec(t, firsts[2])  # the third page lock under s(1.3)
    assert lm.held(t) == {LockId.volume(1): IS, LockId.store(fid): SH}
    sm.commit(t)


def test_set_escalation_needs_a_lock_manager_and_a_store_id():
    with pytest.raises(BadRequestError, match="no lock manager to escalate in"):
        new_sm().set_escalation(page_threshold=3)
    sm, lm, fid = locked_sm()
    with pytest.raises(BadRequestError, match="must be a store id"):
        sm.set_escalation(store=PageId(1, 3, 16), page_threshold=3)
    with pytest.raises(Exception, match="positive integer, or 0 or None"):
        sm.set_escalation(page_threshold=-2)


# -- 5. quarks -------------------------------------------------------------------------------------
def test_a_quark_releases_the_locks_taken_inside_it_and_keeps_the_others():
    sm, lm, fid = locked_sm()
    rids = records_on_one_page(sm, fid, 3)
    t = sm.begin()
    sm.update_rec(t, rids[0], 0, b"R")  # before the quark: IX v, s, p; EX r0
    before = lm.held(t)
    with sm.quark(t) as q:
        sm.read_rec(t, rids[1])
        sm.read_rec(t, rids[0])  # held before: stays EX
        assert lm.held(t)[LockId.record(rids[1])] == SH
    assert lm.held(t) == before and q.released == 1
    sm.commit(t)


def test_nested_quarks_release_only_their_own_locks():
    sm, lm, fid = locked_sm()
    with sm.transaction() as t:
        other = sm.create_file(t)
    rids = records_on_one_page(sm, fid, 2)
    mine = records_on_one_page(sm, other, 1)[0]
    t = sm.begin()
    with sm.quark(t):
        sm.read_rec(t, rids[0])
        with sm.quark(t) as inner:
            sm.read_rec(t, rids[1])
            sm.read_rec(t, mine)
        assert inner.released == 4  # r1; r(mine), its page and its store
        assert set(lm.held(t)) == {LockId.volume(1), LockId.store(fid), LockId.page(rids[0].pid),
                                   LockId.record(rids[0])}
    assert lm.held(t) == {}
    sm.commit(t)


def test_extent_locks_taken_inside_a_quark_stay_to_the_end_of_the_transaction():
    sm, lm, fid = locked_sm()
    t = sm.begin()
    with sm.quark(t):
        sm.create_rec(t, fid, chunks(1))  # page 20 of x(1.5)
    assert set(lm.held(t)) == {x(5)}  # the record, page and store locks went with the quark
    sm.commit(t)


def test_a_reader_in_a_quark_lets_a_writer_in_before_it_commits():
    sm, lm, fid = locked_sm()
    rid = records_on_one_page(sm, fid, 1)[0]
    reader, writer = sm.begin(), sm.begin()
    quark = sm.quark(reader)
    with Interleaving(lm) as script:
        script.run(reader, "quark, read", lambda: (quark.__enter__(), sm.read_rec(reader, rid)))
        update = script.run(writer, "update", lambda: sm.update_rec(writer, rid, 0, b"W"))
        blocked = update.status
        script.run(reader, "close the quark", lambda: quark.__exit__(None, None, None))
        assert blocked == "blocked" and update.status == "done" and reader.is_active
        script.run(writer, "commit", lambda: sm.commit(writer))
        script.run(reader, "commit", lambda: sm.commit(reader))


def test_a_quark_after_or_across_the_end_of_its_transaction_is_an_error():
    sm, lm, fid = locked_sm()
    t = sm.begin()
    sm.commit(t)
    with pytest.raises(XctError, match="T2 is not active: a quark needs an active transaction"):
        with sm.quark(t):
            pass
    t = sm.begin()
    with pytest.raises(XctError, match="T3 ended inside its quark"):
        with sm.quark(t):
            sm.create_rec(t, fid, b"r")
            sm.commit(t)
    t = sm.begin()
    quark = sm.quark(t)
    with quark:
        pass
    with pytest.raises(XctError, match="opened already"):
        with quark:
            pass
    sm.commit(t)


def test_without_a_lock_manager_a_quark_releases_nothing():
    sm = new_sm()
    t = sm.begin()
    with sm.quark(t) as q:
        sm.create_file(t)
    assert q.released == 0
    sm.commit(t)


# -- the lock manager's side ------------------------------------------------------------------------
def test_thresholds_per_level_per_store_and_keep():
    from minidb.pagestore.lock import KEEP

    lm = LockManager(escalation_threshold=64)
    page, store, other = LockId.page(PageId(1, 3, 16)), LockId.store(StoreId(1, 3)), LockId.store(StoreId(1, 5))
    lm.set_escalation_thresholds(to_page=2, to_store=0)
    assert (lm.escalation_threshold(page), lm.escalation_threshold(store)) == (2, None)
    lm.set_escalation_thresholds(to_store=5, store=store)  # this store's own level; its pages keep 2
    lm.set_escalation_thresholds(to_page=KEEP, to_store=7)
    assert (lm.escalation_threshold(page), lm.escalation_threshold(store), lm.escalation_threshold(other)) == (2, 5, 7)
    with pytest.raises(Exception, match="not a store's lock id"):
        lm.set_escalation_thresholds(to_page=1, store=page)


def test_closing_a_quark_that_is_not_open_is_an_error():
    from minidb.pagestore.lock import BadLockRequest

    sm, lm, fid = locked_sm()
    t = sm.begin()
    with pytest.raises(BadLockRequest, match="T2 has no open quark"):
        lm.close_quark(t)
    assert lm.open_quark(t) == 1 and lm.open_quark(t) == 2 and lm.quark_depth(t) == 2
    assert lm.close_quark(t) == 0 and lm.quark_depth(t) == 1
    sm.commit(t)
    assert lm.quark_depth(t) == 0
