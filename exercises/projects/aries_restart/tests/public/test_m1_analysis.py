"""Milestone 1: analysis. A page store is driven through a scripted history, crashed (nothing unsynced
survives), and opened again without restarting (``restart=False``); your ``analysis()`` must rebuild the
tables from the master checkpoint on: which transactions are losers, their last LSNs and undo-nexts, which
pages may be newer in the log than on disk (and from which LSN), and the redo LSN."""

from minidb.io import CrashMode
from minidb.pagestore.transactions.xct import XctState

from tests.pagestore.sm_helpers import entries, new_sm, open_again


def test_analysis_logs_nothing_changes_no_page_and_knows_the_youngest_transaction(kit):
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        sm.create_rec(t, fid, b"r")
    t2 = sm.begin()
    sm.create_rec(t2, fid, b"loser")
    again = kit.crashed(sm)
    end = again.log.end_lsn
    result = again.restart.analysis()
    assert again.log.end_lsn == end and again.bp.dirty_page_table() == {}
    assert again.restart.analysis_result is result and again.restart.next_pass == "redo"
    assert result.end == end and result.entries_read == len(entries(again, start=result.start))
    assert result.youngest == t2.txn_id and [x.tid for x in result.losers] == [t2.txn_id]
    assert again.xcts.begin().txn_id > t2.txn_id  # the manager was told the youngest id


def test_states_undo_nexts_and_ended_transactions_after_the_checkpoint(kit):
    """A committed, an aborted, a partly rolled back (a CLR: undo-next jumps back), an aborting and a prepared
    transaction, after the master checkpoint."""
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        base = sm.create_rec(t, fid, b"0123456789")
    sm.checkpoint()
    committed, aborted, partial, prepared = (sm.begin() for _ in range(4))
    sm.create_rec(committed, fid, b"c")
    sm.commit(committed)
    sm.create_rec(aborted, fid, b"a")
    sm.abort(aborted)
    sm.update_rec(partial, base, 0, b"P")
    kept = partial.undo_nxt
    save = sm.save_point(partial)
    sm.update_rec(partial, base, 1, b"Q")
    sm.rollback_to(partial, save)
    sm.create_rec(prepared, fid, b"p")
    sm.prepare(prepared, b"gtid-1")
    again = kit.crashed(sm)
    result = again.restart.analysis()
    table = result.xct_table
    assert {committed.txn_id, aborted.txn_id} <= result.ended and committed.txn_id not in table
    assert table[partial.txn_id].state == XctState.ACTIVE and table[partial.txn_id].undo_nxt == kept
    assert table[partial.txn_id].last_lsn == partial.last_lsn
    assert table[prepared.txn_id].state == XctState.PREPARED
    assert [x.tid for x in result.losers] == [partial.txn_id]
    assert [x.tid for x in result.prepared] == [prepared.txn_id]


def test_the_dirty_page_table_keeps_each_pages_first_lsn_and_the_redo_lsn_is_the_smallest(kit):
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rid = sm.create_rec(t, fid, b"first")
    sm.bp.force_all()  # the page on disk is clean now
    chkpt = sm.checkpoint()
    with sm.transaction() as t:
        for text in (b"A", b"B", b"C"):
            sm.update_rec(t, rid, 0, text)
    again = kit.crashed(sm)
    result = again.restart.analysis()
    first = next(e.lsn for e in entries(again, start=chkpt.begin) if e.entry_type.redoable
                 and (e.values["vol"], e.values["page"]) == (1, rid.page))  # the image logged as it became dirty
    assert result.dirty_pages[(1, rid.page)].rec_lsn == first
    assert result.redo_lsn == min(d.rec_lsn for d in result.dirty_pages.values())
    assert result.losers == []


def test_a_clean_shutdown_leaves_nothing_to_redo_or_undo():
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        sm.create_rec(t, fid, b"r")
    sm.close()
    again = open_again(sm.disk, frames=8, restart=False)
    result = again.restart.analysis()
    assert result.xct_table == {} and result.dirty_pages == {} and result.redo_lsn.is_null
    assert result.master == again.restart.master and not result.master.is_null


def test_analysis_rebuilds_the_tables_from_the_master():
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rid = sm.create_rec(t, fid, b"r")
    t2 = sm.begin()
    sm.update_rec(t2, rid, 0, b"R")
    chkpt = sm.checkpoint()
    t3 = sm.begin()
    new = sm.create_rec(t3, fid, b"n" * 300)  # a large record: pages of s(1.4) enter the table
    t4 = sm.begin()
    sm.create_rec(t4, fid, b"done")
    sm.commit(t4)
    t5 = sm.begin()
    sm.free_rec(t5, new)
    sm.xcts.abort  # noqa: B018 (T5 stays active)
    sm.log.sync()
    sm.disk.crash(CrashMode.nothing())
    sm = open_again(sm.disk, frames=8, restart=False)
    result = sm.restart.analysis()
    assert result.master == chkpt.begin
    assert {tid: x.state for tid, x in result.xct_table.items()} == {
        t2.txn_id: XctState.ACTIVE, t3.txn_id: XctState.ACTIVE, t5.txn_id: XctState.ACTIVE}
    assert result.xct_table[t2.txn_id].undo_nxt == t2.undo_nxt  # from the checkpoint: nothing since
    assert result.xct_table[t3.txn_id].last_lsn == t3.last_lsn
    assert t4.txn_id in result.ended and result.youngest == t5.txn_id
    assert result.redo_lsn == min(d.rec_lsn for d in result.dirty_pages.values())
    assert {key[1] for key in result.dirty_pages} >= {rid.page, new.page}
    assert [x.tid for x in result.losers] == [t2.txn_id, t3.txn_id, t5.txn_id]
