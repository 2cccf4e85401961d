"""The read paths: one pread per fetch, backward scans by windows.

Each must give exactly what reading entry by entry gives: the same entries, and on damaged bytes
the same error (file and offset). (Checking an entry, ``check_entry``, and its twin agree on
damaged files in ``tests/agreement/scn_log.py``.)
"""

import dataclasses

import pytest

from minidb import impl
from minidb.errors import LogCorruptionError
from minidb.io import SimDisk
from minidb.log import LSN, TRACE
from minidb.log.entry import LOG_ENTRY
from minidb.log.fields import ItemFormatError
from minidb.log.header import pack_entry, read_header
from minidb.log.reader import READ_AHEAD, READ_BACK
from minidb.logstore.logdef import LOGSTORE_TYPES

from tests.log.helpers import file_bytes, new_log, put_file_bytes, write_messages


def reopened(messages, **options):
    """A synced log of ``messages`` on a SimDisk, closed and opened again (nothing buffered); (log, disk, LSNs)."""
    disk = SimDisk()
    log = new_log(disk, **options)
    lsns = write_messages(log, messages)
    log.close()
    return new_log(disk, **options), disk, lsns


def reads_during(disk, work):
    before = disk.stats["reads"]
    result = work()
    return disk.stats["reads"] - before, result


def test_a_fetch_is_one_pread():
    log, disk, lsns = reopened([f"message {i}" for i in range(20)])
    reads, entry = reads_during(disk, lambda: log.read(lsns[7]))
    assert reads == 1
    assert entry.values["message"] == "message 7"


def test_an_entry_longer_than_the_read_ahead_takes_a_second_pread():
    big = "x" * (READ_AHEAD + 100)
    log, disk, lsns = reopened(["small", big, "after"])
    reads, entry = reads_during(disk, lambda: log.read(lsns[1]))
    assert reads == 2
    assert entry.values["message"] == big
    assert log.read(lsns[2]).values["message"] == "after"


def test_a_backward_scan_reads_a_window_at_a_time():
    texts = [f"message number {i:04d}" for i in range(600)]  # about 20 KB: one window
    log, disk, lsns = reopened(texts)
    reads, entries = reads_during(disk, lambda: list(log.scan_backward()))
    assert [e.values["message"] for e in entries if e.entry_type is TRACE] == texts[::-1]
    assert reads <= 3  # the last entry (one pread), then one window; entry by entry it was 2 per entry
    assert [e.lsn for e in entries] == [e.lsn for e in log.scan()][::-1]


def test_a_backward_scan_across_windows_and_files_sees_every_entry():
    texts = [f"m{i:05d}" + "y" * (i % 50) for i in range(3000)]  # several windows, several files
    log, disk, _ = reopened(texts, file_max=40_000)
    assert len(log.end().files) > 2
    forward = [(e.lsn, e.item) for e in log.scan()]
    assert sum(1 for _ in log.scan_backward()) == len(forward)
    assert [(e.lsn, e.item) for e in log.scan_backward()] == forward[::-1]
    assert READ_BACK < 40_000 * len(log.end().files)


def test_a_backward_scan_sees_buffered_entries():
    log = new_log(SimDisk(), buffer_size=1 << 20)
    write_messages(log, ["on disk"])
    write_messages(log, [f"buffered {i}" for i in range(50)], sync=False)
    assert [e.values["message"] for e in log.scan_backward() if e.entry_type is TRACE][:2] == ["buffered 49", "buffered 48"]
    assert [e.lsn for e in log.scan_backward()] == [e.lsn for e in log.scan()][::-1]


def test_a_fetch_in_the_file_being_written_copies_only_what_it_reads(monkeypatch):
    # Entries of the current file below the buffer are read from disk without copying the
    # buffer; an entry in the buffer gets the buffer's bytes from its own offset on.
    log = new_log(SimDisk(), buffer_size=4096)
    flushed = write_messages(log, [f"early {i:03d} " + "z" * 40 for i in range(200)], sync=False)
    buffered = write_messages(log, [f"late {i}" for i in range(5)], sync=False)
    copied = []
    view = log._buffer_view

    def watched(number, start=None):
        pending = view(number, start)
        if pending is not None:
            copied.append(len(pending[0]))
        return pending

    monkeypatch.setattr(log.reader, "_buffered", watched)
    assert log.read(flushed[3]).values["message"].startswith("early 003")
    assert copied == [0]
    assert [log.read(lsn).values["message"] for lsn in buffered] == [f"late {i}" for i in range(5)]
    assert copied[1] == sum(log.read(lsn).size for lsn in buffered)  # from the first late entry to the end
    assert copied[-1] == log.read(buffered[-1]).size
    assert [(e.lsn, e.item) for e in log.scan()][-5:] == [(lsn, log.read(lsn).item) for lsn in buffered]


def test_a_damaged_entry_inside_a_window_is_reported_as_a_fetch_reports_it():
    log, disk, lsns = reopened([f"message {i}" for i in range(100)], file_max=1000)
    log.close()
    damaged = lsns[20]
    assert damaged.file < lsns[-1].file  # opening reads only the last file: it will not notice
    data = bytearray(file_bytes(disk, damaged.file))
    data[damaged.offset + 16] ^= 0x01  # a bit of its item: the checksum no longer matches
    put_file_bytes(disk, bytes(data), damaged.file)
    log = new_log(disk, file_max=1000)
    with pytest.raises(LogCorruptionError) as careful:
        log.read(damaged)
    seen = []
    with pytest.raises(LogCorruptionError) as backward:
        for entry in log.scan_backward():
            seen.append(entry.lsn)
    assert str(backward.value) == str(careful.value)
    assert "0x%x" % damaged.offset in str(backward.value) and "checksum" in str(backward.value)
    assert seen[-1] == lsns[21]


# -- the transaction id without decoding the item (the twin, minidb/fast/log/entry.py) ---------
def test_txn_id_decodes_only_the_first_field_of_transactional_entries():
    with impl.using("fast"):
        log = new_log(SimDisk())
        commit = log.append(LOGSTORE_TYPES.Commit, {"txn_id": -42, "txn_prev_lsn": LSN(1, 0), "time_ms": 5})
        trace = log.append(TRACE, {"message": "not transactional"})
        entry = log.read(commit)
        assert entry.txn_id == -42
        assert "values" not in entry.__dict__  # the item was not decoded to learn it
        assert entry.values["txn_id"] == -42 and entry.txn_id == -42
        other = log.read(trace)
        assert other.txn_id is None and "values" not in other.__dict__


@pytest.mark.parametrize("which", [impl.ENGINE, impl.FAST])
def test_a_short_transactional_item_still_fails_as_decoding_it_fails(which):
    header, _ = read_header(pack_entry(0x50, 0, 0, b"\x01\x02"), 0)
    with impl.using(which):
        entry = LOG_ENTRY.call(LSN(1, 0x26), header, b"\x01\x02")
    with pytest.raises(ItemFormatError, match="runs past the item"):
        _ = entry.values
    with pytest.raises(ItemFormatError, match="runs past the item"):
        _ = entry.txn_id  # the same error as decoding the item, not a wrong id


@pytest.mark.parametrize("which", [impl.ENGINE, impl.FAST])
def test_a_log_entry_is_still_frozen_and_compared_by_value(which):
    with impl.using(which):
        log, _, lsns = reopened(["one", "two"])
        entry = log.read(lsns[0])
        with pytest.raises(dataclasses.FrozenInstanceError):
            entry.item = b"changed"
        assert entry == log.read(lsns[0]) and hash(entry) == hash(log.read(lsns[0]))
        assert entry != log.read(lsns[1])
        assert entry.values == {"message": "one"}


def test_a_scan_of_one_file_lists_no_directory_and_reads_only_that_file(monkeypatch):
    disk = SimDisk()
    log = new_log(disk, file_max=1024)
    lsns = write_messages(log, [f"message number {i:04d}" for i in range(1200)])
    files = sorted({lsn.file for lsn in lsns})
    assert len(files) > 30
    listed = []
    monkeypatch.setattr(disk, "list", lambda: listed.append(True) or SimDisk.list(disk))
    middle = files[len(files) // 2]
    reads, entries = reads_during(disk, lambda: list(log.scan(LSN(middle, 0), LSN(middle + 1, 0))))
    assert entries and {e.lsn.file for e in entries} == {middle}
    assert [e.lsn for e in entries if e.entry_type is TRACE] == [lsn for lsn in lsns if lsn.file == middle]
    assert reads == 2  # the file, and the next one, whose FileHeader says where the file ends
    assert listed == []  # before: the whole directory listed for each scan, however short
