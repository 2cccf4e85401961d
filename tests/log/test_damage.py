"""Damage to a synced log is corruption, never a tail to cut: the reliability items of the log.

Item 1: a zeroed entry header in the middle of the last file, with intact entries after
it, used to be read as "unwritten space" and cut, losing every entry after it.
Item 9: a flipped bit in the type byte of the last file's FileHeader was "not a minidb
log" (a user error) instead of corruption; ``LSN(-1, 0)`` could be constructed.
"""

import pytest

from minidb.errors import LogCorruptionError, LogError, UserError
from minidb.io import SimDisk
from minidb.log import LSN, NULL_LSN, file_name, find_end
from minidb.log.scan import FileScanner, judge_bad_entry
from minidb.log.verify import verify_log
from minidb.logstore import Durability, Environment

from tests.log.helpers import file_bytes, messages, new_log, put_file_bytes, synced_log, write_messages
from tests.logstore.helpers import small_config

MESSAGES = [f"entry {i}: " + "k" * (i * 6) for i in range(12)]



def zero(disk, start, length, number=1):
    data = bytearray(file_bytes(disk, number))
    data[start:start + length] = bytes(length)
    put_file_bytes(disk, bytes(data), number)


def test_item1_a_zeroed_header_mid_file_is_corruption_naming_file_and_offset():
    disk, lsns = synced_log(MESSAGES)
    bad = lsns[5].offset
    zero(disk, bad, 14)
    before = file_bytes(disk)
    with pytest.raises(LogCorruptionError) as raised:
        find_end(disk)
    assert file_name(1) in str(raised.value) and f"0x{bad:x}" in str(raised.value)
    with pytest.raises(LogCorruptionError):
        new_log(disk)  # the writer refuses too ...
    assert file_bytes(disk) == before  # ... and cuts nothing
    report = verify_log(disk)
    assert not report.ok and report.problem.offset == bad and report.notes == []


def test_item1_a_log_store_with_a_zeroed_header_refuses_to_open_and_loses_nothing():
    disk = SimDisk("env")
    env = Environment.open(disk, small_config())
    db = env.database("accounts")
    for i in range(20):
        txn = env.begin(Durability.SYNC)
        db.put(f"acct{i:02d}", f"balance {i}", txn)
        txn.commit()
    env.close()
    commits = [e.lsn for e in new_log(disk, readonly=True).scan() if e.type_name == "Commit"]
    middle = commits[5]
    zero(disk, middle.offset, 14, middle.file)
    before = {name: file_bytes(disk, int(name[:8], 16)) for name in disk.list() if name.endswith(".jdb")}
    with pytest.raises(LogCorruptionError) as raised:
        Environment.open(disk, small_config())
    assert f"0x{middle.offset:x}" in str(raised.value)
    after = {name: file_bytes(disk, int(name[:8], 16)) for name in disk.list() if name.endswith(".jdb")}
    assert after == before


def test_item1_a_whole_lost_write_is_still_unwritten_space_even_when_the_next_checksum_starts_with_zeros():
    # A lost write leaves zeros from its first byte to the next kept write. The
    # next entry's checksum may itself begin with zero bytes; the judge must
    # still find that entry, or a crash would look like corruption.
    found = 0
    for salt in range(600):
        disk = SimDisk()
        log = new_log(disk)
        lsns = write_messages(log, [f"{salt}:{m}" for m in MESSAGES])
        log.close()
        data = file_bytes(disk)
        nxt = lsns[6].offset
        if data[nxt] != 0:
            continue
        found += 1
        hole = slice(lsns[5].offset, nxt)
        damaged = bytearray(data)
        damaged[hole] = bytes(hole.stop - hole.start)
        scanner = FileScanner(bytes(damaged), 1).run()
        verdict = judge_bad_entry(bytes(damaged), scanner.bad_offset, scanner.bad_header)
        assert (scanner.bad_offset, verdict.kind, verdict.successor) == (lsns[5].offset, "unwritten", nxt)
        if found == 2:
            break
    assert found == 2


def test_item1_zeros_over_a_header_and_part_of_its_item_are_corruption():
    disk, lsns = synced_log(MESSAGES)
    bad = lsns[3].offset
    zero(disk, bad, 20)
    with pytest.raises(LogCorruptionError):
        find_end(disk)


def test_item1_zeros_to_the_end_of_the_file_are_still_an_unwritten_tail():
    disk, lsns = synced_log(MESSAGES)
    data = file_bytes(disk)
    put_file_bytes(disk, data + bytes(64))
    end = find_end(disk)
    assert end.cut is not None and end.cut.kind == "unwritten" and end.cut.offset == len(data)
    assert messages(new_log(disk)) == MESSAGES


def two_file_log():
    disk = SimDisk()
    log = new_log(disk, file_max=400)
    write_messages(log, MESSAGES)
    log.close()
    files = sorted(n for n in disk.list() if n.endswith(".jdb"))
    assert len(files) >= 2
    return disk, len(files)


@pytest.mark.parametrize("bit", range(8))
def test_item9_a_flipped_bit_in_the_last_files_header_type_is_corruption_not_a_foreign_file(bit):
    disk, last = two_file_log()
    data = bytearray(file_bytes(disk, last))
    data[4] ^= 1 << bit
    put_file_bytes(disk, bytes(data), last)
    with pytest.raises(LogCorruptionError) as raised:
        find_end(disk)
    assert file_name(last) in str(raised.value)
    report = verify_log(disk)
    assert not report.ok and report.problem.file_name == file_name(last)


def test_item9_a_lone_file_that_is_no_log_is_still_foreign():
    disk = SimDisk()
    with disk.open(file_name(1), create=True) as f:
        f.write(0, b"hello, this is not a log file at all" * 3)
        f.fsync()
    with pytest.raises(LogError) as raised:
        find_end(disk)
    assert not isinstance(raised.value, LogCorruptionError) and "not a minidb log file" in str(raised.value)


@pytest.mark.parametrize("fields", [(-1, 0), (0, -1), (2**32, 0), (0, 2**32), (1.5, 0), ("1", 0)])
def test_item9_an_lsn_outside_the_packed_range_cannot_be_constructed(fields):
    with pytest.raises(UserError):
        LSN(*fields)


def test_item9_lsns_in_range_still_construct():
    assert str(LSN(1, 0x26)) == "0x1/0x26" and NULL_LSN.is_null and LSN(0, 0) < LSN(1, 0)


def test_the_log_s_first_file_lost_is_corruption_for_open_and_verify():
    disk, last = two_file_log()
    disk.delete(file_name(1))
    with pytest.raises(LogCorruptionError) as raised:
        find_end(disk)
    assert file_name(2) in str(raised.value) and "lost" in str(raised.value)
    report = verify_log(disk)
    assert not report.ok and report.problem.file_name == file_name(2) and "lost" in report.problem.what
