"""Bad input to the page store: a MinidbError naming what and where; nothing changed; the next call works."""

import re

import pytest

from minidb.errors import DiskFullError, UserError
from minidb.pagestore import BufferPool, RecordId, ShoreLocking
from minidb.pagestore.errors import BadRequestError
from minidb.pagestore.lock import BadLockRequest, LockManager

from tests.pagestore.sm_helpers import entries, new_sm


@pytest.fixture
def sm_with_record():
    sm = new_sm()
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rid = sm.create_rec(t, fid, b"hello")
    return sm, fid, rid


def body_of(sm, rid):
    with sm.transaction() as t:
        return sm.read_rec(t, rid).body


@pytest.mark.parametrize("call, where", [
    (lambda sm, t, fid, rid: sm.create_rec(t, fid, "text"), "s(1.3): a record body must be bytes, not str 'text'"),
    (lambda sm, t, fid, rid: sm.create_rec(t, fid, None), "s(1.3): a record body must be bytes, not NoneType"),
    (lambda sm, t, fid, rid: sm.create_rec(t, fid, b"x", hdr="h"), "s(1.3): a record header must be bytes, not str"),
    (lambda sm, t, fid, rid: sm.append_rec(t, rid, "more"), "r(1.3.16.0): the data must be bytes, not str 'more'"),
    (lambda sm, t, fid, rid: sm.update_rec(t, rid, 0, 42), "r(1.3.16.0): the data must be bytes, not int 42"),
])
def test_data_that_is_not_bytes_is_refused(sm_with_record, call, where):
    sm, fid, rid = sm_with_record
    logged = len(entries(sm))
    t = sm.begin()
    with pytest.raises(BadRequestError) as caught:
        call(sm, t, fid, rid)
    assert where in str(caught.value)
    sm.commit(t)
    assert len(entries(sm)) == logged  # nothing was logged (a transaction that wrote nothing logs no end)
    assert body_of(sm, rid) == b"hello"


@pytest.mark.parametrize("call", [
    lambda sm: sm.commit(None),
    lambda sm: sm.abort("T1"),
    lambda sm: sm.read_rec(None, RecordId(1, 3, 16, 0)),
])
def test_something_that_is_not_a_transaction_is_refused(sm_with_record, call):
    sm, _, rid = sm_with_record
    with pytest.raises(BadRequestError, match=r"not a transaction: .* \(begin one with sm.begin\(\)\)"):
        call(sm)
    assert body_of(sm, rid) == b"hello"


def test_begin_on_a_closed_storage_manager_is_refused():
    sm = new_sm("closed")
    sm.close()
    with pytest.raises(BadRequestError, match="sim:closed: the storage manager is closed"):
        sm.begin()
    assert sm.xcts.active() == []


@pytest.mark.parametrize("options, where", [
    ({"frames": 0}, "a buffer pool needs at least one frame, not 0"),
    ({"page_size": 100}, "page size 100 is outside 256..32768"),
])
def test_impossible_formats_are_user_errors(options, where):
    from minidb.io import SimDisk
    from minidb.pagestore.sm import StorageManager

    disk = SimDisk("fmt")
    with pytest.raises(BadRequestError) as caught:
        StorageManager.format(disk, **{"num_pages": 64, **options})
    assert isinstance(caught.value, UserError) and where in str(caught.value)
    assert "v1.vol" not in disk.list()


def test_buffer_pool_of_no_frames_is_a_user_error():
    with pytest.raises(BadRequestError, match="at least one frame, not -1"):
        BufferPool(-1, page_size=512)


@pytest.mark.parametrize("mode, duration, where", [
    ("ZZ", "long", "not a lock mode: 'ZZ' (one of NL, IS, IX, SH, SIX, UD, EX)"),
    (None, "long", "not a lock mode: None"),
    ("EX", "forever", "not a lock duration: 'forever' (one of instant, short, long)"),
    ("EX", 3, "not a lock duration: 3"),
])
def test_shore_locking_names_a_bad_mode_or_duration(mode, duration, where):
    manager = LockManager()
    sm = new_sm("locks", locking=manager)
    t = sm.begin()
    for call in (lambda: sm.xcts.lock(t, RecordId(1, 3, 16, 0), mode, duration),
                 lambda: sm.xcts.try_lock(t, RecordId(1, 3, 16, 0), mode, duration)):
        with pytest.raises(BadLockRequest) as caught:
            call()
        assert where in str(caught.value)
    assert manager.held(t) == {}
    sm.xcts.lock(t, RecordId(1, 3, 16, 0), "EX")  # a good request still works
    assert len(manager.held(t)) == 4
    sm.abort(t)


def test_shore_locking_alone_refuses_bad_names():
    with pytest.raises(BadLockRequest, match="not a lock mode: 'exclusive'"):
        ShoreLocking().lock(object(), RecordId(1, 3, 16, 0), "exclusive")


def test_low_level_calls_with_the_wrong_kind_of_argument(sm_with_record):
    from minidb.pagestore.ids import parse_id
    from minidb.pagestore.transactions.xctmgr import XctError

    sm, fid, rid = sm_with_record
    pid = rid.pid
    with pytest.raises(UserError, match="bad id None: expected a string"):
        parse_id(None)
    with pytest.raises(BadRequestError, match="parse_id turns"):
        sm.bp.fix(str(pid))
    with pytest.raises(BadRequestError, match="a LatchMode"):
        sm.bp.fix(pid, "EX")
    with pytest.raises(BadRequestError, match="unfix needs the page that fix returned"):
        sm.bp.unfix(None)
    t = sm.begin()
    with pytest.raises(XctError, match=f"rollback_to needs a save point of T{t.txn_id}"):
        sm.rollback_to(t, None)
    assert t.is_active
    sm.abort(t)
    page = sm.bp.fix(pid)  # nothing was left pinned or latched: the next fix works
    sm.bp.unfix(page)
    assert body_of(sm, rid) == b"hello"


@pytest.mark.parametrize("arguments, message", [
    ({"num_pages": 2**40}, "num_pages 1099511627776 is outside 1..4,294,967,295 (a page number is 4 bytes)"),
    ({"num_pages": 0}, "num_pages 0 is outside 1..4,294,967,295"),
    ({"num_pages": "64"}, "num_pages '64' is outside"),
    ({"num_pages": 20, "ext_sz": 8}, "is too small"),
    ({"ext_sz": 0}, "ext_sz 0 is outside 1..32"),
    ({"page_size": 100}, "page size 100 is outside"),
    ({"frames": 0}, "frames: a buffer pool needs at least one frame, not 0"),
])
def test_format_checks_its_arguments_before_writing_anything(tmp_path, arguments, message):
    from minidb.io import OSDisk
    from minidb.pagestore import StorageManager

    disk = OSDisk(tmp_path / "vol", create=True)
    with pytest.raises(BadRequestError, match=re.escape(message)):
        StorageManager.format(disk, **{"num_pages": 256, "page_size": 512, **arguments})
    assert disk.list() == []  # no empty log file left behind
    StorageManager.format(disk, num_pages=256, page_size=512).close()  # so formatting again works
    assert "v1.vol" in disk.list()


def test_a_format_that_fails_midway_deletes_only_what_it_created(tmp_path):
    from minidb.io import SimDisk
    from minidb.pagestore import StorageManager

    disk = SimDisk("full", capacity=64 * 1024)  # room for the log, not for the volume's first pages
    with disk.open("notes.txt", create=True) as f:
        f.append(b"the user's")
        f.fsync()
    with pytest.raises(DiskFullError):
        StorageManager.format(disk, num_pages=4096, page_size=4096)
    assert disk.list() == ["notes.txt"]
