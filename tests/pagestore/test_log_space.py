"""Log space: a bounded log, reservations for rollbacks, a full disk, scavenging, and master checks after it."""

from __future__ import annotations

import os

import pytest

from minidb.errors import SimulatedCrash
from minidb.io import CrashMode, OSDisk, SimDisk
from minidb.log.files import all_log_file_numbers, file_name, log_file_numbers
from minidb.log.head import read_log_head, write_log_head
from minidb.log.lsn import LSN
from minidb.pagestore.errors import BadRequestError, LogLostError, OutOfLogSpaceError
from minidb.pagestore.restart.master import MASTER_FILE, read_master, write_master
from minidb.pagestore.sm import StorageManager
from minidb.pagestore.volume.volfile import STAMP_SLOTS_SIZE
from minidb.pagestore.wal.logdef import PAGESTORE_TYPES, REC_INSERT
from minidb.pagestore.wal.logspace import END_RESERVE, reservation

from tests.pagestore.sm_helpers import new_sm, open_again

PARTITION = 2400
BOUNDED = {"log_size": 4 * PARTITION, "partitions": 4}


def bounded_sm(name: str = "space", **options) -> StorageManager:
    return new_sm(name, **{**BOUNDED, **options})


def with_file(sm: StorageManager):
    with sm.transaction() as t:
        fid = sm.create_file(t)
    return fid


def fill_until_refused(sm: StorageManager, t, fid, size: int = 200) -> tuple[list, OutOfLogSpaceError]:
    rids = []
    for _ in range(100):
        try:
            rids.append(sm.create_rec(t, fid, bytes([len(rids) % 256]) * size))
        except OutOfLogSpaceError as e:
            return rids, e
    raise AssertionError("the log never refused")


def full_disk(sm: StorageManager) -> None:
    """Fill the disk: nothing more can be written beyond the files' present sizes."""
    sm.disk.capacity = sum(sm.disk.size(name) for name in sm.disk.list())


# -- options -----------------------------------------------------------------------------------------------
def test_the_bounded_log_has_its_partitions_preallocated_as_spares():
    sm = bounded_sm()
    names = sm.disk.list()
    assert [n for n in names if n.startswith("logspare")] == ["logspare1", "logspare2", "logspare3"]
    assert all(sm.disk.size(n) == PARTITION for n in names if n.startswith("logspare") or n.endswith(".jdb"))
    assert sm.log.max_files == 4 and sm.log.file_max == PARTITION


def test_bad_log_size_and_partitions_are_refused():
    with pytest.raises(BadRequestError, match="partitions"):
        new_sm(log_size=10_000, partitions=1)
    with pytest.raises(BadRequestError, match="log_size 1000 must be"):
        new_sm(log_size=1000, partitions=8)


def test_an_unbounded_log_has_no_log_space_accounting():
    sm = new_sm()
    assert sm.log_space is None and sm.log.admit is None and not sm.scavenging


def test_the_fudge_factor_defaults_to_zero_outside_the_page_store():
    from minidb.logstore.logdef import LOGSTORE_TYPES

    assert all(t.fudge == 0 for t in LOGSTORE_TYPES)
    assert REC_INSERT.fudge == 1.5 and PAGESTORE_TYPES.xct_end.fudge == 0


# -- reservations ------------------------------------------------------------------------------------------
def test_logging_reserves_the_fudge_factor_and_commit_releases_it():
    sm = bounded_sm()
    fid = with_file(sm)
    assert sm.log_space.total == 0
    t = sm.begin()
    rid = sm.create_rec(t, fid, b"x" * 100)
    inserts = [e for e in sm.log.scan() if e.type_name == "rec_insert" and e.txn_id == t.txn_id]
    expected = (sum(reservation(e.entry_type, e.size) for e in sm.log.scan() if e.txn_id == t.txn_id) + END_RESERVE
                + sm.log_space.waste)  # one page changed: room for its image, should a CLR find it clean
    assert inserts and sm.log_space.held(t.txn_id) == expected == sm.log_space.total
    assert reservation(REC_INSERT, inserts[0].size) == -(-inserts[0].size * 3 // 2)
    sm.commit(t)
    assert sm.log_space.total == 0 and not sm.log_space.reserved and not sm.log_space.ends
    assert rid in sm.contents()[fid]


def test_abort_and_savepoint_rollback_give_the_reservation_back():
    sm = bounded_sm()
    fid = with_file(sm)
    t = sm.begin()
    sm.create_rec(t, fid, b"a" * 80)
    sp = sm.save_point(t)
    at_savepoint = sm.log_space.held(t.txn_id)
    for _ in range(3):
        sm.create_rec(t, fid, b"b" * 120)
    assert sm.log_space.held(t.txn_id) > at_savepoint
    sm.rollback_to(t, sp)
    assert sm.log_space.held(t.txn_id) == at_savepoint
    sm.abort(t)
    assert sm.log_space.total == 0


def test_restart_reserves_again_for_the_losers_and_ends_at_zero():
    sm = bounded_sm()
    fid = with_file(sm)
    t = sm.begin()
    for _ in range(4):
        sm.create_rec(t, fid, b"c" * 90)
    held = sm.log_space.held(t.txn_id)
    sm.log.sync()
    sm.disk.crash(CrashMode.nothing())
    again = open_again(sm.disk, restart=False, **BOUNDED)
    again.restart.analysis()
    again.restart.redo()
    seen = {}
    original = again.log_space.reserve_chain

    def spy(tid, undo_nxt, read):
        seen[tid] = original(tid, undo_nxt, read)
        return seen[tid]

    again.log_space.reserve_chain = spy
    again.restart.undo()
    assert seen == {t.txn_id: held}
    again.restart.finish()
    assert again.log_space.total == 0 and again.contents() == {fid: {}}


def test_an_entry_of_an_odd_size_reserves_its_fudge_rounded_up():
    """1.5 times an odd size is half a byte more than a whole number: the reservation rounds it up."""
    sm = bounded_sm()
    fid = with_file(sm)
    t = sm.begin()
    for body in (b"y" * 100, b"z" * 101):
        sm.create_rec(t, fid, body)
    sizes = [e.size for e in sm.log.scan() if e.type_name == "rec_insert" and e.txn_id == t.txn_id]
    assert any(size % 2 for size in sizes)
    assert sm.log_space.held(t.txn_id) == (sum(-(-size * 3 // 2) for size in sizes) + END_RESERVE
                                           + sm.log_space.waste)
    sm.abort(t)


@pytest.mark.parametrize("size", [8, 23, 59, 200])
def test_forward_work_never_takes_the_room_kept_for_rollbacks_and_a_checkpoint(size):
    """However the last admitted entry fell, the room left covers every reservation and the checkpoint's."""
    sm = bounded_sm()
    fid = with_file(sm)
    t = sm.begin()
    fill_until_refused(sm, t, fid, size)
    space = sm.log_space
    assert sm.log.room(space.waste) >= space.total + space.chkpt_reserve
    sm.abort(t)
    assert space.total == 0 and sm.check() == []


# -- out of log space ----------------------------------------------------------------------------------------
def test_out_of_log_space_names_the_transaction_the_amounts_and_the_oldest_holder_and_loses_nothing():
    sm = bounded_sm()
    fid = with_file(sm)
    with sm.transaction() as t:
        kept = sm.create_rec(t, fid, b"committed")
    old = sm.begin()
    sm.create_rec(old, fid, b"old")
    t = sm.begin()
    rids, error = fill_until_refused(sm, t, fid)
    message = str(error)
    assert f"T{t.txn_id} cannot log" in message and "bytes are free" in message and "needs" in message
    assert f"the oldest transaction holding the log is T{old.txn_id} (first LSN {old.first_lsn})" in message
    assert rids  # it did some work first
    sm.abort(t)  # the transaction can still abort
    sm.abort(old)
    assert sm.contents() == {fid: {kept: (b"", b"committed")}} and sm.check() == []
    assert sm.log_space.total == 0


def test_a_refused_transaction_can_roll_back_to_a_savepoint_and_commit():
    sm = bounded_sm()
    fid = with_file(sm)
    t = sm.begin()
    first = sm.create_rec(t, fid, b"first")
    sp = sm.save_point(t)
    fill_until_refused(sm, t, fid)
    sm.rollback_to(t, sp)
    sm.commit(t)
    assert sm.contents() == {fid: {first: (b"", b"first")}}


def test_checkpoint_refused_when_it_would_eat_the_reserve_kept_for_restart():
    sm = bounded_sm()
    fid = with_file(sm)
    t = sm.begin()
    fill_until_refused(sm, t, fid, size=60)
    with pytest.raises(OutOfLogSpaceError, match="cannot take a checkpoint"):
        for _ in range(20):
            sm.checkpoint()
    sm.abort(t)
    sm.close()  # the final checkpoint uses the reserve
    assert StorageManager.open(sm.disk, **BOUNDED).contents() == {fid: {}}


# -- a full disk ----------------------------------------------------------------------------------------------
def on_a_full_disk(sm: StorageManager) -> StorageManager:
    """Reopen ``sm``'s disk grown full: other data took the room of all spare partitions but one."""
    sm.close()
    for name in [n for n in sm.disk.list() if n.startswith("logspare")][1:]:
        sm.disk.delete(name)
    full_disk(sm)
    again = StorageManager.open(sm.disk, **BOUNDED)
    assert again.log.stats["nSparesFailed"] == 1
    return again


def pages_of_records(sm: StorageManager, count: int) -> list:
    """``count`` records in a new file, a full page each, each committed and followed by a checkpoint."""
    fid = with_file(sm)
    rids = []
    for i in range(count):
        with sm.transaction() as t:
            rids.append(sm.create_rec(t, fid, bytes([i]) * 400))
        sm.checkpoint()
    return rids


def test_an_abort_whose_pages_were_written_clean_logs_their_images_on_a_full_log():
    sm = bounded_sm()
    rids = pages_of_records(sm, 5)
    before = sm.contents()
    t = sm.begin()
    with pytest.raises(OutOfLogSpaceError):
        for n in range(1000):  # small updates round the pages until the log refuses one
            sm.update_rec(t, rids[n % len(rids)], n % 400, b"u")
    sm.bp.clean()  # every page t changed is clean: each page's first CLR logs its full image first
    aborted_at = sm.log.end_lsn
    sm.abort(t)  # the images belong to no transaction: t reserved room for them
    images = [e for e in sm.log.scan(aborted_at) if e.type_name == "page_image"]
    assert len(images) >= 2 and sm.log_space.total == 0
    assert sm.contents() == before
    sm.checkpoint()  # the checkpoint reserve is still there
    sm.close()
    assert StorageManager.open(sm.disk, **BOUNDED).contents() == before


@pytest.mark.parametrize("how", ["abort", "restart"])
def test_an_abort_or_restarts_undo_is_never_refused_when_every_page_needs_its_image(how):
    """Two transactions change pages until the bounded log refuses; every page is then written clean, so
    each page's first CLR must log the page's full image first (no checkpoint is needed for that: the rule
    is clean-to-dirty, pageimage.py). Their abort, or restart's undo of them as losers, still has room:
    each page's image was reserved with the transaction's first entry on it."""
    sm = bounded_sm()
    rids = pages_of_records(sm, 6)
    before = sm.contents()
    xcts = [sm.begin(), sm.begin()]
    with pytest.raises(OutOfLogSpaceError):
        for n in range(1000):  # each changes three pages of its own, in turn, until the log is full
            sm.update_rec(xcts[n % 2], rids[3 * (n % 2) + (n // 2) % 3], n % 400, b"u")
    sm.bp.force_all()
    start = sm.log.end_lsn
    if how == "abort":
        for t in xcts:
            sm.abort(t)
        after = sm
    else:
        sm.log.sync()
        sm.disk.crash(CrashMode.everything())
        after = open_again(sm.disk, **BOUNDED)
        assert after.restart_report.undo.losers == sorted(t.txn_id for t in xcts)
    assert any(e.type_name == "page_image" for e in after.log.scan(start))
    assert after.contents() == before and after.log_space.total == 0 and after.check() == []


def test_abort_on_a_full_disk_succeeds():
    sm = bounded_sm()
    fid = with_file(sm)
    with sm.transaction() as t:
        kept = sm.create_rec(t, fid, b"kept")
    sm = on_a_full_disk(sm)
    t = sm.begin()
    rids, _ = fill_until_refused(sm, t, fid, size=60)
    assert rids and sm.disk.capacity == sum(sm.disk.size(n) for n in sm.disk.list())  # no byte to spare
    sm.abort(t)
    assert sm.contents() == {fid: {kept: (b"", b"kept")}}
    sm.close()
    assert StorageManager.open(sm.disk, **BOUNDED).contents() == {fid: {kept: (b"", b"kept")}}


def test_restart_on_a_full_disk_rolls_the_losers_back():
    sm = bounded_sm()
    fid = with_file(sm)
    sm = on_a_full_disk(sm)
    t = sm.begin()
    fill_until_refused(sm, t, fid)
    sm.log.sync()
    sm.disk.crash(CrashMode.everything())
    again = open_again(sm.disk, **BOUNDED)
    assert again.restart_report.undo.losers == [t.txn_id]
    assert again.contents() == {fid: {}} and again.check() == []


def test_an_unbounded_log_cannot_abort_on_a_full_disk_that_told_no_bound():
    """Why reservations exist: a disk that had no capacity when the storage manager opened gives no
    accounting, and the abort's entries need new space that is no longer there."""
    sm = new_sm(buffer_size=64)
    fid = with_file(sm)
    t = sm.begin()
    sm.create_rec(t, fid, b"d" * 100)
    full_disk(sm)
    with pytest.raises(Exception, match="disk full"):
        sm.abort(t)


# -- an unbounded log on a disk with a capacity ---------------------------------------------------------------------
DISK_BOUND = {"buffer_size": 256, "file_max": 20_000}  # the default log (no log_size), small files and buffer
KEEP_EVERYTHING = CrashMode.everything()


def on_a_bounded_disk(name: str, crash_mode: CrashMode = KEEP_EVERYTHING):
    """A storage manager on a 400,000-byte disk with one committed record, then T filling the disk through
    forward work on the default log until refused; the crash mode is the one a crash during its abort uses."""
    disk = SimDisk(name, capacity=400_000)
    sm = StorageManager.format(disk, num_pages=512, ext_sz=4, page_size=512, frames=16, **DISK_BOUND)
    fid = with_file(sm)
    with sm.transaction() as t:
        kept = sm.create_rec(t, fid, b"kept")
    t = sm.begin()
    for n in range(10_000):
        try:
            sm.create_rec(t, fid, bytes([n % 256]) * 60)
            if n % 50 == 0:
                sm.update_rec(t, kept, 0, b"K")
        except OutOfLogSpaceError as refusal:
            assert "bounded by its disk's free space" in str(refusal) and f"T{t.txn_id} cannot log" in str(refusal)
            assert n > 100 and disk.free_space() < 100_000
            return sm, t, fid, kept
    raise AssertionError("forward work was never refused")


def test_forward_work_on_a_full_disk_is_refused_first_and_the_abort_succeeds():
    sm, t, fid, kept = on_a_bounded_disk("refused")
    sm.abort(t)
    assert sm.contents() == {fid: {kept: (b"", b"kept")}} and sm.log_space.total == 0
    sm.close()
    again = open_again(sm.disk, **DISK_BOUND)
    assert again.contents() == {fid: {kept: (b"", b"kept")}} and again.check() == []


def test_restart_on_a_disk_filled_by_a_loser_rolls_it_back():
    sm, t, fid, kept = on_a_bounded_disk("loser")
    sm.log.sync()
    sm.disk.crash(CrashMode.everything())
    again = open_again(sm.disk, **DISK_BOUND)
    assert again.restart_report.undo.losers == [t.txn_id]
    assert again.contents() == {fid: {kept: (b"", b"kept")}} and again.check() == []
    assert again.log_space.total == 0


@pytest.mark.parametrize("after_ops", [1, 4, 12, 30])
@pytest.mark.parametrize("mode", ["nothing", "everything"])
def test_a_crash_in_the_middle_of_an_abort_on_a_full_disk_restarts(after_ops, mode):
    sm, t, fid, kept = on_a_bounded_disk(f"mid{after_ops}")
    sm.disk.schedule_crash(after_ops, getattr(CrashMode, mode)())
    with pytest.raises(SimulatedCrash):
        sm.abort(t)
    again = open_again(sm.disk, **DISK_BOUND)
    assert again.restart_report.undo.losers == [t.txn_id]
    assert again.contents() == {fid: {kept: (b"", b"kept")}} and again.check() == []
    again.close()  # the clean close's checkpoint fits too
    assert open_again(sm.disk, **DISK_BOUND).contents() == {fid: {kept: (b"", b"kept")}}


def test_the_volume_takes_its_disk_space_when_formatted(tmp_path):
    """Writing a page back (in an abort, in restart) never needs new space: the file is not sparse."""
    disk = OSDisk(tmp_path / "vol", create=True)
    StorageManager.format(disk, num_pages=256, page_size=4096).close()
    st = os.stat(disk.where("v1.vol"))
    assert st.st_size == 256 * 4096 + STAMP_SLOTS_SIZE and st.st_blocks * 512 >= st.st_size  # the pages, the stamps


def test_a_storage_manager_on_real_files_reserves_against_the_file_system(tmp_path):
    sm = StorageManager.format(OSDisk(tmp_path / "os", create=True), num_pages=64)
    assert sm.log_space is not None and sm.log.room() <= sm.disk.free_space()
    sm.close()


# -- scavenging -------------------------------------------------------------------------------------------------
def scavenge_bound(sm: StorageManager) -> LSN:
    """The bound, computed here from its parts: master checkpoint, its chkpt_end, dirty pages, transactions."""
    master = read_master(sm.disk)
    end = next(e for e in sm.log.scan(master.master) if e.type_name == "chkpt_end")
    candidates = [master.master, end.values["min_rec_lsn"], *sm.bp.dirty_page_table().values(),
                  *(x.first_lsn for x in sm.xcts.active())]
    return min(c for c in candidates if not c.is_null)


def busy(sm: StorageManager, fid, rounds: int, size: int = 150) -> None:
    for i in range(rounds):
        with sm.transaction() as t:
            sm.create_rec(t, fid, bytes([i]) * size)


def test_scavenging_removes_exactly_the_files_below_the_bound():
    archived = {}
    sm = new_sm(file_max=1024, scavenge=True, archive=lambda name, data: archived.setdefault(name, data))
    fid = with_file(sm)
    holder = sm.begin()
    sm.create_rec(holder, fid, b"holds the log")
    busy(sm, fid, 6)
    before = {n: sm.disk.open(file_name(n)).read_all() for n in log_file_numbers(sm.disk)}
    sm.checkpoint()
    bound = scavenge_bound(sm)
    assert bound == holder.first_lsn
    assert log_file_numbers(sm.disk) == all_log_file_numbers(sm.disk)
    assert log_file_numbers(sm.disk)[0] == bound.file == read_log_head(sm.disk)
    assert sorted(archived) == [file_name(n) for n in before if n < bound.file]
    assert all(archived[file_name(n)] == before[n] for n in before if n < bound.file)
    sm.commit(holder)
    busy(sm, fid, 6)
    sm.checkpoint()
    bound = scavenge_bound(sm)
    assert bound.file > holder.first_lsn.file
    assert log_file_numbers(sm.disk)[0] == bound.file


def test_a_dirty_page_holds_the_log_until_it_is_written():
    sm = new_sm(file_max=1024, scavenge=True, frames=64)
    fid = with_file(sm)
    busy(sm, fid, 8)
    sm.checkpointer.take()  # a checkpoint without the cleaning: the dirty pages hold the log
    sm.scavenge()
    dirty = min(sm.bp.dirty_page_table().values())
    assert log_file_numbers(sm.disk)[0] == min(dirty, scavenge_bound(sm)).file < sm.log.end_lsn.file
    sm.checkpoint()  # cleans the pages holding older files, then scavenges
    assert log_file_numbers(sm.disk)[0] == scavenge_bound(sm).file


def test_the_warning_names_the_oldest_transaction_holding_the_log():
    warnings = []
    sm = new_sm(file_max=1024, scavenge=True, on_log_held=lambda *args: warnings.append(args))
    fid = with_file(sm)
    holder = sm.begin()
    sm.create_rec(holder, fid, b"x")
    younger = sm.begin()
    busy(sm, fid, 6)
    sm.create_rec(younger, fid, b"y")
    sm.checkpoint()
    assert warnings and warnings[-1][0] == holder.txn_id and warnings[-1][1] == holder.first_lsn
    assert warnings[-1][2] == sm.scavenge_bound().file - holder.first_lsn.file >= 2  # the files it holds
    warnings.clear()
    sm.commit(holder)
    sm.commit(younger)
    sm.checkpoint()
    assert warnings == []


def test_restart_after_scavenging_recovers_committed_work_and_rolls_back_the_rest():
    sm = bounded_sm()
    fid = with_file(sm)
    for _ in range(4):
        busy(sm, fid, 3, size=100)
        sm.checkpoint()
    assert read_log_head(sm.disk) > 1
    committed = sm.contents()
    t = sm.begin()
    sm.create_rec(t, fid, b"in flight")
    sm.log.sync()
    sm.disk.crash(CrashMode.everything())
    again = open_again(sm.disk, **BOUNDED)
    assert again.contents() == committed and again.log_space.total == 0


# -- the log head after scavenging --------------------------------------------------------------------------------
def scavenged_disk():
    sm = new_sm(file_max=1024, scavenge=True)
    fid = with_file(sm)
    busy(sm, fid, 8)
    sm.checkpoint()
    sm.close()
    assert read_log_head(sm.disk) > 1
    return sm.disk


def test_a_missing_master_is_refused_after_scavenging():
    disk = scavenged_disk()
    disk.delete(MASTER_FILE)
    with pytest.raises(LogLostError, match="master checkpoint record is missing.*scavenged"):
        open_again(disk, scavenge=True)


def test_a_master_older_than_the_first_log_file_is_refused():
    disk = scavenged_disk()
    record = read_master(disk)
    write_master(disk, LSN(1, 0x100), LSN(1, 0x200))
    with pytest.raises(LogLostError, match="older than the log"):
        open_again(disk, scavenge=True)
    assert record.master.file >= read_log_head(disk)


def test_a_master_file_cut_to_one_slot_is_refused():
    disk = scavenged_disk()
    with disk.open(MASTER_FILE) as f:
        f.truncate(32)
        f.fsync()
    with pytest.raises(LogLostError, match="cut short"):
        open_again(disk, scavenge=True)


def test_a_lost_first_file_at_the_head_is_still_lost():
    disk = scavenged_disk()
    disk.delete(file_name(read_log_head(disk)))
    with pytest.raises(Exception, match="missing|lost"):
        open_again(disk, scavenge=True)


def test_a_crash_between_the_head_record_and_the_deletion_is_harmless():
    sm = new_sm(file_max=1024)
    fid = with_file(sm)
    busy(sm, fid, 8)
    sm.bp.force_all()
    sm.checkpoint()
    contents = sm.contents()
    head = read_master(sm.disk).master.file  # no page and no transaction needs the files before it
    assert head > 1
    write_log_head(sm.disk, head)  # recorded, then the crash: the files below are still there
    sm.disk.crash(CrashMode.nothing())
    leftovers = [n for n in all_log_file_numbers(sm.disk) if n < head]
    assert leftovers and log_file_numbers(sm.disk)[0] == head
    from minidb.log.verify import verify_log

    assert verify_log(sm.disk).problem is None
    again = open_again(sm.disk)
    assert all_log_file_numbers(sm.disk)[0] == head  # finished off on open
    assert again.contents() == contents


def test_restart_drops_the_tmp_files_on_a_log_that_committed_work_filled():
    """Restart's own transaction, which destroys the TMP files before restart's checkpoint frees any log,
    reserves nothing for a rollback: on a log that committed work filled, a reservation six times its entries
    would be refused and restart could not finish (crashtest pagestore seed 378)."""
    sm = bounded_sm()
    fid = with_file(sm)
    with sm.transaction() as t:
        tmp = sm.create_file(t, "tmp")
        sm.create_rec(t, tmp, b"gone after restart")
    while True:  # commit what fits until not even one record does
        t = sm.begin()
        rids, _ = fill_until_refused(sm, t, fid, size=120)
        sm.commit(t)
        if not rids:
            break
    contents = sm.contents()[fid]
    sm.disk.crash(CrashMode.everything())
    again = open_again(sm.disk, **BOUNDED)
    assert again.files.files() == [fid] and again.contents() == {fid: contents} and again.check() == []
    assert again.log_space.total == 0
