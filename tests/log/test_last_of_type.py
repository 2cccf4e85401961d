"""``LogReader.last_of_type``: the last entry of a type, found over headers only, as a backward scan finds it.

Recovery looks for the last CkptEnd this way and then reads the log forward from before it, which
checks every entry the walk went past. On damage the walk reads carefully from the damaged entry on,
so it fails as the backward scan fails (same file, offset and problem).
"""

import random

import pytest

from minidb.errors import LogCorruptionError
from minidb.io import SimDisk
from minidb.log import TRACE
from minidb.log.logdef import FILE_HEADER
from minidb.log.reader import READ_BACK
from minidb.logstore.logdef import CKPT_END, CKPT_START

from tests.log.helpers import file_bytes, new_log, put_file_bytes


def careful(log, code):
    return next((e for e in log.scan_backward() if e.header.type_code == code), None)


def same(found, expected) -> bool:
    return (found is None and expected is None) or (
        found is not None and expected is not None and (found.lsn, found.item) == (expected.lsn, expected.item))


def random_log(seed: int):
    rng = random.Random(seed)
    options = dict(file_max=rng.choice([2_000, 40_000, 10 << 20]), buffer_size=rng.choice([256, 1 << 20]))
    disk = SimDisk(f"last-{seed}")
    log = new_log(disk, **options)
    for i in range(rng.randint(0, 600)):
        if rng.random() < 0.05:
            log.append(CKPT_START, {"checkpoint_id": i, "invoker": "test", "time_ms": 0})
        else:
            size = READ_BACK - 500 if rng.random() < 0.01 else rng.randrange(300)  # now and then most of a window
            log.append(TRACE, {"message": "m" * size})
        if rng.random() < 0.05:
            log.sync()
    return disk, log, options


@pytest.mark.parametrize("seed", range(12))
def test_last_of_type_finds_what_a_backward_scan_finds(seed):
    disk, log, options = random_log(seed)
    codes = (TRACE.code, CKPT_START.code, FILE_HEADER.code, CKPT_END.code)  # CkptEnd: never there
    for code in codes:  # some entries may still be in the log buffer
        assert same(log.reader.last_of_type(code), careful(log, code))
    log.close()
    log = new_log(disk, **options)
    for code in codes:
        assert same(log.reader.last_of_type(code), careful(log, code))


def damaged_log(where: int):
    """A log of messages after one CkptStart; byte ``where`` of a message in a middle file flipped (opening
    the log reads only the last file: it does not notice)."""
    disk = SimDisk("damaged")
    log = new_log(disk, file_max=40_000)
    log.append(CKPT_START, {"checkpoint_id": 1, "invoker": "test", "time_ms": 0})
    lsns = [log.append(TRACE, {"message": f"message {i}"}) for i in range(3000)]
    log.close()
    victim = lsns[1500]
    assert 1 < victim.file < lsns[-1].file
    data = bytearray(file_bytes(disk, victim.file))
    data[victim.offset + where] ^= 0x01
    put_file_bytes(disk, bytes(data), victim.file)
    return new_log(disk, file_max=40_000), victim


def test_a_damaged_item_is_left_to_the_forward_read():
    """The walk does not checksum what it passes: the forward read from the entry found does, and says where."""
    log, victim = damaged_log(16)  # a bit of the item
    found = log.reader.last_of_type(CKPT_START.code)
    assert found is not None and found.values["checkpoint_id"] == 1
    with pytest.raises(LogCorruptionError) as forward:
        list(log.scan(found.lsn))
    with pytest.raises(LogCorruptionError) as backward:
        careful(log, CKPT_START.code)
    assert str(forward.value) == str(backward.value)
    assert "0x%x" % victim.offset in str(forward.value) and "checksum" in str(forward.value)


def test_a_damaged_header_sends_the_walk_to_the_careful_path():
    """An entry whose size does not end where the next one starts: the same error as the backward scan."""
    log, victim = damaged_log(10)  # the low byte of its item size
    with pytest.raises(LogCorruptionError) as fast:
        log.reader.last_of_type(CKPT_START.code)
    with pytest.raises(LogCorruptionError) as backward:
        careful(log, CKPT_START.code)
    assert str(fast.value) == str(backward.value)
    assert "0x%x" % victim.offset in str(fast.value)
