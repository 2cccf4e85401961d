"""Shore's compatibility and supremum tables, cell by cell, and through the lock manager."""

import pytest

from minidb.pagestore.lock import Duration, LockManager, LockMode, LockTimeout, compatible, supremum
from minidb.pagestore.lock.modes import (
    EX,
    IS,
    IX,
    MODES,
    NL,
    SH,
    SIX,
    UD,
    covers,
    escalation_mode,
    format_table,
    implicitly_covers,
    parent_mode,
)

from tests.pagestore.lock.helpers import T1, T2, user

# Gray & Reuter table 7.11 as Shore has it: rows requested, columns granted.
COMPAT = """
       NL IS IX SH SIX UD EX
NL     +  +  +  +  +   +  +
IS     +  +  +  +  +   -  -
IX     +  +  +  -  -   -  -
SH     +  +  -  +  -   -  -
SIX    +  +  -  -  -   -  -
UD     +  -  -  +  -   -  -
EX     +  -  -  -  -   -  -
"""
# Gray & Reuter figure 8.6, the lock conversion matrix.
SUPREMUM = """
       NL  IS  IX  SH  SIX UD  EX
NL     NL  IS  IX  SH  SIX UD  EX
IS     IS  IS  IX  SH  SIX UD  EX
IX     IX  IX  IX  SIX SIX EX  EX
SH     SH  SH  SIX SH  SIX UD  EX
SIX    SIX SIX SIX SIX SIX SIX EX
UD     UD  UD  EX  UD  SIX UD  EX
EX     EX  EX  EX  EX  EX  EX  EX
"""


def table(text):
    lines = text.strip().splitlines()
    columns = [LockMode[name] for name in lines[0].split()]
    cells = {}
    for line in lines[1:]:
        row, *values = line.split()
        for column, value in zip(columns, values, strict=True):
            cells[LockMode[row], column] = value
    return cells


COMPAT_CELLS = table(COMPAT)
SUPREMUM_CELLS = table(SUPREMUM)
PAIRS = [(a, b) for a in MODES for b in MODES]


def pair_id(pair):
    return f"{pair[0].name}-{pair[1].name}"


@pytest.mark.parametrize("pair", PAIRS, ids=pair_id)
def test_compatibility_cell(pair):
    requested, granted = pair
    expected = COMPAT_CELLS[requested, granted] == "+"
    assert compatible(requested, granted) is expected
    assert LockMode.compatible(requested, granted) is expected


@pytest.mark.parametrize("pair", PAIRS, ids=pair_id)
def test_supremum_cell(pair):
    a, b = pair
    expected = LockMode[SUPREMUM_CELLS[a, b]]
    assert supremum(a, b) is expected and LockMode.supremum(a, b) is expected


def test_ud_is_the_one_asymmetry():
    asymmetric = {(a, b) for a, b in PAIRS if compatible(a, b) != compatible(b, a)}
    assert asymmetric == {(UD, SH), (SH, UD)}
    assert compatible(UD, SH) and not compatible(SH, UD)  # an updater joins readers; new readers wait
    assert not compatible(IS, UD) and not compatible(UD, IS)


def test_supremum_is_a_join():
    for a, b in PAIRS:
        s = supremum(a, b)
        assert s is supremum(b, a)
        assert covers(s, a) and covers(s, b)
        assert supremum(a, a) is a and supremum(NL, a) is a and supremum(EX, a) is EX
    assert supremum(SH, IX) is SIX and supremum(UD, IX) is EX and supremum(SIX, UD) is SIX


def test_parent_modes_and_implicit_cover():
    assert {m: parent_mode(m) for m in MODES} == {NL: NL, IS: IS, SH: IS, IX: IX, SIX: IX, UD: IX, EX: IX}
    covered = {(a, c) for a, c in PAIRS if implicitly_covers(a, c)}
    assert covered == {(EX, c) for c in MODES} | {(a, c) for a in (SH, SIX, UD) for c in (IS, SH)}
    assert escalation_mode(IS) is SH and escalation_mode(IX) is EX and escalation_mode(SIX) is EX


def test_tables_print_in_shores_order():
    assert format_table("compat").splitlines()[2].split() == ["IS", "+", "+", "+", "+", "+", "-", "-"]
    assert format_table("supremum").splitlines()[3].split() == ["IX", "IX", "IX", "IX", "SIX", "SIX", "EX", "EX"]
    with pytest.raises(ValueError):
        format_table("other")


@pytest.mark.parametrize("pair", [p for p in PAIRS if NL not in p], ids=pair_id)
def test_the_lock_manager_grants_by_the_compatibility_table(pair):
    """T1 holds ``granted``; T2 asks for ``requested`` without waiting: granted iff compatible."""
    requested, granted = pair
    lm = LockManager()
    lm.lock(T1, user(1), granted)
    if compatible(requested, granted):
        lm.lock(T2, user(1), requested, timeout=0)
        assert lm.held(T2) == {user(1): requested}
    else:
        with pytest.raises(LockTimeout):
            lm.lock(T2, user(1), requested, timeout=0)
        assert lm.held(T2) == {} and lm.held(T1) == {user(1): granted}
        assert lm.snapshot().head(user(1)).requests[-1].txn_id == 1  # nothing left in the queue


@pytest.mark.parametrize("pair", PAIRS, ids=pair_id)
def test_the_lock_manager_converts_by_the_supremum_table(pair):
    """A holder of ``held`` asking for ``asked`` ends up holding supremum(held, asked)."""
    held, asked = pair
    lm = LockManager()
    lm.lock(T1, user(1), held)
    lm.lock(T1, user(1), asked, timeout=0)
    expected = supremum(held, asked)
    assert lm.held(T1) == ({user(1): expected} if expected is not NL else {})
    if NL in (held, asked):
        assert lm.stats["nConversions"] == 0  # asking for NL takes nothing; from NL it is a new lock
    elif expected is held:
        assert lm.stats["nExtraneous"] == 1 and lm.stats["nConversions"] == 0
    else:
        assert lm.stats["nConversions"] == 1


@pytest.mark.parametrize("pair", [p for p in PAIRS if NL not in p], ids=pair_id)
def test_a_conversion_waits_only_for_the_other_holders(pair):
    """T2 holds ``other``, T1 holds IS and asks ``wanted``: it converts at once
    exactly when supremum(IS, wanted) is compatible with T2's mode."""
    other, wanted = pair
    if not compatible(IS, other):
        return  # T1 could not hold IS next to it in the first place
    lm = LockManager()
    lm.lock(T2, user(1), other)
    lm.lock(T1, user(1), IS)
    target = supremum(IS, wanted)
    if compatible(target, other):
        lm.lock(T1, user(1), wanted, timeout=0)
        assert lm.query(user(1), T1) is target
    else:
        with pytest.raises(LockTimeout):
            lm.lock(T1, user(1), wanted, duration=Duration.LONG, timeout=0)
        assert lm.query(user(1), T1) is IS  # the denied conversion keeps the old mode
