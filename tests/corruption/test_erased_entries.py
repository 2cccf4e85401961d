"""Forged erasures in every engine's state: each is corruption naming the entry, or changes nothing read.

A type byte set to 0xff (``erase-type``), with the item zeroed too or not (``erase-type-zero-item``), on
every entry of every engine's state: ``minidb verify`` reports it (exit 1), and opening the engine either
raises a corruption error naming the entry's file and offset (or its LSN), or, when opening reads no
entry that old, returns exactly the committed data. Before the erased form carried a checksum, a forged
erasure in a scavenged page-store log made restart fail with ``RecordWontFitError`` naming ``p(0.0.0)``.
"""

import pytest

from minidb.errors import CorruptionError
from minidb.log import LSN, file_number

from tests.corruption import BUILDERS
from tests.corruption.cases import all_cases
from tests.corruption.classify import run_verify
from tests.corruption.state import disk_with


@pytest.mark.parametrize("engine", sorted(BUILDERS))
def test_a_forged_erasure_is_corruption_naming_the_entry_or_changes_nothing_read(engine, tmp_path):
    state = BUILDERS[engine]()
    cases = [case for case in all_cases(state) if case.kind.startswith("erase-type")]
    assert len(cases) >= 2 * len(state.entries(state.log_files[0]))
    named = 0
    for case in cases:
        damaged = case.apply(state.files)
        code, said = run_verify(damaged, tmp_path / "verify")
        assert code == 1, f"{case}: verify said {said!r}"
        try:
            got = state.read(disk_with(damaged))
        except CorruptionError as e:
            where = (f"{case.file} at offset 0x{case.offset:x}", str(LSN(file_number(case.file), case.offset)))
            assert any(w in str(e) for w in where), f"{case}: {type(e).__name__}: {e}"
            named += 1
        else:
            assert got == state.model, case
    assert named > len(cases) // 4  # the others lie before where opening starts reading
