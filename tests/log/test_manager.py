"""The log manager: appending, files, scans, durability, group commit, faults."""

import threading

import pytest

from minidb.errors import DiskFullError, LogError, UserError
from minidb.io import CrashMode, OSDisk, SimDisk
from minidb.log import FILE_HEADER, LSN, NULL_LSN, TRACE, Provisional, file_name

from tests.log.helpers import messages, new_log, write_messages


def test_first_entry_lsn_and_prev_chain():
    log = new_log()
    a, b = write_messages(log, ["a", "bb"])
    assert a == LSN(1, 0x2e)  # after the 46-byte FileHeader
    entries = list(log.scan())
    assert [e.type_name for e in entries] == ["FileHeader", "Trace", "Trace"]
    assert [e.header.prev_offset for e in entries] == [0, 0, 0x2e]
    assert entries[2].lsn == b == entries[1].end
    assert log.read(b).values == {"message": "bb"}


def test_files_flip_at_file_max_and_headers_link_back():
    log = new_log(file_max=300)
    lsns = write_messages(log, [f"message {i:02d} " + "x" * 40 for i in range(12)])
    files = sorted({lsn.file for lsn in lsns})
    assert len(files) >= 3
    for number in files[1:]:
        header = log.read(LSN(number, 0))
        assert header.entry_type is FILE_HEADER
        last_of_previous = max(lsn for lsn in lsns if lsn.file == number - 1)
        assert header.values["last_entry_lsn"] == last_of_previous
    for lsn in lsns:
        assert lsn.offset + log.read(lsn).size <= 300 or lsn.offset == 0x2e


def test_an_entry_bigger_than_file_max_gets_a_file_of_its_own():
    log = new_log(file_max=256)
    small, big, after = write_messages(log, ["small", "B" * 1000, "after"])
    assert (small.file, big.file, after.file) == (1, 2, 3)
    assert messages(log) == ["small", "B" * 1000, "after"]


def test_force_flip_starts_the_next_file_once():
    log = new_log()
    (a,) = write_messages(log, ["a"])
    assert log.force_flip() == 2 and log.force_flip() == 2  # a file holding only its header stays
    (b,) = write_messages(log, ["b"])
    assert (a.file, b.file) == (1, 2)
    assert log.read(LSN(2, 0)).values["last_entry_lsn"] == a
    assert messages(log) == ["a", "b"]


def test_backward_scan_crosses_files():
    log = new_log(file_max=256)
    write_messages(log, [f"m{i}" * 20 for i in range(10)])
    forward = [e.lsn for e in log.scan()]
    backward = [e.lsn for e in log.scan_backward()]
    assert backward == forward[::-1]
    middle = forward[5]
    assert [e.lsn for e in log.scan_backward(middle)] == forward[:6][::-1]


def test_scan_between_lsns():
    log = new_log()
    lsns = write_messages(log, list("abcdef"))
    assert [e.values["message"] for e in log.scan(lsns[1], lsns[4])] == ["b", "c", "d"]


def test_unflushed_entries_are_readable():
    log = new_log(buffer_size=1 << 20)
    lsn = log.append(TRACE, {"message": "still in the buffer"})
    assert log.disk.size(file_name(1)) == 0
    assert log.read(lsn).values["message"] == "still in the buffer"
    assert messages(log) == ["still in the buffer"]


def test_reopen_continues_where_the_log_ended(tmp_path):
    disk = OSDisk(tmp_path, create=True)
    with new_log(disk, file_max=300) as log:
        write_messages(log, ["one", "two"] * 10)
        end = log.end_lsn
    log = new_log(disk, file_max=300)
    assert log.end_lsn == end and log.tail_cut is None
    write_messages(log, ["three"])
    assert messages(log)[-3:] == ["one", "two", "three"]


def test_provisional_and_replicated_flags_round_trip():
    log = new_log()
    vlsns = iter(range(1, 10))
    log.vlsn_allocator = lambda: next(vlsns)
    plain = log.append(TRACE, {"message": "p"}, provisional=Provisional.BEFORE_CKPT_END)
    rep = log.append(TRACE, {"message": "r"}, replicated=True)
    given = log.append(TRACE, {"message": "g"}, vlsn=42)
    assert log.read(plain).provisional is Provisional.BEFORE_CKPT_END
    assert log.read(rep).vlsn == 1 and log.read(rep).header.replicated
    assert log.read(given).vlsn == 42


def test_replicated_entry_without_vlsns_is_refused():
    log = new_log()
    with pytest.raises(LogError, match="allocates no VLSNs"):
        log.append(TRACE, {"message": "r"}, replicated=True)


def test_listeners_hear_every_append_after_the_latch():
    log = new_log()
    heard = []
    log.add_listener(lambda lsn, entry_type, vlsn: heard.append((lsn, entry_type.name, vlsn)))
    a = log.append(TRACE, {"message": "a"})
    assert heard == [(a, "Trace", None)]


def test_sync_makes_entries_durable():
    disk = SimDisk()
    log = new_log(disk)
    a = log.append(TRACE, {"message": "a"})
    assert not log.is_durable(a)
    log.sync(a)
    assert log.is_durable(a)
    b = log.append(TRACE, {"message": "b"})
    log.flush()
    disk.crash(CrashMode.nothing())
    assert messages(new_log(disk)) == ["a"]
    assert b  # b was flushed but never synced: gone


class GatedDisk(SimDisk):
    """A simulated disk whose fsyncs wait for a gate, so threads can queue up."""

    def __init__(self):
        super().__init__("gated")
        self.gate = threading.Event()
        self.in_fsync = threading.Event()
        self.gated = False

    def fsync(self, name, inode):
        if self.gated:
            self.in_fsync.set()
            self.gate.wait()
        super().fsync(name, inode)


def test_group_commit_shares_one_fsync():
    disk = GatedDisk()
    log = new_log(disk)
    lsns = [log.append(TRACE, {"message": f"txn {i}"}) for i in range(4)]
    disk.gated = True
    leader = threading.Thread(target=log.sync, args=(lsns[0],))
    leader.start()
    assert disk.in_fsync.wait(5)
    # The leader is inside its fsync; it captured the end of the log (all four entries) before.
    followers = [threading.Thread(target=log.sync, args=(lsn,)) for lsn in lsns[1:]]
    late = log.append(TRACE, {"message": "late"})
    late_thread = threading.Thread(target=log.sync, args=(late,))
    for t in followers + [late_thread]:
        t.start()
    disk.gate.set()
    for t in [leader, *followers, late_thread]:
        t.join(5)
        assert not t.is_alive()
    assert all(log.is_durable(lsn) for lsn in lsns + [late])
    # one fsync for the four, one more for the entry that came after the leader's flush
    assert log.stats["nFsyncs"] == 2
    assert log.stats["nSyncRequests"] == 5


def test_many_threads_commit_and_everything_survives(tmp_path):
    log = new_log(OSDisk(tmp_path, create=True), file_max=4096)

    def worker(n):
        for i in range(30):
            log.sync(log.append(TRACE, {"message": f"{n}:{i}"}))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log.close()
    found = messages(new_log(OSDisk(tmp_path)))
    assert sorted(found) == sorted(f"{n}:{i}" for n in range(4) for i in range(30))
    for n in range(4):
        assert [m for m in found if m.startswith(f"{n}:")] == [f"{n}:{i}" for i in range(30)]


def test_a_failed_fsync_makes_the_log_refuse_work():
    disk = SimDisk()
    log = new_log(disk)
    write_messages(log, ["durable"])
    log.append(TRACE, {"message": "lost"})
    disk.fail_fsyncs(1)
    with pytest.raises(LogError, match="fsync of 00000001.jdb failed"):
        log.sync()
    with pytest.raises(LogError, match="must be reopened"):
        log.append(TRACE, {"message": "more"})
    disk.crash()
    assert messages(new_log(disk)) == ["durable"]


def test_a_full_disk_refuses_the_append_and_changes_nothing():
    disk = SimDisk(capacity=200)
    log = new_log(disk, buffer_size=64)
    write_messages(log, ["fits"])
    ok = [log.append(TRACE, {"message": "m" * 20})]
    with pytest.raises(DiskFullError):
        for _ in range(20):
            ok.append(log.append(TRACE, {"message": "m" * 20}))
    end = log.end_lsn
    with pytest.raises(DiskFullError):
        log.append(TRACE, {"message": "m" * 20})
    assert log.end_lsn == end
    disk.capacity = None
    log.sync()
    assert messages(log) == ["fits"] + ["m" * 20] * len(ok)


def test_vlsns_have_no_gaps_when_an_append_fails():
    disk = SimDisk(capacity=150)
    log = new_log(disk, buffer_size=40)
    counter = iter(range(1, 1000))
    log.vlsn_allocator = lambda: next(counter)
    vlsns = []
    with pytest.raises(DiskFullError):
        for _ in range(10):
            vlsns.append(log.read(log.append(TRACE, {"message": "r" * 10}, replicated=True)).vlsn)
    disk.capacity = None
    vlsns.append(log.read(log.append(TRACE, {"message": "r"}, replicated=True)).vlsn)
    assert vlsns == list(range(1, len(vlsns) + 1))


def test_readonly_log_refuses_writes_and_bad_options():
    disk = SimDisk()
    new_log(disk).close()
    ro = new_log(disk, readonly=True)
    with pytest.raises(LogError, match="read-only"):
        ro.append(TRACE, {"message": "x"})
    with pytest.raises(UserError, match="file_max"):
        new_log(SimDisk(), file_max=10)


def test_reading_past_the_end_names_the_lsn():
    log = new_log()
    write_messages(log, ["a"])
    with pytest.raises(LogError, match="no log entry at 0x1/0x1000"):
        log.read(LSN(1, 0x1000))
    with pytest.raises(LogError, match="no log entry at NULL"):
        log.read(NULL_LSN)


def test_a_closed_or_read_only_log_refuses_appends_and_changes_nothing():
    disk = SimDisk()
    log = new_log(disk)
    write_messages(log, ["kept"])
    log.close()
    with pytest.raises(LogError, match="the log is closed"):
        log.append(TRACE, {"message": "after close"})
    readonly = new_log(disk, readonly=True)
    with pytest.raises(LogError, match="the log is open read-only"):
        readonly.append(TRACE, {"message": "read-only"})
    readonly.close()
    assert messages(new_log(disk)) == ["kept"]
