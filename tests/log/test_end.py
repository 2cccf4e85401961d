"""Opening a log: torn tails are cut and reported, corruption is an error that changes nothing."""

import pytest

from minidb.errors import LogCorruptionError, LogError
from minidb.io import CrashMode, SimDisk
from minidb.log import LSN, TRACE, file_name, find_end
from minidb.log.verify import verify_log

from tests.log.helpers import file_bytes, messages, new_log, put_file_bytes, synced_log, write_messages

MESSAGES = [f"entry {i}: " + "z" * (i * 7) for i in range(8)]



def test_a_clean_log_has_nothing_to_cut():
    disk, lsns = synced_log(MESSAGES)
    end = find_end(disk)
    assert end.cut is None and end.last_entry == lsns[-1]


def test_torn_tail_is_cut_reported_and_truncated():
    disk = SimDisk()
    log = new_log(disk, buffer_size=1)  # one write per entry
    write_messages(log, MESSAGES[:4])
    write_messages(log, MESSAGES[4:], sync=False)
    log.flush()
    disk.crash(CrashMode.torn(10))
    reopened = new_log(disk)
    cut = reopened.tail_cut
    assert cut is not None and cut.kind == "torn" and cut.length == 10
    assert "cut 10 bytes" in str(cut) and file_name(1) in str(cut)
    assert messages(reopened) == MESSAGES[:7]
    assert disk.size(file_name(1)) == cut.offset  # the writer truncated the file


def test_a_reader_reports_the_torn_tail_but_changes_nothing():
    disk = SimDisk()
    log = new_log(disk)
    write_messages(log, MESSAGES[:-1])
    write_messages(log, MESSAGES[-1:], sync=False)
    log.flush()
    disk.crash(CrashMode.torn(5))
    size = disk.size(file_name(1))
    events = len(disk.events)
    reader = new_log(disk, readonly=True)
    assert reader.tail_cut is not None
    assert messages(reader) == MESSAGES[:-1]
    assert disk.size(file_name(1)) == size and len(disk.events) == events


def test_unwritten_space_from_a_lost_write_ends_the_log():
    disk = SimDisk()
    log = new_log(disk, buffer_size=1)  # one write per entry
    write_messages(log, MESSAGES[:3])
    write_messages(log, MESSAGES[3:], sync=False)
    # keep the first and third unsynced writes, lose the second: a hole of zeros
    disk.crash(CrashMode.prefix(1))
    first = file_bytes(disk)
    disk2 = SimDisk()
    log2 = new_log(disk2, buffer_size=1)
    write_messages(log2, MESSAGES[:3])
    lsns = write_messages(log2, MESSAGES[3:], sync=False)
    data = bytearray(file_bytes(disk2))
    hole = slice(lsns[1].offset, lsns[2].offset)
    data[hole] = bytes(hole.stop - hole.start)
    put_file_bytes(disk2, bytes(data))
    reopened = new_log(disk2)
    assert reopened.tail_cut.kind == "unwritten"
    assert reopened.tail_cut.offset == lsns[1].offset
    assert messages(reopened) == MESSAGES[:4]
    assert first  # the prefix crash itself leaves a clean shorter log
    assert messages(new_log(disk)) == MESSAGES[:4]


@pytest.mark.parametrize("where", ["item", "checksum", "type", "size", "prev"])
def test_a_bad_entry_before_intact_ones_is_corruption_and_nothing_is_deleted(where):
    disk, lsns = synced_log(MESSAGES)
    victim = lsns[3]
    data = bytearray(file_bytes(disk))
    offset = {"item": victim.offset + 20, "checksum": victim.offset, "type": victim.offset + 4,
              "size": victim.offset + 10, "prev": victim.offset + 6}[where]
    data[offset] ^= 0x04
    put_file_bytes(disk, bytes(data))
    before = file_bytes(disk)
    with pytest.raises(LogCorruptionError) as caught:
        new_log(disk)
    error = caught.value
    assert error.file_name == "00000001.jdb" and error.offset == victim.offset
    assert f"at offset 0x{victim.offset:x}" in str(error) and "not a torn tail" in str(error)
    assert file_bytes(disk) == before
    report = verify_log(disk)
    assert not report.ok and report.problem.offset == victim.offset


def test_corruption_in_an_earlier_file_is_found_by_readers_and_verify():
    disk, lsns = synced_log(MESSAGES, file_max=300)
    assert lsns[-1].file >= 2
    victim = lsns[1]
    data = bytearray(file_bytes(disk, victim.file))
    data[victim.offset + 16] ^= 0xFF
    put_file_bytes(disk, bytes(data), victim.file)
    log = new_log(disk)  # opening reads only the last file
    with pytest.raises(LogCorruptionError, match=f"00000001.jdb at offset 0x{victim.offset:x}"):
        list(log.scan())
    report = verify_log(disk)
    assert report.problem.file_name == "00000001.jdb" and report.problem.offset == victim.offset


def test_a_file_that_is_not_a_log_file():
    disk = SimDisk()
    with disk.open(file_name(1), create=True) as f:
        f.append(b"PK\x03\x04 this is a zip file, not a log" * 3)
    with pytest.raises(LogError, match="not a minidb log file"):
        new_log(disk)


def test_a_new_file_whose_header_never_reached_disk_is_started_again():
    disk = SimDisk()
    log = new_log(disk, file_max=256)
    write_messages(log, MESSAGES[:3])
    first_file_last = log.last_lsn
    log.append(TRACE, {"message": "x" * 200})  # starts file 2; its header is only buffered
    assert disk.exists(file_name(2))
    disk.crash()
    assert disk.size(file_name(2)) == 0
    end = find_end(disk)
    assert end.last_file == 2 and end.end_offset == 0 and end.last_entry == first_file_last
    log = new_log(disk, file_max=256)
    lsn = log.append(TRACE, {"message": "after"})
    log.sync()
    assert lsn.file == 2
    assert log.read(LSN(2, 0)).values["last_entry_lsn"] == first_file_last
    assert messages(log) == MESSAGES[:3] + ["after"]
    assert verify_log(disk).ok
