"""The log head (files deleted on purpose) and the bounded log's options: partitions, preallocation, spares."""

import pytest

from minidb.errors import LogCorruptionError, LogFullError, UserError
from minidb.io import CrashMode, SimDisk
from minidb.log import TRACE, file_name
from minidb.log.check import first_file_problem
from minidb.log.end import find_end
from minidb.log.files import all_log_file_numbers, log_file_numbers
from minidb.log.head import HEAD_FILE, read_log_head, write_log_head
from minidb.log.lsn import LSN
from minidb.log.verify import verify_log

from tests.log.helpers import file_bytes, messages, new_log, write_messages

MESSAGES = [f"message {i} " * 8 for i in range(40)]


def many_files(**options):
    disk = SimDisk()
    log = new_log(disk, file_max=512, **options)
    write_messages(log, MESSAGES)
    assert log.end_lsn.file >= 5
    return disk, log


def test_removing_head_files_records_the_head_first_and_readers_accept_it():
    disk, log = many_files()
    archived = {}
    wanted = {file_name(n): file_bytes(disk, n) for n in (1, 2, 3)}
    removed = log.remove_head_files(4, archive=lambda name, data: archived.setdefault(name, data))
    assert removed == list(wanted) and archived == wanted
    assert read_log_head(disk) == 4 and log_file_numbers(disk)[0] == 4
    assert [e.type_name for e in log.scan()][0] == "FileHeader"
    assert messages(log) == [m for m in MESSAGES if m in messages(log)] and messages(log)[-1] == MESSAGES[-1]
    log.close()
    assert verify_log(disk).problem is None
    assert find_end(disk).files[0] == 4
    assert log.remove_head_files.__doc__


def test_without_the_head_record_the_same_log_is_lost_files():
    disk, log = many_files()
    log.remove_head_files(4)
    log.close()
    disk.delete(HEAD_FILE)
    problem = verify_log(disk).problem
    assert problem is not None and "are lost" in problem.what


def test_a_missing_file_at_or_above_the_head_is_still_lost():
    disk, log = many_files()
    log.remove_head_files(3)
    log.close()
    disk.delete(file_name(3))
    problem = verify_log(disk).problem
    assert problem is not None and problem.file_name == file_name(3) and "lost" in problem.what
    with pytest.raises(LogCorruptionError, match="were lost"):
        find_end(disk)


def test_the_first_file_check_by_itself():
    header = {"last_entry_lsn": LSN(2, 0x40)}
    assert first_file_problem(3, header, head=3) is None
    assert "lost" in first_file_problem(3, header).what
    assert "were lost" in first_file_problem(4, header, head=3).what


def test_the_head_only_grows_and_cannot_pass_the_file_being_written():
    disk, log = many_files()
    log.remove_head_files(3)
    assert log.remove_head_files(2) == []
    with pytest.raises(UserError, match="is writing"):
        log.remove_head_files(log.end_lsn.file + 1)
    with pytest.raises(ValueError, match="only grows"):
        write_log_head(disk, 2)


def test_a_crash_between_the_head_record_and_the_deletion_leaves_files_that_are_ignored_then_removed():
    disk, log = many_files()
    log.close()
    write_log_head(disk, 3)
    disk.crash(CrashMode.nothing())
    assert all_log_file_numbers(disk)[:2] == [1, 2] and log_file_numbers(disk)[0] == 3
    assert verify_log(disk).problem is None
    log = new_log(disk, file_max=512)
    assert all_log_file_numbers(disk)[0] == 3 and log.stats["nFilesRemoved"] == 2


def test_a_torn_head_record_keeps_the_previous_one_and_a_damaged_one_is_corruption():
    disk, log = many_files()
    log.remove_head_files(2)
    log.remove_head_files(3)  # sequence 2: slot 1
    with disk.open(HEAD_FILE) as f:
        f.write(20 + 13, b"\xff")  # damage slot 1: the record of sequence 1 remains
        f.fsync()
    assert read_log_head(disk) == 2
    with disk.open(HEAD_FILE) as f:
        f.write(13, b"\xff")
        f.fsync()
    with pytest.raises(LogCorruptionError, match="log head record has no valid slot"):
        read_log_head(disk)


def test_at_most_max_files_exist_at_once():
    disk = SimDisk()
    log = new_log(disk, file_max=512, max_files=3)
    with pytest.raises(LogFullError, match="3 log files"):
        write_messages(log, MESSAGES, sync=False)
    assert log.end_lsn.file == 3
    end = log.end_lsn
    with pytest.raises(LogFullError):
        log.append(TRACE, {"message": MESSAGES[0]})
    assert log.end_lsn == end  # nothing logged
    log.remove_head_files(2)
    log.append(TRACE, {"message": MESSAGES[0]})  # room again


def test_preallocated_files_are_cut_to_their_end_at_a_flip_and_spares_wait():
    disk = SimDisk()
    log = new_log(disk, file_max=512, max_files=4, preallocate=True)
    assert sorted(n for n in disk.list() if n.startswith("logspare")) == ["logspare1", "logspare2", "logspare3"]
    assert disk.size(file_name(1)) == 512
    write_messages(log, MESSAGES[:6])
    assert log.end_lsn.file == 2 and disk.size(file_name(1)) < 512 and disk.size(file_name(2)) == 512
    log.close()
    assert verify_log(disk).problem is None
    again = new_log(disk, file_max=512, max_files=4, preallocate=True)
    assert again.tail_cut is None and messages(again) == MESSAGES[:6]


def test_a_torn_tail_of_a_preallocated_file_is_zeroed_not_cut():
    disk = SimDisk()
    log = new_log(disk, file_max=512, max_files=4, preallocate=True)
    write_messages(log, MESSAGES[:2])
    log.append(TRACE, {"message": MESSAGES[2]})
    log.flush()
    disk.crash(CrashMode.torn(20))
    again = new_log(disk, file_max=512, max_files=4, preallocate=True)
    assert again.tail_cut is not None and disk.size(file_name(1)) == 512
    assert messages(again) == MESSAGES[:2]
    assert not any(file_bytes(disk)[again.end_lsn.offset:])


def test_a_file_header_torn_over_a_preallocated_file_is_a_torn_tail():
    disk = SimDisk()
    log = new_log(disk, file_max=512, max_files=4, preallocate=True)
    write_messages(log, MESSAGES[:6])  # flips to file 2, which then holds only its FileHeader torn after 3 bytes
    log.close()
    with disk.open(file_name(2)) as f:
        f.write(0, bytes(f.size()))
        f.write(0, b"\x01\x02\x03")
        f.fsync()
    found = find_end(disk)
    assert found.cut is not None and found.cut.kind == "torn" and found.cut.file_number == 2


def test_a_backward_scan_stops_at_the_first_file_kept():
    disk, log = many_files()
    log.remove_head_files(4)
    backward = list(log.scan_backward())
    assert backward[-1].lsn.file == 4 and backward[-1].type_name == "FileHeader"
    assert [e.lsn for e in reversed(backward)] == [e.lsn for e in log.scan()]
