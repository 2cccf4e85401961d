"""A page store with several volumes: stores placed on a volume, transactions across volumes, the device
table in checkpoints and restart, dismounting refused with active work, a lost volume file."""

from __future__ import annotations

from functools import partial

import pytest

from minidb.crashtest.pagestore import crash_sweep
from minidb.crashtest.pagestore_workload import Runner
from minidb.errors import CorruptionError, SimulatedCrash, UserError
from minidb.pagestore.errors import BadRequestError, VolumeCorruptionError
from minidb.pagestore.ids import StoreId
from minidb.pagestore.lock import LockManager
from minidb.pagestore.transactions import xctmgr

from tests.pagestore.sm_helpers import entries, new_sm, open_again, reopen
from tests.sweeps import assert_chunk_has_no_violations


def two_volumes(**options):
    sm = new_sm("vols", **options)
    return sm, sm.add_volume(num_pages=64, ext_sz=4)


def test_add_volume_gives_the_next_number_and_a_file_named_after_it():
    sm, v = two_volumes()
    assert v == 2 and sm.volumes() == [1, 2]
    assert "v2.vol" in sm.disk.list()
    assert [e.values["vol"] for e in entries(sm, ("mount_vol",))] == [2]
    with sm.transaction() as t:
        fid = sm.create_file(t, volume=v)
        ix = sm.create_index(t, "i4", volume=v, name="by_key")
        rt = sm.create_rtree(t, volume=v)
        default = sm.create_file(t)
    assert fid == StoreId(2, fid.store) and ix.vol == 2 and rt.vol == 2 and default.vol == 1
    assert sm.find_index("by_key", volume=2) == ix and sm.find_index("by_key") is None
    assert sm.add_volume(num_pages=64) == 3 and sm.volumes() == [1, 2, 3]


def test_one_transaction_across_two_volumes_survives_a_crash():
    sm, v = two_volumes()
    with sm.transaction() as t:
        f1, f2 = sm.create_file(t), sm.create_file(t, volume=v)
        ix = sm.create_index(t, "i4", volume=v)
        r1, r2 = sm.create_rec(t, f1, b"on one"), sm.create_rec(t, f2, b"on two")
        sm.index_insert(t, ix, 7, b"seven")
    sm = reopen(sm, "crash")
    assert sm.volumes() == [1, 2]
    assert sm.contents() == {f1: {r1: (b"", b"on one")}, f2: {r2: (b"", b"on two")}}
    with sm.transaction() as t:
        assert sm.index_lookup(t, ix, 7) == [b"seven"]
    assert sm.check() == []


def test_an_uncommitted_transaction_across_two_volumes_is_rolled_back_on_both():
    sm, v = two_volumes()
    with sm.transaction() as t:
        f1, f2 = sm.create_file(t), sm.create_file(t, volume=v)
        r1, r2 = sm.create_rec(t, f1, b"kept 1"), sm.create_rec(t, f2, b"kept 2")
    sm.checkpoint()
    t = sm.begin()
    sm.create_rec(t, f1, b"lost 1")
    sm.update_rec(t, r2, 0, b"LOST")
    sm.create_rec(t, f2, b"lost 2")
    sm.index_insert(t, sm.create_index(t, "i4", volume=v), 1, b"lost")
    sm.bp.force_all()  # the losers' changes reach both volume files: undo must take them back
    sm.log.sync()
    sm = reopen(sm, "crash")
    assert sm.restart_report.undo.losers == [t.txn_id]
    assert sm.contents() == {f1: {r1: (b"", b"kept 1")}, f2: {r2: (b"", b"kept 2")}}
    assert sm.check() == []


def test_an_abort_and_a_commit_that_frees_space_work_on_each_volume():
    sm, v = two_volumes()
    with sm.transaction() as t:
        f1, f2 = sm.create_file(t), sm.create_file(t, volume=v)
        sm.create_rec(t, f1, b"x" * 300)
        sm.create_rec(t, f2, b"y" * 300)
    t = sm.begin()
    sm.create_rec(t, f2, b"z" * 300)
    sm.abort(t)
    with sm.transaction() as t:
        sm.destroy_file(t, f1)
        sm.destroy_file(t, f2)
    freeing = entries(sm, ("xct_freeing_space",))
    assert [e.values["vol"] for e in freeing[-2:]] == [1, 2]
    sm = reopen(sm, "crash")
    assert sm.contents() == {} and sm.check() == []
    assert sm.volume.of(2).stores_marked_for_deletion() == []


def test_the_checkpoint_lists_the_mounted_volumes_only_when_there_are_several():
    sm = new_sm("one")
    sm.checkpoint()
    assert entries(sm, ("chkpt_dev_tab",)) == []  # one volume: the bytes of before
    v = sm.add_volume(num_pages=64)
    sm.checkpoint()
    assert [[i["vol"] for i in e.values["vols"]] for e in entries(sm, ("chkpt_dev_tab",))] == [[1, v]]


def test_a_volume_added_after_the_last_checkpoint_is_mounted_again_at_restart():
    sm = new_sm("late")
    sm.checkpoint()
    v = sm.add_volume(num_pages=64)
    with sm.transaction() as t:
        f2 = sm.create_file(t, volume=v)
        r2 = sm.create_rec(t, f2, b"after the checkpoint")
    sm = reopen(sm, "crash")
    assert sm.volumes() == [1, v]
    assert any("mounted v(2)" in line for line in sm.restart_report.traces["redo"])
    assert sm.contents() == {f2: {r2: (b"", b"after the checkpoint")}}


def test_a_dismounted_volume_stays_dismounted_across_restarts_and_mounts_again():
    sm, v = two_volumes()
    with sm.transaction() as t:
        f2 = sm.create_file(t, volume=v)
        r2 = sm.create_rec(t, f2, b"written at dismount")
    sm.checkpoint()
    sm.dismount_volume(v)
    assert sm.volumes() == [1]
    with pytest.raises(BadRequestError, match=r"not on volume v\(1\) \(v\(2\) is not mounted\)"):
        with sm.transaction() as t:
            sm.read_rec(t, r2)
    sm = reopen(sm, "crash")
    assert sm.volumes() == [1]
    sm.mount_volume(v)
    assert sm.contents() == {f2: {r2: (b"", b"written at dismount")}}
    sm = reopen(sm, "crash")
    assert sm.volumes() == [1, v]


def test_dismount_is_refused_while_the_volume_has_active_work():
    sm, v = two_volumes(locking=LockManager())
    with sm.transaction() as t:
        f2 = sm.create_file(t, volume=v)
        rid = sm.create_rec(t, f2, b"a record")
    t = sm.begin()
    sm.update_rec(t, rid, 0, b"A")
    with pytest.raises(BadRequestError, match=r"v\(2\) cannot be dismounted: it has active work: "
                                              rf"T{t.txn_id} \(ACTIVE\) changed its pages; T{t.txn_id} holds"):
        sm.dismount_volume(v)
    sm.commit(t)
    reader = sm.begin()
    scan = sm.scan(reader, f2)
    with pytest.raises(BadRequestError, match=r"1 open scan of its stores"):
        sm.dismount_volume(v)
    assert [r.body for r in scan] == [b"A record"]
    sm.commit(reader)
    with pytest.raises(UserError, match=r"v\(1\) cannot be dismounted: it is the page store's first volume"):
        sm.dismount_volume(1)
    sm.dismount_volume(v)
    assert sm.volumes() == [1] and entries(sm, ("dismount_vol",))[-1].values["vol"] == v


def test_a_volume_file_the_log_says_is_mounted_but_is_missing_is_reported_by_name():
    sm, v = two_volumes()
    with sm.transaction() as t:
        sm.create_rec(t, sm.create_file(t, volume=v), b"on the lost volume")
    disk = sm.disk
    sm.close()
    disk.delete("v2.vol")
    with pytest.raises(VolumeCorruptionError, match=r"v2\.vol: the log says volume v\(2\) is mounted, but its "
                                                    r"file is missing") as caught:
        open_again(disk)
    assert isinstance(caught.value, CorruptionError)


@pytest.mark.parametrize("chunk", range(2))  # the reference, then every accelerated twin
def test_the_two_volume_crash_sweep_has_no_violations(chunk):
    assert_chunk_has_no_violations(partial(crash_sweep, volumes=2), chunk, 2, ops=12, min_points_per_seed=20)


def test_the_two_volume_workloads_use_both_volumes_and_remount():
    runners = [Runner(seed, 30, volumes=2) for seed in range(8)]
    workloads = [r.run() for r in runners]
    assert {fid.vol for w in workloads for state in w.states for fid in state} == {1, 2}
    assert sum(1 for r in runners for e in r.sm.log.scan() if e.type_name == "dismount_vol") >= 3


def test_a_transaction_freeing_space_on_another_volume_cannot_be_prepared():
    sm, v = two_volumes()
    with sm.transaction() as t:
        f2 = sm.create_file(t, volume=v)
    t = sm.begin()
    sm.destroy_file(t, f2)
    with pytest.raises(UserError, match=rf"T{t.txn_id} frees space on volume v\(2\), so it cannot be prepared"):
        sm.prepare(t, b"g1")
    sm.commit(t)
    assert sm.contents() == {}


def test_restart_finishes_freeing_space_on_every_volume(monkeypatch):
    sm, v = two_volumes()
    with sm.transaction() as t:
        f1, f2 = sm.create_file(t), sm.create_file(t, volume=v)
    t = sm.begin()
    sm.destroy_file(t, f1)
    sm.destroy_file(t, f2)

    def crash(*args, **kwargs):
        raise SimulatedCrash("after the commit point, before any space is freed")

    monkeypatch.setattr(xctmgr, "free_space", crash)
    with pytest.raises(SimulatedCrash):
        sm.commit(t)  # both xct_freeing_space entries are durable
    monkeypatch.undo()
    sm = reopen(sm, "crash")
    done = sm.restart_report.finish.finished[t.txn_id]
    assert any(line.startswith(f"removed {f1}") for line in done) and any(line.startswith(f"removed {f2}") for line in done)
    assert sm.restart_report.finish.removed_stores == [] and sm.contents() == {}
