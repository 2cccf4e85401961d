"""Milestone 2: redo. After your analysis, your ``redo()`` must repeat history from the redo LSN: every
change a page on disk lacks is applied again (losers' changes included), a change the page already holds
(its page LSN is not older) is not, nothing is logged, and a torn page is rebuilt from its image."""

from minidb.io import CrashMode
from minidb.pagestore.buffer.latch import SH

from tests.pagestore.sm_helpers import entries, new_sm, open_again


def decisions(sm, start):
    """(LSN, page key) of every redoable page-store entry from ``start`` on."""
    return [(e.lsn, (e.values["vol"], e.values["page"])) for e in entries(sm, start=start)
            if e.entry_type is not None and e.entry_type.redoable]


def test_redo_applies_what_the_disk_lacks_and_skips_what_a_newer_page_holds(kit):
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rid = sm.create_rec(t, fid, b"one")
    sm.bp.force_all()  # on disk up to here
    written = sm.log.end_lsn
    with sm.transaction() as t:
        sm.update_rec(t, rid, 0, b"ONE")
    again = kit.crashed(sm)
    again.restart.analysis()
    end = again.log.end_lsn
    result = again.restart.redo()
    assert again.log.end_lsn == end  # redo logs nothing
    assert again.restart.redo_result is result and result.start == again.restart.analysis_result.redo_lsn
    verdicts = dict(result.decisions)
    later = [lsn for lsn, _ in decisions(again, written)]
    assert later and all(verdicts[lsn] == "redone" for lsn in later)  # the disk has none of these
    assert all(verdicts[lsn] == "skipped" for lsn in verdicts if lsn < written)  # the pages hold these
    assert result.redone == len(later) and result.skipped_page_newer + result.skipped_not_dirty >= 1
    assert again.bp.dirty_page_table()  # the redone pages are dirty in the pool, not written
    again.restart.run()
    with again.transaction() as t:
        assert again.read_rec(t, rid).body == b"ONE"


def test_redo_repeats_history_losers_included(kit):
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rid = sm.create_rec(t, fid, b"before")
    sm.bp.force_all()
    loser = sm.begin()
    sm.update_rec(loser, rid, 0, b"AFTER!")
    lsn = loser.last_lsn
    again = kit.crashed(sm)
    again.restart.analysis()
    redo = again.restart.redo()
    assert dict(redo.decisions)[lsn] == "redone"  # the loser's change is repeated, then undone
    page = again.bp.fix(rid.pid, SH)
    try:
        assert page.lsn >= lsn
    finally:
        again.bp.unfix(page)
    report = again.restart.run()
    assert report.undo.losers == [loser.txn_id]
    with again.transaction() as t:
        assert again.read_rec(t, rid).body == b"before"


def test_the_page_lsn_test_skips_a_change_the_page_was_written_with(kit):
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rid = sm.create_rec(t, fid, b"x" * 20)
    chkpt = sm.checkpoint()
    with sm.transaction() as t:
        sm.update_rec(t, rid, 0, b"y")
        changed = t.last_lsn
    sm.bp.force_all()  # the page on disk holds the change
    again = kit.crashed(sm)
    result = again.restart.analysis()
    assert (1, rid.page) in result.dirty_pages and not chkpt.begin.is_null
    redo = again.restart.redo()
    assert dict(redo.decisions)[changed] == "skipped" and redo.skipped_page_newer >= 1


def test_redo_starts_at_the_redo_lsn_even_before_the_master_checkpoint(kit):
    """A page dirty at the checkpoint, never written: its changes before the checkpoint are redone too."""
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rid = sm.create_rec(t, fid, b"before the checkpoint")
    chkpt = sm.checkpoint()  # the page is dirty in the pool, its recovery LSN before chkpt_begin
    again = kit.crashed(sm)
    result = again.restart.analysis()
    assert result.redo_lsn < chkpt.begin == result.master
    redo = again.restart.redo()
    assert redo.start == result.redo_lsn and any(lsn < chkpt.begin for lsn, what in redo.decisions if what == "redone")
    again.restart.run()
    with again.transaction() as t:
        assert again.read_rec(t, rid).body == b"before the checkpoint"


def test_a_torn_page_is_rebuilt_from_the_log():
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rids = [sm.create_rec(t, fid, bytes([i]) * 40) for i in range(5)]
    sm.bp.force_all()
    with sm.transaction() as t:
        sm.update_rec(t, rids[2], 0, b"changed")
    sm.bp.force_all()
    page_write = max(e.index for e in sm.disk.events if e.kind == "write" and e.name == "v1.vol"
                     and e.offset == rids[2].page * 512)
    image = sm.disk.crash_image(page_write, CrashMode.torn(100))  # the header is new, the rest old
    sm = open_again(image, frames=8)
    assert sm.restart_report.redo.torn_pages_rebuilt == 1
    assert any("torn page" in line for line in sm.restart_report.traces["redo"])
    page = sm.bp.fix(rids[2].pid, SH)
    assert not page.is_torn()
    sm.bp.unfix(page)
    with sm.transaction() as t:
        assert sm.read_rec(t, rids[2]).body == b"changed" + bytes([2]) * 33
