"""Meta-tests of ``minidb grade``'s randomized cases: every exercise has ``random_cases``, minidb's own
answers agree with themselves on them, and each named mutant (a typical wrong solution, see
``test_stubs_fail.py``) gives a wrong answer on at least one case of a fixed seed set.

A mutant listed in ``NOT_CAUGHT`` is one random inputs do not realistically find (the reason is given);
the test fails if such a mutant starts to be caught, so the list stays true.
"""

from __future__ import annotations

import re
from pathlib import Path
from random import Random
from types import SimpleNamespace

import pytest

from minidb.cli import grade

HERE = Path(__file__).resolve().parent
EXERCISES = sorted(p for p in HERE.iterdir() if p.is_dir() and re.match(r"\d\d[a-z]?_", p.name))
SEEDS = (0, 1, 2)

# exercise -> {mutant: why random cases do not catch it}
NOT_CAUGHT: dict[str, dict[str, str]] = {
    "03a_extent_alloc": {
        "search_from_extent_zero": "no extent below the hint is free, so the answer is the same: only the extents "
                                   "read differ, which the tests count and an answer does not show",
        "every_free_extent_is_locked": "locks more than it needs but answers the same: only may_take's calls differ",
    },
    "08c_redo_test": {
        "page_read_before_the_tables_are_asked": "the same decision after a needless read: only the reads differ",
    },
    "10a_provisional": {
        "a_null_entry_lsn_is_not_provisional": "bad input: minidb raises ValueError, and random cases compare answers",
    },
    "14a_matchpoint": {
        "asks_the_feeder_about_every_entry": "the same matchpoint after needless questions: only the questions differ",
    },
}


def tag(exercise: Path) -> str:
    return "".join(c if c.isalnum() else "_" for c in exercise.name)


def exercise_tests(exercise: Path):
    """The exercise's tests alone (collecting needs no reference: a course project's edition may leave out
    what a reference points into)."""
    return grade.load(grade.test_file(exercise), f"minidb_meta_{tag(exercise)}_tests")


def modules(exercise: Path):
    return exercise_tests(exercise), grade.load(exercise / "reference.py", f"minidb_meta_{tag(exercise)}_reference")


def cases(tests, seed):
    return tests.random_cases(Random(seed))


@pytest.mark.parametrize("exercise", EXERCISES, ids=[p.name for p in EXERCISES])
def test_every_exercise_has_random_cases_that_minidb_passes(exercise):
    tests, reference = modules(exercise)
    assert callable(getattr(tests, "random_cases", None)), f"{exercise.name}: no random_cases(rng) for minidb grade"
    for seed in SEEDS:
        passed, failed, shown = grade.compare(reference, reference, cases(tests, seed))
        assert failed == 0 and passed >= 50, (exercise.name, seed, passed, shown)
        assert [c[0] for c in cases(tests, seed)] == [c[0] for c in cases(tests, seed)]  # from rng alone


MUTANT_CASES = [(e, name) for e in EXERCISES for name in getattr(exercise_tests(e), "MUTANTS", {})]


@pytest.mark.parametrize("exercise,mutant", MUTANT_CASES, ids=[f"{e.name}-{m}" for e, m in MUTANT_CASES])
def test_each_named_mutant_fails_a_random_case(exercise, mutant):
    tests, reference = modules(exercise)
    wrong = SimpleNamespace(**{**vars(reference), **tests.MUTANTS[mutant]})
    failed = sum(grade.compare(wrong, reference, cases(tests, seed))[1] for seed in SEEDS)
    if mutant in NOT_CAUGHT.get(exercise.name, {}):
        assert failed == 0, f"{exercise.name}: {mutant} is caught now: take it out of NOT_CAUGHT"
    else:
        assert failed > 0, f"{exercise.name}: no random case (seeds {SEEDS}) tells the mistake {mutant!r} from minidb"
