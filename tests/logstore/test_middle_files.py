"""Cleaned files deleted wherever they lie: the deleted-files record, readers, verify, crashes, protection."""

import pytest

from minidb.errors import LogCorruptionError
from minidb.io import CrashMode, SimDisk
from minidb.log import LSN, LogManager
from minidb.log.deleted import DELETED_FILE, read_deleted_files
from minidb.log.files import file_name, log_file_numbers
from minidb.log.verify import verify_log
from minidb.logstore import Environment, LogFileNotFound
from minidb.logstore.tree.ln import read_referenced

from tests.logstore.helpers import small_config
from tests.logstore.test_cleaner import churn


def config():
    return small_config(file_max=4096)


def delete_heavy(disk, rounds=16, count=40):
    """A delete-heavy log of 17 files: every record rewritten ``rounds`` times, then four in five deleted."""
    env = Environment.open(disk, config())
    churn(env, rounds, count)
    env.checkpoint()
    return env


def expected(rounds=16, count=40):
    return {f"k{i:03d}".encode(): (f"value {rounds - 1} {i} " * 3).encode() for i in range(0, count, 5)}


def log_files(disk):
    return sorted(int(n[:8], 16) for n in disk.list() if n.endswith(".jdb"))


def clean_and_checkpoint(env, times=3):
    for _ in range(times):
        env.clean_log()
        env.checkpoint()


def test_with_file_1_protected_cleaning_deletes_middle_files_and_the_log_does_not_grow():
    disk = SimDisk("middle")
    env = delete_heavy(disk)
    assert log_files(disk) == list(range(1, 18))  # 17 files
    env.cleaner.protector.protect("backup", 1, 1)
    clean_and_checkpoint(env)
    files = log_files(disk)
    assert files[0] == 1 and env.log.head == 1  # the protected file stays, and so does the head
    assert len(files) < 10  # head-only deletion kept all of them: 20 files
    assert read_deleted_files(disk) == set(range(2, files[1])) | env.log.deleted
    assert env.cleaner.stats["nCleanerDeletions"] >= 8
    assert dict(env.database("accounts").items()) == expected()
    env.close()
    assert verify_log(disk).ok
    env = Environment.open(disk, config())
    assert dict(env.database("accounts").items()) == expected()
    backward = [e.lsn for e in env.log.scan_backward()]
    assert backward == [e.lsn for e in env.log.scan()][::-1]  # the backward walk steps over the deleted files
    assert set(log_files(disk)) == set(env.log.end().files)


def test_reading_an_lsn_in_a_deleted_middle_file_is_log_file_not_found():
    disk = SimDisk("read-deleted")
    env = delete_heavy(disk)
    env.cleaner.protector.protect("backup", 1, 1)
    clean_and_checkpoint(env, 1)
    gone = min(env.log.deleted)
    with pytest.raises(LogFileNotFound, match=rf"0x{gone:x}/0x26, in log file {file_name(gone)}, which was deleted "
                                              r"\(deleted from the middle of the log\)"):
        read_referenced(env.log, LSN(gone, 0x26), "a slot")
    assert all(e.lsn.file not in env.log.deleted for e in env.log.scan())


def test_protected_middle_files_are_never_deleted():
    disk = SimDisk("protected-middle")
    env = delete_heavy(disk)
    env.cleaner.protector.protect("backup", 1, 1)
    env.clean_log()
    assert {4, 5} <= env.cleaner.cleaned
    held = env.cleaner.protector.protect("feeder replica-2", 4, 5)  # cleaned, then protected before step 9
    clean_and_checkpoint(env)
    assert {1, 4, 5} <= set(log_files(disk)) and not {4, 5} & env.log.deleted
    assert {2, 3} <= env.log.deleted
    env.cleaner.protector.release(held)
    clean_and_checkpoint(env)
    assert {4, 5} <= env.log.deleted and 1 in log_files(disk)


def test_with_a_deletion_listener_files_go_from_the_head_only():
    """A listener's contract is "files up to N go" (the VLSN index truncates its head): no middle file goes."""
    disk = SimDisk("listener")
    env = delete_heavy(disk)
    asked = []
    env.cleaner.protector.add_deletion_listener(lambda last: asked.append(last) or True)
    env.cleaner.protector.protect("backup", 1, 1)
    clean_and_checkpoint(env)
    assert asked == [] and env.log.deleted == frozenset() and log_files(disk)[:3] == [1, 2, 3]


def test_a_missing_middle_file_not_recorded_is_corruption_at_open_and_in_verify():
    disk = SimDisk("lost")
    env = delete_heavy(disk)
    env.cleaner.protector.protect("backup", 1, 1)
    clean_and_checkpoint(env, 1)
    env.close()
    lost = max(log_files(disk)[1:-2])  # a kept file above the deleted ones, not recorded
    disk.delete(file_name(lost))
    with pytest.raises(LogCorruptionError, match=rf"{file_name(lost)} at offset 0x0: log file is missing"):
        Environment.open(disk, config())
    problem = verify_log(disk).problem
    assert problem is not None and problem.file_name == file_name(lost)


def test_a_damaged_deleted_files_record_is_a_clear_corruption_error():
    disk = SimDisk("damaged")
    env = delete_heavy(disk)
    env.cleaner.protector.protect("backup", 1, 1)
    clean_and_checkpoint(env, 1)
    env.close()
    with disk.open(DELETED_FILE) as f:
        f.write(12, b"\xff")  # the first file number
    with pytest.raises(LogCorruptionError, match=r"logdeleted at offset 0x\w+: the deleted-files record's checksum "
                                                 r"does not match: which log files were deleted on purpose is unknown"):
        Environment.open(disk, config())
    problem = verify_log(disk).problem
    assert problem is not None and problem.file_name == DELETED_FILE


def test_a_recorded_file_still_on_disk_is_never_read_and_opening_finishes_its_deletion():
    disk = SimDisk("left-behind")
    env = delete_heavy(disk)
    env.cleaner.protector.protect("backup", 1, 1)
    saved = {n: disk.open(file_name(n)).read_all() for n in log_files(disk)}
    clean_and_checkpoint(env, 1)
    env.close()
    gone = min(read_deleted_files(disk))
    with disk.open(file_name(gone), create=True) as f:  # as a crash between recording and deleting leaves it
        f.write(0, saved[gone])
    assert verify_log(disk).ok and gone not in log_file_numbers(disk)
    with LogManager(disk, readonly=True) as log:  # a reader never takes its entries for data
        assert gone not in {e.lsn.file for e in log.scan()} and gone not in log.end().files
    env = Environment.open(disk, config())
    assert file_name(gone) not in disk.list()
    assert dict(env.database("accounts").items()) == expected()


def test_a_crash_at_every_point_of_a_middle_deletion_loses_nothing():
    disk = SimDisk("crash-middle")
    env = delete_heavy(disk)
    env.cleaner.protector.protect("backup", 1, 1)
    env.clean_log()
    start = len(disk.events)
    env.checkpoint()
    events = disk.events
    first = next(e.index for e in events[start:] if e.name.startswith(DELETED_FILE))
    last = max(e.index for e in events[start:] if e.kind == "delete" and e.name.endswith(".jdb"))
    assert any(e.kind == "rename" for e in events[first:last])
    for index in range(first - 1, last + 1):
        for mode in (CrashMode.nothing(), CrashMode.everything()):
            crashed = disk.crash_image(index, mode)
            assert verify_log(crashed).ok, (index, verify_log(crashed).problem)
            reopened = Environment.open(crashed, config())
            assert dict(reopened.database("accounts").items()) == expected(), index
            assert not set(log_files(crashed)) & reopened.log.deleted  # opening finished the deletion
            reopened.close()


def test_with_middle_deletion_off_cleaned_files_go_from_the_head_only():
    disk = SimDisk("head-only")
    env = delete_heavy(disk)
    env.close()
    env = Environment.open(disk, small_config(file_max=4096, cleaner_delete_middle_files=False))
    env.cleaner.protector.protect("backup", 1, 1)
    clean_and_checkpoint(env)
    assert env.log.deleted == frozenset() and log_files(disk)[:3] == [1, 2, 3] and env.cleaner.reserved
