"""Tests of exercise 01a: ``valid_end(data, file_number)``.

Every test writes a real log with minidb's LogManager on a simulated disk,
damages it the way crashes and bad disks do, and knows the right answer from
how the log was written: each ``append`` returns the new entry's LSN, and the
log's ``end_lsn`` right after it is where that entry ends. The tests never ask
minidb's scanner for the answer.

``impl`` (exercises/conftest.py) is reference.py or student.py, depending on
``--exercise-impl``.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import pytest

from minidb.io.simdisk import CrashMode, SimDisk
from minidb.log import TRACE, LogManager, file_name

HEADER_SIZE = 14  # checksum(4) type(1) flags(1) prev(4) item size(4)
FILE_HEADER_SIZE = HEADER_SIZE + 32  # the first entry of every file
TYPE, FLAGS, PREV, SIZE = 4, 5, 6, 10  # byte offsets of header fields
INVISIBLE = 0x08
ERASED = 0xFF


@dataclass
class Entry:
    offset: int  # where the entry starts (its LSN's offset)
    end: int  # where it ends: the offset of the next entry


@dataclass
class Log:
    disk: SimDisk
    log: LogManager
    entries: list[Entry]  # entries of file 1, in order; entries[0] is the FileHeader

    def append(self, message: str, **kw) -> Entry:
        lsn = self.log.append(TRACE, {"message": message}, **kw)
        end = self.log.end_lsn
        assert lsn.file == end.file == 1, "these tests keep everything in file 1"
        entry = Entry(lsn.offset, end.offset)
        self.entries.append(entry)
        return entry

    def bytes(self, number: int = 1) -> bytes:
        return self.disk.open(file_name(number)).read_all()


def new_log(disk: SimDisk | None = None, *, file_max: int = 1 << 16, buffer_size: int = 1 << 12) -> Log:
    disk = disk or SimDisk()
    log = LogManager(disk, file_max=file_max, buffer_size=buffer_size, clock=lambda: 0.0)
    # A new log starts with the FileHeader at offset 0; nothing else is there yet.
    assert log.end_lsn.offset == FILE_HEADER_SIZE
    return Log(disk, log, [Entry(0, FILE_HEADER_SIZE)])


def message(i: int) -> str:
    return f"entry {i}: " + "abcdefg"[: i % 8] * (i % 5 + 1)  # sizes differ from entry to entry


def written_log(count: int = 6, **kw) -> Log:
    """A log with ``count`` Trace entries after the FileHeader, all synced."""
    log = new_log(**kw)
    for i in range(count):
        log.append(message(i))
    log.log.sync()
    assert len(log.bytes()) == log.entries[-1].end
    return log


def flip(data: bytes, offset: int, bit: int) -> bytes:
    damaged = bytearray(data)
    damaged[offset] ^= bit
    return bytes(damaged)


# -- intact files -------------------------------------------------------------

@pytest.mark.parametrize("count", [0, 1, 7])
def test_intact_file_ends_at_its_size(impl, count):
    log = written_log(count)
    data = log.bytes()
    assert impl.valid_end(data, 1) == len(data) == log.entries[-1].end


def test_intact_file_with_replicated_entries(impl):
    """Replicated entries carry an 8-byte VLSN in their header (VLSN_PRESENT)."""
    log = new_log()
    log.append("plain")
    log.append("replicated one", vlsn=41)
    log.append("replicated two", replicated=True, vlsn=42)
    log.append("plain again")
    log.log.sync()
    data = log.bytes()
    assert impl.valid_end(data, 1) == len(data) == log.entries[-1].end


def test_invisible_bit_set_in_place_keeps_the_entry_valid(impl):
    """Syncup rollback sets INVISIBLE in place: the checksum masks that bit."""
    log = new_log()
    log.append("before")
    rolled_back = log.append("rolled back", vlsn=9)
    log.append("after")
    log.log.sync()
    data = log.bytes()
    assert not data[rolled_back.offset + FLAGS] & INVISIBLE
    data = flip(data, rolled_back.offset + FLAGS, INVISIBLE)
    assert impl.valid_end(data, 1) == len(data)


def test_a_forged_erasure_fails_its_checksum(impl):
    """The data eraser rewrites an erased entry's checksum over its erased form; a 0xff written over the type
    byte of an intact entry leaves the old checksum, which no longer matches: the valid entries end there."""
    log = written_log(5)
    erased = log.entries[3]
    data = bytearray(log.bytes())
    data[erased.offset + TYPE] = ERASED
    assert impl.valid_end(bytes(data), 1) == erased.offset


def test_second_file(impl):
    """A full file 1 and a file 2 that starts with its own FileHeader."""
    disk = SimDisk()
    log = LogManager(disk, file_max=300, buffer_size=128, clock=lambda: 0.0)
    lsns = [log.append(TRACE, {"message": message(i)}) for i in range(12)]
    log.sync()
    assert {lsn.file for lsn in lsns} == {1, 2}
    first = disk.open(file_name(1)).read_all()
    second = disk.open(file_name(2)).read_all()
    assert len(second) == log.end_lsn.offset
    assert max(lsn.offset for lsn in lsns if lsn.file == 1) < len(first) <= 300
    assert impl.valid_end(first, 1) == len(first)
    assert impl.valid_end(second, 2) == len(second)


# -- torn tails ---------------------------------------------------------------

TORN_CUTS = {
    # name: how many bytes of the last write survive, given the new entries
    "nothing": lambda new: 0,
    "inside-first-header": lambda new: 5,
    "one-header-exactly": lambda new: HEADER_SIZE,
    "inside-first-item": lambda new: HEADER_SIZE + 3,
    "first-entry-exactly": lambda new: new[0].end - new[0].offset,
    "one-byte-into-second": lambda new: new[1].offset - new[0].offset + 1,
    "one-byte-short": lambda new: new[-1].end - new[0].offset - 1,
}


@pytest.mark.parametrize("cut", list(TORN_CUTS))
def test_torn_tail_from_a_crash(impl, cut):
    log = written_log(4)
    synced_end = log.entries[-1].end
    new = [log.append(message(10 + i)) for i in range(3)]
    log.log.flush()  # one write holding the three new entries, never fsynced
    keep = TORN_CUTS[cut](new)
    log.disk.crash(CrashMode.torn(keep))
    data = log.bytes()
    assert len(data) == synced_end + keep
    expected = max(e.end for e in log.entries if e.end <= len(data))
    assert impl.valid_end(data, 1) == expected


def test_torn_tail_at_every_write_of_a_workload(impl):
    """crash_image: crash right after each write, keeping 0, 1, half, all-but-one or all of its bytes."""
    log = new_log(buffer_size=64)  # a small buffer: the log is written out in many small writes
    for i in range(12):
        log.append(message(i))
    log.log.sync()
    ends = [e.end for e in log.entries]
    writes = [e for e in log.disk.events if e.kind == "write"]
    assert len(writes) >= 5
    for write in writes:
        size = len(write.data)
        for keep in sorted({0, 1, size // 2, size - 1, size}):
            image = log.disk.crash_image(write.index, CrashMode.torn(keep))
            data = image.open(file_name(1)).read_all()
            assert len(data) == write.offset + keep
            expected = max([0] + [end for end in ends if end <= len(data)])
            got = impl.valid_end(data, 1)
            assert got == expected, f"crash after {write}, keeping {keep} bytes of it"


# -- damaged entries ----------------------------------------------------------

BIT_FLIPS = {
    # name: (byte offset inside the entry, bit to flip)
    "checksum": (0, 0x01),
    "type-still-valid": (TYPE, 0x01),  # Trace 0x02 -> 0x03: a valid code, a wrong checksum
    "type-illegal": (TYPE, 0x80),  # 0x02 -> 0x82: above 0x7e, not a type code
    "flags-provisional": (FLAGS, 0x01),
    "flags-invisible": (FLAGS, INVISIBLE),  # masked from the checksum: only the flag rules catch it
    "flags-vlsn-present": (FLAGS, 0x10),
    "flags-unknown-bit": (FLAGS, 0x40),
    "prev": (PREV, 0x04),
    "item-size-low-bit": (SIZE, 0x01),
    "item-size-high-bit": (SIZE + 3, 0x80),
    "item-first-byte": (HEADER_SIZE, 0x20),
    "item-last-byte": (-1, 0x01),
}


@pytest.mark.parametrize("where", list(BIT_FLIPS))
def test_bit_flip_in_last_entry(impl, where):
    log = written_log(5)
    last = log.entries[-1]
    pos, bit = BIT_FLIPS[where]
    offset = last.end - 1 if pos < 0 else last.offset + pos
    data = flip(log.bytes(), offset, bit)
    assert impl.valid_end(data, 1) == last.offset


def test_entry_claiming_more_bytes_than_the_file_holds(impl):
    """The last entry's item size grows by 10 and its checksum is made to match the bytes that are there:
    only the size check can tell that the entry does not fit."""
    log = written_log(4)
    last = log.entries[-1]
    data = bytearray(log.bytes())
    (size,) = struct.unpack_from("<I", data, last.offset + SIZE)
    struct.pack_into("<I", data, last.offset + SIZE, size + 10)
    type_code, flags = data[last.offset + TYPE], data[last.offset + FLAGS]
    crc = zlib.crc32(bytes(data[last.offset + 6 :]), zlib.crc32(bytes((type_code, flags & ~INVISIBLE))))
    struct.pack_into("<I", data, last.offset, crc)
    assert impl.valid_end(bytes(data), 1) == last.offset


def test_bit_flip_in_a_middle_entry_stops_there(impl):
    """valid_end stops at the first bad entry, even if intact entries follow it."""
    log = written_log(6)
    bad = log.entries[3]
    data = flip(log.bytes(), bad.offset + HEADER_SIZE + 1, 0x04)
    assert impl.valid_end(data, 1) == bad.offset


def test_bit_flip_in_file_header(impl):
    log = written_log(3)
    data = flip(log.bytes(), HEADER_SIZE + 8, 0x01)  # created_ms: only the checksum notices
    assert impl.valid_end(data, 1) == 0


def test_dropped_entry_breaks_the_prev_chain(impl):
    """Entry 4 moves to entry 3's place: its checksum is fine, its prev is not."""
    log = written_log(6)
    gone = log.entries[3]
    data = log.bytes()
    data = data[: gone.offset] + data[gone.end :]
    assert impl.valid_end(data, 1) == gone.offset


def test_zero_filled_hole(impl):
    """A lost write leaves zeros where entries 2 and 3 should be; later entries survived."""
    log = written_log(6)
    first, second = log.entries[2], log.entries[3]
    data = bytearray(log.bytes())
    data[first.offset : second.end] = bytes(second.end - first.offset)
    assert impl.valid_end(bytes(data), 1) == first.offset


def test_zeros_after_the_last_entry(impl):
    log = written_log(4)
    data = log.bytes()
    assert impl.valid_end(data + bytes(100), 1) == len(data)


# -- files with no valid entry --------------------------------------------------

def test_empty_file(impl):
    assert impl.valid_end(b"", 1) == 0


@pytest.mark.parametrize("length", [1, 4, HEADER_SIZE - 1])
def test_shorter_than_a_header(impl, length):
    data = written_log(2).bytes()
    assert impl.valid_end(data[:length], 1) == 0


@pytest.mark.parametrize("length", [HEADER_SIZE, FILE_HEADER_SIZE - 1])
def test_file_header_cut_short(impl, length):
    data = written_log(2).bytes()
    assert impl.valid_end(data[:length], 1) == 0


@pytest.mark.parametrize("number", [2, 0x100])
def test_wrong_file_number(impl, number):
    """The FileHeader of 00000001.jdb says file 1; read as another file it is no good."""
    data = written_log(3).bytes()
    assert impl.valid_end(data, number) == 0


def test_first_entry_is_not_a_file_header(impl):
    """Without its FileHeader the file starts with a Trace entry (whose prev is 0)."""
    log = written_log(3)
    data = log.bytes()[FILE_HEADER_SIZE:]
    assert impl.valid_end(data, 1) == 0


def test_trace_entry_is_not_a_file_header_even_if_its_bytes_fit(impl):
    """The first Trace entry, moved to offset 0: prev 0, a valid checksum, and its item
    (length 2, two zero bytes) reads as file number 2 where a FileHeader keeps it.
    Only its type code says it is not a FileHeader."""
    log = new_log()
    log.append("\x00\x00")
    log.append("next")
    log.log.sync()
    data = log.bytes()[FILE_HEADER_SIZE:]
    assert data[PREV : PREV + 4] == bytes(4) and data[HEADER_SIZE : HEADER_SIZE + 4] == bytes((2, 0, 0, 0))
    assert impl.valid_end(data, 2) == 0


# -- the prev chain: intact entries in the wrong place ------------------------

def test_an_entry_written_twice_stops_at_the_copy(impl):
    """Entry 3's bytes again after entry 5 (a write repeated at the wrong offset): its checksum is
    fine, but its prev names entry 2, not entry 5."""
    log = written_log(5)
    data = log.bytes()
    copy = data[log.entries[3].offset : log.entries[3].end]
    assert impl.valid_end(data + copy, 1) == len(data)


def test_a_stale_entry_after_a_rewritten_tail(impl):
    """The tail was cut after entry 2 and one shorter entry written in its place; what remains of
    the old entry 4 after it is intact, but it chains to the old entry 3, which is gone."""
    old = written_log(5)
    new = written_log(2)
    data = new.bytes()
    stale = old.bytes()[old.entries[4].offset : old.entries[4].end]
    assert old.entries[3].offset != new.entries[-1].offset
    assert impl.valid_end(data + stale, 1) == len(data)


def test_entries_spliced_from_another_log_file(impl):
    """Entries 3 to 5 of a log with other messages, appended after entry 2 of this one: intact,
    with a valid checksum each, but chained to offsets of the other file."""
    mine = written_log(2)
    other = new_log()
    for i in range(6):
        other.append(f"another log's entry number {i}")
    other.log.sync()
    data = mine.bytes()
    assert impl.valid_end(data + other.bytes()[other.entries[3].offset :], 1) == len(data)


# -- typical wrong solutions (exercises/test_stubs_fail.py requires each to fail a test) --------------
# Each is minidb's answer on bytes "repaired" so that one check can no longer fail.

def _repairing(check):
    """A valid_end that, where minidb's stops, lets ``check`` repair the entry (False: cannot) and
    goes on: the check that ``check`` repairs is never made."""
    from minidb.log.end import valid_end
    from minidb.log.header import read_header

    def wrong(data, file_number):
        data = bytearray(data)
        while True:
            end = valid_end(bytes(data), file_number)
            header, _ = read_header(data, end)
            if end >= len(data) or header is None or not check(data, end, _last_before(data, end), header):
                return end

    def _last_before(data, end):
        pos = last = 0
        while pos < end:
            last, pos = pos, pos + read_header(data, pos)[0].entry_size
        return last
    return wrong


def _fix_checksum(data, pos, header):
    from minidb.log.header import checksum
    if pos + header.entry_size > len(data):
        return False
    crc = checksum(header.type_code, header.flags, bytes(data[pos + 6 : pos + header.entry_size]))
    struct.pack_into("<I", data, pos, crc)
    return True


def _no_prev_check(data, pos, last, header):
    if header.prev_offset == (0 if pos == 0 else last):
        return False
    struct.pack_into("<I", data, pos + PREV, 0 if pos == 0 else last)
    return _fix_checksum(data, pos, header)


def _no_checksum_check(data, pos, last, header):
    before = bytes(data[pos : pos + 4])
    return _fix_checksum(data, pos, header) and bytes(data[pos : pos + 4]) != before


def _no_file_number_check(data, file_number):
    from minidb.log.end import valid_end
    return max(valid_end(data, number) for number in (file_number, 1, 2))


MUTANTS = {
    "no_prev_chain_check": {"valid_end": _repairing(_no_prev_check)},
    "no_checksum_check": {"valid_end": _repairing(_no_checksum_check)},
    "file_number_not_checked": {"valid_end": _no_file_number_check},
}


def random_cases(rng):
    """For ``minidb grade``: logs of random entries, damaged at random (cut, flipped, zeroed, spliced)."""
    for _ in range(60):
        log = written_log(rng.randrange(0, 9))
        data = bytearray(log.bytes())
        damage = rng.choice(["none", "cut", "flip", "zeros", "copy"])
        if damage == "cut":
            data = data[: rng.randrange(0, len(data) + 1)]
        elif damage == "flip":
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif damage == "zeros":
            start, length = rng.randrange(len(data)), rng.randrange(1, 40)
            data[start : start + length] = bytes(len(data[start : start + length]))
        elif damage == "copy" and len(log.entries) > 1:
            entry = rng.choice(log.entries[1:])
            data += data[entry.offset : entry.end]
        yield "valid_end", (bytes(data), rng.choice([1, 1, 1, 2])), {}
