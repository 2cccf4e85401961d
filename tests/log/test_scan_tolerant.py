"""scan_tolerant: every entry it can trust, bad ones reported, resynchronising after corruption."""

import random

from minidb.io import CrashMode, SimDisk
from minidb.log import file_name, scan_tolerant
from minidb.log.scan import FileScanner

from tests.log.helpers import file_bytes, new_log, write_messages

MESSAGES = [f"entry {i}: " + "q" * (i * 5) for i in range(10)]


def one_file():
    disk = SimDisk()
    log = new_log(disk)
    lsns = write_messages(log, MESSAGES)
    log.close()
    return file_bytes(disk), [0] + [lsn.offset for lsn in lsns]


def test_an_intact_file_scans_like_the_engine_reader():
    data, offsets = one_file()
    seen = list(scan_tolerant(data, 1))
    assert [s.offset for s in seen] == offsets
    assert all(s.ok and s.verdict is None for s in seen)
    assert [(s.offset, s.header) for s in seen] == list(FileScanner(data, 1))


def test_a_flipped_bit_mid_file_is_reported_and_the_scan_resynchronises():
    data, offsets = one_file()
    bad = offsets[4]
    flipped = bytearray(data)
    flipped[bad + 20] ^= 0x04  # inside the item: only the checksum can tell
    seen = list(scan_tolerant(bytes(flipped), 1))
    assert [s.offset for s in seen] == offsets  # nothing lost but the bad entry's trust
    bad_entries = [s for s in seen if not s.ok]
    assert [(s.offset, s.verdict) for s in bad_entries] == [(bad, "corrupt")]
    assert "checksum mismatch" in bad_entries[0].problem
    assert bad_entries[0].header is not None and bad_entries[0].header.type_code == 0x02


def test_without_checksums_an_item_flip_goes_unnoticed_but_a_header_flip_does_not():
    data, offsets = one_file()
    item_flip = bytearray(data)
    item_flip[offsets[4] + 20] ^= 0x04
    assert all(s.ok for s in scan_tolerant(bytes(item_flip), 1, verify=False))
    prev_flip = bytearray(data)
    prev_flip[offsets[6] + 6] ^= 0x01  # the prev offset field
    seen = list(scan_tolerant(bytes(prev_flip), 1, verify=False))
    assert [(s.offset, s.verdict) for s in seen if not s.ok] == [(offsets[6], "corrupt")]
    assert "prev offset" in [s for s in seen if not s.ok][0].problem
    assert [s.offset for s in seen] == offsets


def test_two_corrupt_entries_apart_are_both_reported():
    data, offsets = one_file()
    flipped = bytearray(data)
    for index in (2, 7):
        flipped[offsets[index] + 16] ^= 0x80
    seen = list(scan_tolerant(bytes(flipped), 1))
    assert [s.offset for s in seen if not s.ok] == [offsets[2], offsets[7]]
    assert [s.offset for s in seen] == offsets


def test_a_torn_tail_ends_the_scan_with_one_report():
    disk = SimDisk()
    log = new_log(disk, buffer_size=1)
    write_messages(log, MESSAGES[:6])
    write_messages(log, MESSAGES[6:7], sync=False)
    log.flush()
    disk.crash(CrashMode.torn(9))
    data = file_bytes(disk)
    seen = list(scan_tolerant(data, 1))
    assert [s.ok for s in seen] == [True] * 7 + [False]
    assert seen[-1].verdict == "torn" and seen[-1].header is None


def test_a_truncated_file_ends_in_a_torn_entry():
    data, offsets = one_file()
    seen = list(scan_tolerant(data[: offsets[5] + 17], 1))
    assert [s.offset for s in seen] == offsets[:6]
    assert (seen[-1].offset, seen[-1].verdict) == (offsets[5], "torn")
    assert "runs past the end" in seen[-1].problem


def test_random_bytes_are_foreign_and_end_the_scan_at_once():
    rng = random.Random(7)
    junk = bytes(rng.randrange(256) for _ in range(500))
    assert junk[4] != 0x01  # not a FileHeader's type byte
    seen = list(scan_tolerant(junk, 1))
    assert len(seen) == 1 and seen[0].offset == 0 and seen[0].verdict == "foreign"


def test_a_file_header_naming_another_file_is_corruption_not_a_stop():
    data, offsets = one_file()
    seen = list(scan_tolerant(data, 2))  # the bytes of file 1 read as file 2
    assert (seen[0].offset, seen[0].verdict) == (0, "corrupt")
    assert "FileHeader says file 0x1" in seen[0].problem
    assert [s.offset for s in seen[1:]] == offsets[1:] and all(s.ok for s in seen[1:])


def test_zeros_where_a_lost_write_should_be_are_unwritten_space():
    data, offsets = one_file()
    zeroed = bytearray(data)
    zeroed[offsets[8]:offsets[9]] = bytes(offsets[9] - offsets[8])
    seen = list(scan_tolerant(bytes(zeroed), 1))
    assert [s.offset for s in seen] == offsets[:9]
    assert seen[-1].verdict == "unwritten"
    assert file_name(1) == "00000001.jdb"
