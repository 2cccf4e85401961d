"""is_provisional for every flag, with and without a following CkptEnd; the checkpoint's flags by level."""

import pytest

from minidb.log import LSN, NULL_LSN, Provisional
from minidb.logstore import checkpoint_provisional, is_provisional

ENTRY = LSN(1, 0x200)  # the JE documentation's "200 BIN-A"
BEFORE, AFTER = LSN(1, 0x100), LSN(1, 0x500)  # a CkptEnd before the entry, one after it


@pytest.mark.parametrize("ckpt_end", [NULL_LSN, BEFORE, AFTER], ids=["no CkptEnd", "CkptEnd before", "CkptEnd after"])
def test_no_is_never_provisional(ckpt_end):
    assert is_provisional(ENTRY, Provisional.NO, ckpt_end) is False


@pytest.mark.parametrize("ckpt_end", [NULL_LSN, BEFORE, AFTER], ids=["no CkptEnd", "CkptEnd before", "CkptEnd after"])
def test_yes_is_always_provisional(ckpt_end):
    assert is_provisional(ENTRY, Provisional.YES, ckpt_end) is True


def test_before_ckpt_end_is_provisional_only_when_a_ckpt_end_follows():
    # Worked case 2: 200 BIN-A (BEFORE_CKPT_END) ... 500 CkptEnd: provisional.
    assert is_provisional(ENTRY, Provisional.BEFORE_CKPT_END, AFTER) is True
    # Worked case 1: no CkptEnd after it: treated as Provisional.NO.
    assert is_provisional(ENTRY, Provisional.BEFORE_CKPT_END, BEFORE) is False
    assert is_provisional(ENTRY, Provisional.BEFORE_CKPT_END, NULL_LSN) is False


def test_across_files():
    assert is_provisional(LSN(3, 0x900), Provisional.BEFORE_CKPT_END, LSN(4, 0x10)) is True
    assert is_provisional(LSN(4, 0x20), Provisional.BEFORE_CKPT_END, LSN(4, 0x10)) is False


def test_an_entry_without_lsn_is_refused():
    with pytest.raises(ValueError, match="without an LSN"):
        is_provisional(NULL_LSN, Provisional.NO, AFTER)


def test_not_a_flag_is_refused():
    with pytest.raises(ValueError, match="not a provisional flag"):
        is_provisional(ENTRY, "YES", AFTER)  # type: ignore[arg-type]


@pytest.mark.parametrize("max_flush_level, expected", [
    (2, {1: Provisional.YES, 2: Provisional.NO}),
    (3, {1: Provisional.YES, 2: Provisional.BEFORE_CKPT_END, 3: Provisional.NO}),
    (4, {1: Provisional.YES, 2: Provisional.BEFORE_CKPT_END, 3: Provisional.BEFORE_CKPT_END, 4: Provisional.NO}),
])
def test_checkpoint_flags_by_level(max_flush_level, expected):
    assert {level: checkpoint_provisional(level, max_flush_level) for level in expected} == expected


def test_a_level_above_the_max_flush_level_would_be_non_provisional():
    assert checkpoint_provisional(5, 3) is Provisional.NO
