"""Tests of exercise 15a: ``resync(data, bad_offset)``.

Every test writes a real log with minidb's LogManager on a simulated disk,
damages one entry (or more), and knows the answer from how the log was
written: each ``append`` returns the entry's LSN. The tests never ask
minidb's scanner for the answer.

``impl`` (exercises/conftest.py) is reference.py or student.py, depending on
``--exercise-impl``.
"""

from __future__ import annotations

import struct

import pytest

from minidb.io.simdisk import CrashMode, SimDisk
from minidb.log import TRACE, LogManager, file_name
from minidb.viz.log_demo import DEMO_MESSAGES

TYPE, FLAGS, PREV, SIZE = 4, 5, 6, 10  # byte offsets of header fields


def write(messages, disk=None, **options):
    """A synced log of Trace entries; returns (disk, offsets of the entries after the FileHeader)."""
    disk = disk or SimDisk()
    log = LogManager(disk, file_max=1 << 16, clock=lambda: 0.0, **options)
    offsets = [log.append(TRACE, {"message": m}).offset for m in messages]
    log.sync()
    return disk, log, offsets


def file_bytes(disk):
    return disk.open(file_name(1)).read_all()


def damage(data, offset, bit):
    damaged = bytearray(data)
    damaged[offset] ^= bit
    return bytes(damaged)


def test_the_worked_example(impl):
    """The demo log: entries at 0x2e, 0x50, 0x70; a flipped item bit in 0x50 resyncs at 0x70."""
    disk, _, offsets = write(DEMO_MESSAGES[:4])
    assert offsets == [0x2e, 0x50, 0x70, 0x91]
    data = damage(file_bytes(disk), 0x50 + 16, 0x20)
    assert impl.resync(data, 0x50) == 0x70


def test_a_flipped_item_size_is_found_by_the_prev_field(impl):
    """The bad entry's size lies: its claimed end is useless, the successor's prev still names it."""
    disk, _, offsets = write(DEMO_MESSAGES[:6])
    data = file_bytes(disk)
    assert data[0x70 + PREV:0x70 + PREV + 4] == struct.pack("<I", 0x50)
    for bit in (0x01, 0x04, 0x40):
        assert impl.resync(damage(data, 0x50 + SIZE, bit), 0x50) == 0x70


@pytest.mark.parametrize("field,bit", [(0, 0x01), (TYPE, 0x01), (TYPE, 0x80), (FLAGS, 0x01), (FLAGS, 0x40),
                                       (PREV, 0x02), (14, 0x01), (-1, 0x10)])
def test_any_damaged_field_of_a_middle_entry(impl, field, bit):
    messages = [f"entry {i}: " + "x" * (3 * i) for i in range(8)]
    disk, log, offsets = write(messages)
    data = file_bytes(disk)
    bad, successor = offsets[3], offsets[4]
    where = bad + field if field >= 0 else successor - 1  # -1: the bad entry's last byte
    assert impl.resync(damage(data, where, bit), bad) == successor


def test_every_entry_of_a_file_with_replicated_entries(impl):
    """Entries with a VLSN have a 22-byte header; resync works from any of them."""
    disk = SimDisk()
    log = LogManager(disk, clock=lambda: 0.0)
    offsets = []
    for i in range(9):
        options = {"vlsn": 100 + i} if i % 3 else {}
        offsets.append(log.append(TRACE, {"message": f"message number {i}"}, **options).offset)
    log.sync()
    data = file_bytes(disk)
    for bad, successor in zip(offsets, offsets[1:], strict=False):
        assert impl.resync(damage(data, bad + 24, 0x08), bad) == successor


def test_the_last_entry_has_no_successor(impl):
    disk, _, offsets = write(["one", "two", "three"])
    data = damage(file_bytes(disk), offsets[-1] + 15, 0x01)
    assert impl.resync(data, offsets[-1]) is None


def test_a_torn_tail_has_no_successor(impl):
    """A crash cut the last write short: nothing after the torn entry can be trusted."""
    disk, log, offsets = write(["synced one", "synced two"])
    torn = log.append(TRACE, {"message": "being written when the power failed"}).offset
    log.append(TRACE, {"message": "and this one too"})
    log.flush()
    disk.crash(CrashMode.torn(25))
    data = file_bytes(disk)
    assert len(data) == torn + 25
    assert impl.resync(data, torn) is None


def test_two_bad_entries_in_a_row(impl):
    """The successor of the first bad entry is bad too: there is no intact entry naming it."""
    messages = [f"message {i}" for i in range(6)]
    disk, _, offsets = write(messages)
    data = damage(damage(file_bytes(disk), offsets[2] + 16, 0x01), offsets[3] + 16, 0x01)
    assert impl.resync(data, offsets[2]) is None
    assert impl.resync(data, offsets[3]) == offsets[4]


def test_a_decoy_that_only_looks_like_a_prev_field(impl):
    """The bad entry's offset also appears inside an item: only an intact entry counts."""
    disk = SimDisk()
    log = LogManager(disk, clock=lambda: 0.0)
    first = log.append(TRACE, {"message": "first"}).offset
    bad = log.append(TRACE, {"message": "soon bad"}).offset
    # an entry whose message holds the 4 bytes of `bad`: a hit of the search that is no entry
    decoy = log.append(TRACE, {"message": "abcd" + struct.pack("<I", bad).decode("latin-1") + "efgh"}).offset
    after = log.append(TRACE, {"message": "after"}).offset
    log.sync()
    data = file_bytes(disk)
    assert data.find(struct.pack("<I", bad), decoy + 14) > decoy + 14  # the decoy is there
    damaged = damage(damage(data, bad + SIZE, 0x10), decoy + PREV, 0x01)  # the true successor is bad too
    assert impl.resync(damaged, bad) is None
    assert impl.resync(damage(data, bad + SIZE, 0x10), bad) == decoy
    assert first < bad < decoy < after


def test_a_stretch_of_zeros_after_a_lost_write(impl):
    """Unwritten space (zeros) is no entry; a later intact entry that names the bad one is found."""
    disk, _, offsets = write([f"entry {i}" for i in range(6)])
    data = bytearray(file_bytes(disk))
    bad, successor = offsets[2], offsets[3]
    data[bad:successor] = bytes(successor - bad)  # the bad entry is all zeros now
    assert impl.resync(bytes(data), bad) == successor


# Typical wrong solutions (exercises/test_stubs_fail.py requires each to fail a test).
def _resync(data, bad_offset, *, search=True):
    from minidb.log.header import read_header
    from minidb.log.scan import intact_successor
    header = read_header(data, bad_offset)[0]
    found = intact_successor(data, bad_offset, header)
    if not search and found is not None and (header is None or found != bad_offset + header.entry_size):
        return None
    return found


def _claimed_end_unchecked(data, bad_offset):
    from minidb.log.header import read_header
    header = read_header(data, bad_offset)[0]
    if header is not None and bad_offset < bad_offset + header.entry_size < len(data):
        return bad_offset + header.entry_size
    return _resync(data, bad_offset)


def _first_prev_match_unchecked(data, bad_offset):
    hit = data.find(struct.pack("<I", bad_offset), bad_offset + 1 + 6)
    return None if hit == -1 else hit - 6


MUTANTS = {
    "only_where_the_header_says": {"resync": lambda data, bad: _resync(data, bad, search=False)},
    "the_claimed_end_is_not_checked": {"resync": _claimed_end_unchecked},
    "a_prev_match_is_not_checked": {"resync": _first_prev_match_unchecked},
}


def random_cases(rng):
    """For ``minidb grade``: real logs of random messages, one entry (sometimes two) damaged in a random
    byte, the file sometimes cut short."""
    for _ in range(60):
        messages = ["m" * rng.randrange(0, 30) + str(i) for i in range(rng.randrange(1, 8))]
        disk, _, offsets = write(messages)
        data = file_bytes(disk)
        bad = rng.choice(offsets)
        for offset in {bad, rng.choice(offsets)}:
            data = damage(data, offset + rng.randrange(0, 14), 1 << rng.randrange(8))
        if rng.random() < 0.2:
            data = data[: rng.randrange(bad, len(data) + 1)]
        yield "resync", (data, bad), {}
