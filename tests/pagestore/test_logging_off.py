"""Logging switched off, for a transaction (``sm.logging_off(t)``) or for all (``logging_enabled=False``):
new files are LOAD files, anything shared is refused, and a crash keeps the changes only once committed."""

from __future__ import annotations

import pytest

from minidb.errors import UserError
from minidb.pagestore import StoreProperty

from tests.pagestore.sm_helpers import entries, new_sm, open_again, reopen


def test_a_file_made_with_logging_off_is_loaded_unlogged_and_survives_once_committed():
    sm = new_sm("off-commit")
    t = sm.begin()
    with sm.logging_off(t):
        fid = sm.create_file(t)
        rids = [sm.create_rec(t, fid, b"unlogged %d" % i) for i in range(20)]
        assert sm.store_property(fid) == StoreProperty.LOAD
    assert not t.log_off  # as it was after the block
    logged = {e.type_name for e in entries(sm) if e.values.get("store") == fid.store}
    assert "page_format" in logged and "rec_insert" not in logged  # space logged, records not
    sm.commit(t)
    sm = reopen(sm, "crash")
    assert sorted(sm.contents()[fid]) == sorted(rids)
    assert sm.store_property(fid) == StoreProperty.REGULAR


def test_a_crash_before_the_commit_leaves_nothing_of_what_was_done_unlogged():
    sm = new_sm("off-crash")
    t = sm.begin()
    with sm.logging_off(t):
        fid = sm.create_file(t)
        for _ in range(40):
            sm.create_rec(t, fid, b"x" * 30)
    sm.bp.clean()  # some of its pages reach the disk
    sm.log.sync()
    sm = reopen(sm, "crash")
    assert fid not in sm.contents()
    assert sm.check() == []


def test_a_change_to_a_shared_file_with_logging_off_is_refused_and_changes_nothing():
    sm = new_sm("off-shared")
    with sm.transaction() as t:
        shared = sm.create_file(t)
        rid = sm.create_rec(t, shared, b"shared")
    t = sm.begin()
    sm.update_rec(t, rid, 0, b"SH")  # logged: logging is on
    with sm.logging_off(t):
        with pytest.raises(UserError, match="logging off: other transactions share it"):
            sm.update_rec(t, rid, 0, b"XX")
        with pytest.raises(UserError, match="cannot create a record in"):
            sm.create_rec(t, shared, b"no")
        with pytest.raises(UserError, match="cannot create an index"):
            sm.create_index(t, "i4")
    sm.abort(t)  # the logged update is undone from the log
    with sm.transaction() as t:
        assert sm.read_rec(t, rid).body == b"shared"
        assert len(list(sm.scan(t, shared))) == 1


def test_a_rollback_to_before_unlogged_changes_is_refused_but_an_abort_drops_them():
    sm = new_sm("off-rollback")
    t = sm.begin()
    point = sm.save_point(t)
    with sm.logging_off(t):
        fid = sm.create_file(t)
        sm.create_rec(t, fid, b"gone")
    with pytest.raises(UserError):
        sm.rollback_to(t, point)
    sm.abort(t)
    assert fid not in sm.contents()


def test_a_transaction_with_logging_off_cannot_be_prepared_nor_a_prepared_one_turn_it_off():
    sm = new_sm("off-prepare")
    t = sm.begin()
    with sm.logging_off(t):
        with pytest.raises(UserError, match="cannot be prepared with its logging off"):
            sm.prepare(t, b"g1")
    with sm.transaction() as setup:
        fid = sm.create_file(setup)
    u = sm.begin()
    sm.create_rec(u, fid, b"p")
    sm.prepare(u, b"g2")
    with pytest.raises(UserError, match="is prepared"):
        with sm.logging_off(u):
            pass
    sm.commit_prepared(b"g2")


def test_logging_disabled_for_the_storage_manager_loads_new_files_and_refuses_shared_changes():
    sm = new_sm("off-global")
    with sm.transaction() as t:
        shared = sm.create_file(t)
        rid = sm.create_rec(t, shared, b"kept")
    sm.close()
    sm = open_again(sm.disk, logging_enabled=False)
    with sm.transaction() as t:
        assert t.log_off
        fid = sm.create_file(t)
        sm.create_rec(t, fid, b"loaded")
        with pytest.raises(UserError, match="logging off"):
            sm.free_rec(t, rid)
    sm = reopen(sm, "crash")
    assert list(sm.contents()[fid].values()) == [(b"", b"loaded")]
    assert sm.contents()[shared] == {rid: (b"", b"kept")}
