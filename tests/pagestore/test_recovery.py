"""Recovery, scenario by scenario; each ends once with a clean shutdown and once with a crash."""

import pytest

from minidb.errors import SimulatedCrash
from minidb.io import CrashMode
from minidb.log import NULL_LSN
from minidb.pagestore.restart.master import read_master
from minidb.pagestore.transactions.xct import XctState
from minidb.pagestore.volume.stores import Deleting

from tests.pagestore.sm_helpers import entries, new_sm, open_again, reopen

HOW = ["clean", "crash"]


def committed_file(sm, records=(b"alpha", b"beta", b"gamma")):
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rids = [sm.create_rec(t, fid, body) for body in records]
    return fid, rids


@pytest.mark.parametrize("how", HOW)
def test_empty_restart(how):
    sm = new_sm()
    assert sm.restart_report.analysis.losers == [] and sm.restart_report.undo.steps == []
    sm = reopen(sm, how)
    report = sm.restart_report
    assert report.analysis.xct_table == {} and report.undo.losers == [] and report.redo.redone == 0
    assert sm.contents() == {} and sm.check() == []
    assert read_master(sm.disk) is not None  # restart ends with a checkpoint


@pytest.mark.parametrize("how", HOW)
def test_committed_data_survives(how):
    sm = new_sm(frames=4)  # a small pool: some pages reach the disk, some do not
    fid, rids = committed_file(sm, [b"alpha", b"x" * 900, b"gamma"])
    with sm.transaction() as t:
        sm.update_rec(t, rids[0], 0, b"ALPHA")
        sm.append_rec(t, rids[2], b"-more")
    sm = reopen(sm, how)
    assert sm.contents() == {fid: {rids[0]: (b"", b"ALPHA"), rids[1]: (b"", b"x" * 900),
                                   rids[2]: (b"", b"gamma-more")}}
    assert sm.check() == []
    if how == "crash":
        assert sm.restart_report.redo.redone > 0


@pytest.mark.parametrize("how", HOW)
def test_aborted_data_is_gone(how):
    sm = new_sm(frames=4)
    fid, rids = committed_file(sm)
    t = sm.begin()
    sm.update_rec(t, rids[0], 0, b"ALP")
    sm.free_rec(t, rids[1])
    sm.create_rec(t, fid, b"y" * 700)
    other = sm.create_file(t)
    sm.create_rec(t, other, b"in the other file")
    steps = sm.abort(t)
    assert [s.action for s in steps].count("undone") >= 5
    sm = reopen(sm, how)
    assert sm.contents() == {fid: {rids[0]: (b"", b"alpha"), rids[1]: (b"", b"beta"), rids[2]: (b"", b"gamma")}}
    assert other.store not in {s.store for s in sm.volume.stores()}
    assert sm.check() == []


@pytest.mark.parametrize("how", HOW)
def test_three_committed_five_in_flight_exactly_the_three_remain(how):
    sm = new_sm(frames=5)
    with sm.transaction() as t:
        fid = sm.create_file(t)
    kept = {}
    for i in range(3):
        with sm.transaction() as t:
            rid = sm.create_rec(t, fid, f"committed {i}".encode())
            kept[rid] = (b"", f"committed {i}".encode())
    in_flight = [sm.begin() for _ in range(5)]
    for i, t in enumerate(in_flight):
        sm.create_rec(t, fid, f"in flight {i}".encode())
    sm.update_rec(in_flight[2], next(iter(kept)), 0, b"X")  # an in-flight update of a committed record
    sm.log.sync()
    sm.bp.force_all()  # the in-flight changes reach the disk: undo has real work
    sm = reopen(sm, how)
    assert sm.contents() == {fid: kept}
    assert sm.check() == [] and sm.xcts.active() == []
    if how == "crash":
        assert sm.restart_report.undo.losers == [x.txn_id for x in in_flight]
        assert sm.restart_report.undo.undone == 6


def aborting_workload(sm):
    fid, rids = committed_file(sm)
    t = sm.begin()
    for i in range(6):
        sm.update_rec(t, rids[i % 3], 0, bytes([65 + i]))
        sm.create_rec(t, fid, bytes([97 + i]) * (5 + 100 * (i % 3)))
    sm.free_rec(t, rids[1])
    sm.log.sync()
    return fid, rids, t


@pytest.mark.parametrize("how", HOW)
def test_crash_during_rollback(how):
    """A crash after each disk operation of an abort; the next restart finishes the rollback."""
    probe = new_sm(frames=3, buffer_size=300)
    fid, rids, t = aborting_workload(probe)
    before = len(probe.disk.events)
    probe.abort(t)
    rollback_ops = sum(1 for e in probe.disk.events[before:] if e.kind in ("write", "fsync", "truncate"))
    assert rollback_ops > 5
    expected = {fid: {rids[0]: (b"", b"alpha"), rids[1]: (b"", b"beta"), rids[2]: (b"", b"gamma")}}
    for at in range(1, rollback_ops + 1):
        sm = new_sm(frames=3, buffer_size=300)
        aborting_workload(sm)
        sm.disk.schedule_crash(after_ops=at)
        with pytest.raises(SimulatedCrash):
            sm.abort(sm.xcts.active()[0])
        sm = open_again(sm.disk, frames=3)
        assert sm.contents() == expected, at
        # Never an undo undone: each original entry is compensated at most once.
        clrs = entries(sm, ("clr_rec_insert", "clr_rec_remove", "clr_rec_splice", "compensate"))
        undone = [e.values["undo_nxt"] for e in clrs if e.txn_id == 5]
        assert len(undone) == len(set(undone)), at
        sm = reopen(sm, how, frames=3)
        assert sm.contents() == expected and sm.check() == []


def restart_workload():
    sm = new_sm(frames=4, buffer_size=400)
    fid, rids = committed_file(sm)
    losers = [sm.begin() for _ in range(3)]
    for i, t in enumerate(losers):
        sm.create_rec(t, fid, b"loser" * (1 + 50 * i))
        sm.update_rec(t, rids[i], 0, b"Z")
    sm.checkpoint()
    sm.free_rec(losers[0], sm.create_rec(losers[0], fid, b"short-lived"))
    with sm.transaction() as t:
        late = sm.create_rec(t, fid, b"late")
    sm.bp.force_all()
    sm.disk.crash(CrashMode.nothing())
    expected = {fid: {rids[0]: (b"", b"alpha"), rids[1]: (b"", b"beta"), rids[2]: (b"", b"gamma"),
                      late: (b"", b"late")}}
    return sm.disk, expected


@pytest.mark.parametrize("how", HOW)
def test_crash_during_restart_at_every_point(how):
    disk, expected = restart_workload()
    probe = disk.clone()
    before = len(probe.events)
    open_again(probe, frames=4)
    restart_ops = sum(1 for e in probe.events[before:] if e.kind in ("write", "fsync", "truncate"))
    assert restart_ops > 3
    for at in range(1, restart_ops + 1):
        image = disk.clone()
        image.schedule_crash(after_ops=at)
        with pytest.raises(SimulatedCrash):
            open_again(image, frames=4)
        sm = open_again(image, frames=4)
        assert sm.contents() == expected, at
        assert sm.check() == [] and sm.xcts.active() == []
        sm = reopen(sm, how, frames=4)
        assert sm.contents() == expected


@pytest.mark.parametrize("how", HOW)
def test_a_checkpoint_taken_while_transactions_are_active(how):
    sm = new_sm(frames=4)
    fid, rids = committed_file(sm)
    active = sm.begin()
    sm.update_rec(active, rids[0], 0, b"A")
    rolled = sm.begin()
    sm.create_rec(rolled, fid, b"r" * 300)
    sm.abort(rolled)
    aborting = sm.begin()
    sm.free_rec(aborting, rids[2])
    chkpt = sm.checkpoint()
    assert chkpt.transactions == 2 and chkpt.dirty_pages > 0
    xct_tab = [e for e in entries(sm, ("chkpt_xct_tab",)) if e.lsn > chkpt.begin][0]
    assert [(x["tid"], XctState(x["state"])) for x in xct_tab.values["xcts"]] == [
        (active.txn_id, XctState.ACTIVE), (aborting.txn_id, XctState.ACTIVE)]
    sm.update_rec(active, rids[1], 0, b"B")  # after the checkpoint: analysis must add it
    with sm.transaction() as t:
        new = sm.create_rec(t, fid, b"after the checkpoint")
    sm.log.sync()
    sm = reopen(sm, how)
    assert sm.contents() == {fid: {rids[0]: (b"", b"alpha"), rids[1]: (b"", b"beta"), rids[2]: (b"", b"gamma"),
                                   new: (b"", b"after the checkpoint")}}
    if how == "crash":
        report = sm.restart_report
        assert report.master == chkpt.begin
        assert report.analysis.start == chkpt.begin
        assert [x.tid for x in report.analysis.losers] == [active.txn_id, aborting.txn_id]
        assert report.analysis.redo_lsn <= chkpt.min_rec_lsn


def destroying_workload(frames=4, buffer_size=64 * 1024):
    sm = new_sm(frames=frames, buffer_size=buffer_size)
    fid, rids = committed_file(sm, [b"keep"])
    gone, gone_rids = committed_file(sm, [b"doomed", b"z" * 800])
    large = sm.files.file_info(gone).large
    exts = sm.volume.owned_extents(gone.store) + sm.volume.owned_extents(large)
    t = sm.begin()
    sm.destroy_file(t, gone)
    assert sm.volume.store_node(gone.store).deleting == Deleting.DELETING
    return sm, t, fid, rids, gone, large, exts


@pytest.mark.parametrize("how", HOW)
def test_a_store_destroyed_by_a_transaction_that_crashes_in_freeing_space(how):
    sm, t, fid, rids, gone, large, exts = destroying_workload()
    sm.commit(t)  # xct_freeing_space is durable; the removals and xct_end are not
    assert t.state == XctState.ENDED
    sm.disk.crash(CrashMode.nothing())
    sm = open_again(sm.disk, frames=4)
    report = sm.restart_report
    assert [x.tid for x in report.analysis.freeing] == [t.txn_id]
    assert sorted(report.finish.finished) == [t.txn_id]
    assert sm.contents() == {fid: {rids[0]: (b"", b"keep")}}
    assert {gone.store, large} & {s.store for s in sm.volume.stores()} == set()
    assert all(sm.volume.extlink(e).owner == 0 for e in exts)
    assert sm.check() == []
    sm = reopen(sm, how)
    assert sm.contents() == {fid: {rids[0]: (b"", b"keep")}} and sm.check() == []


def test_a_crash_at_every_point_of_freeing_space():
    probe, t, *_ = destroying_workload(buffer_size=200)
    before = len(probe.disk.events)
    probe.commit(t)
    ops = sum(1 for e in probe.disk.events[before:] if e.kind in ("write", "fsync", "truncate"))
    assert ops >= 3
    for at in range(1, ops + 1):
        sm, t, fid, rids, gone, large, exts = destroying_workload(buffer_size=200)
        sm.disk.schedule_crash(after_ops=at)
        try:
            sm.commit(t)
            sm.disk.crash(CrashMode.nothing())
        except SimulatedCrash:
            pass
        sm = open_again(sm.disk, frames=4)
        stores = {s.store for s in sm.volume.stores()}
        if gone.store in stores:  # the crash came before the commit point: the destruction rolled back
            assert sm.volume.store_node(gone.store).deleting == Deleting.NOT_DELETING
            assert set(sm.contents()) == {fid, gone}
        else:
            assert large not in stores and all(sm.volume.extlink(e).owner == 0 for e in exts)
            assert sm.contents() == {fid: {rids[0]: (b"", b"keep")}}
        assert sm.check() == [] and sm.xcts.active() == []


def test_a_non_durable_commit_may_be_lost_but_never_half():
    sm = new_sm()
    fid, rids = committed_file(sm)
    t = sm.begin()
    sm.update_rec(t, rids[0], 0, b"ALPHA")
    sm.update_rec(t, rids[1], 0, b"BETA")
    point = sm.commit(t, durable=False)
    assert not sm.log.is_durable(point)
    for mode in (CrashMode.nothing(), CrashMode.everything()):
        image = sm.disk.crash_image(len(sm.disk.events) - 1, mode)
        body = {rid: body for rid, (_, body) in open_again(image).contents()[fid].items()}
        assert (body[rids[0]], body[rids[1]]) in ((b"alpha", b"beta"), (b"ALPHA", b"BETA"))


def test_restart_after_restart_needs_no_undo():
    sm = new_sm()
    fid, rids = committed_file(sm)
    t = sm.begin()
    sm.create_rec(t, fid, b"loser")
    sm.log.sync()
    sm = reopen(sm, "crash")
    assert sm.restart_report.undo.undone == 1
    sm = reopen(sm, "crash")
    assert sm.restart_report.undo.losers == [] and sm.restart_report.master != NULL_LSN
    assert sm.xcts.begin().txn_id > t.txn_id  # tids keep growing across restarts
