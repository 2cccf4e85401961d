"""The last file as opening the log checked it (``take_opening_scan``), read again without a second check.

Opening a log scans its last file entry by entry (chain, checksum, FileHeader) to find where it ends.
A log opened with ``keep_opening_scan`` keeps those entries for one reader (the log store's
recovery): its forward read and its search for the last entry of a type give exactly what the
careful reads give, without reading and checking the file's bytes a second time. The kept entries
describe the bytes as opened, so they must be taken before anything writes to the log; writing while
they are held is refused, and once the log grew the readers go back to the file.
"""

import random

import pytest

from minidb.errors import LogCorruptionError, LogError
from minidb.io import SimDisk
from minidb.log import LSN, TRACE, header as header_module
from minidb.log.logdef import FILE_HEADER
from minidb.logstore.logdef import CKPT_END, CKPT_START

from tests.log.helpers import file_bytes, new_log, put_file_bytes
from tests.log.test_last_of_type import careful, random_log, same


def reopened(disk, options):
    log = new_log(disk, keep_opening_scan=True, **options)
    return log, log.take_opening_scan()


def as_read(entries):
    return [(e.lsn, e.header, e.item) for e in entries]


def test_the_opening_scan_is_kept_only_when_asked_and_taken_once():
    disk = SimDisk("kept")
    log = new_log(disk)
    log.append(TRACE, {"message": "hello"})
    log.close()
    assert new_log(disk, readonly=True).take_opening_scan() is None
    kept = new_log(disk, readonly=True, keep_opening_scan=True)
    checked = kept.take_opening_scan()
    assert checked is not None and checked.number == 1 and len(checked.entries) == 2
    assert checked.entries[0][1].type_code == FILE_HEADER.code
    assert kept.take_opening_scan() is None


def test_writing_before_the_opening_scan_is_taken_is_refused():
    """The kept entries are the bytes as opened: nothing may write to the log while they are held."""
    disk = SimDisk("refused")
    log = new_log(disk)
    log.append(TRACE, {"message": "hello"})
    log.close()
    log = new_log(disk, keep_opening_scan=True)
    log.append(TRACE, {"message": "buffered"})  # appending alone changes no byte of the file
    with pytest.raises(LogError, match="take_opening_scan"):
        log.sync()
    with pytest.raises(LogError, match="take_opening_scan"):
        log.set_invisible([])
    assert log.take_opening_scan() is not None
    log.sync()
    assert [e.values["message"] for e in log.scan() if e.entry_type is TRACE] == ["hello", "buffered"]


@pytest.mark.parametrize("seed", range(12))
def test_forward_with_the_checked_file_reads_what_a_careful_scan_reads(seed):
    disk, log, options = random_log(seed)
    log.close()
    log, checked = reopened(disk, options)
    everything = list(log.scan())
    rng = random.Random(seed)
    starts = [None] + [e.lsn for e in rng.sample(everything, min(8, len(everything)))]
    for start in starts:
        stop = rng.choice([None, rng.choice(everything).lsn])
        assert as_read(log.scan(start, stop, checked=checked)) == as_read(log.scan(start, stop))
    last = everything[-1].lsn
    if last.offset > 0:  # a start inside an entry: read and checked as the careful scan does (it fails)
        inside = LSN(last.file, last.offset + 1)
        with pytest.raises(LogCorruptionError) as fast:
            list(log.scan(inside, checked=checked))
        with pytest.raises(LogCorruptionError) as slow:
            list(log.scan(inside))
        assert str(fast.value) == str(slow.value)


@pytest.mark.parametrize("seed", range(12))
def test_last_of_type_with_the_checked_file_finds_what_a_backward_scan_finds(seed):
    disk, log, options = random_log(seed)
    log.close()
    log, checked = reopened(disk, options)
    for code in (TRACE.code, CKPT_START.code, FILE_HEADER.code, CKPT_END.code):
        assert same(log.reader.last_of_type(code, checked), careful(log, code))


def test_the_checked_file_is_read_without_a_second_check(monkeypatch):
    """The last file's entries come from the opening scan: no checksum is computed again for them."""
    disk = SimDisk("once")
    log = new_log(disk)
    for i in range(50):
        log.append(TRACE, {"message": f"message {i}"})
    log.close()
    log, checked = reopened(disk, {})
    checks = []

    def counting(buf, pos, *args):
        checks.append(pos)
        return header_module.check_entry(buf, pos, *args)

    monkeypatch.setattr(header_module.CHECK_ENTRY, "call", counting)  # what a scan checks each entry with
    fast = as_read(log.scan(checked=checked))
    assert checks == []
    found = log.reader.last_of_type(TRACE.code, checked)
    assert found is not None and found.values["message"] == "message 49"
    slow = as_read(log.scan())
    assert len(checks) == len(slow) == len(fast) == 51 and fast == slow


def test_once_the_log_grew_the_readers_read_the_file_again():
    disk = SimDisk("grew")
    log = new_log(disk)
    log.append(CKPT_START, {"checkpoint_id": 1, "invoker": "test", "time_ms": 0})
    log.append(TRACE, {"message": "before"})
    log.close()
    log, checked = reopened(disk, {})
    log.append(CKPT_START, {"checkpoint_id": 2, "invoker": "test", "time_ms": 0})
    log.append(TRACE, {"message": "after"})
    assert [e.values.get("message") for e in log.scan(checked=checked)][-1] == "after"
    assert log.reader.last_of_type(CKPT_START.code, checked).values["checkpoint_id"] == 2


def test_damage_in_an_earlier_file_is_still_found():
    """Only the last file comes from the opening scan: the files before it are read and checked."""
    disk = SimDisk("earlier")
    log = new_log(disk, file_max=40_000)
    lsns = [log.append(TRACE, {"message": f"message {i}"}) for i in range(3000)]
    log.close()
    victim = lsns[100]
    assert victim.file < lsns[-1].file
    data = bytearray(file_bytes(disk, victim.file))
    data[victim.offset + 16] ^= 0x01
    put_file_bytes(disk, bytes(data), victim.file)
    log, checked = reopened(disk, {"file_max": 40_000})
    with pytest.raises(LogCorruptionError) as fast:
        list(log.scan(checked=checked))
    with pytest.raises(LogCorruptionError) as slow:
        list(log.scan())
    assert str(fast.value) == str(slow.value) and "checksum" in str(fast.value)
