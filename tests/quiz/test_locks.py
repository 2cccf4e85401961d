"""The lock-hierarchy answer, checked by replaying the problem's lock table in a fresh lock manager."""

import re

import pytest

from minidb.pagestore.lock import LockId, LockManager, LockMode, LockTimeout
from minidb.quiz import quiz
from minidb.quiz.locks import Owner

from tests.quiz.tables import md_tables

SEEDS = tuple(range(12))


def table_of(lm, owners):
    return sorted((f"T{o.txn_id}", str(lock_id), mode.name) for o in owners for lock_id, mode in lm.held(o).items())


@pytest.mark.parametrize("seed", SEEDS)
def test_the_request_on_the_problems_lock_table_ends_as_the_answer_says(seed):
    q = quiz("lock-hierarchy", seed)
    held, after = md_tables(q.text(answers=True))
    owners = {r["txn"]: Owner(int(r["txn"][1:])) for r in held}
    lm = LockManager(escalation_threshold=None)
    # deepest first: a lock below takes its parents' intention locks, which a lock held above then converts
    # (the other way round, a lock above in EX would cover the one below, and it would not be taken)
    for row in sorted(held, key=lambda r: -len(LockId.parse(r["lock"]).ancestors())):
        lm.lock(owners[row["txn"]], LockId.parse(row["lock"]), LockMode[row["mode"]], timeout=0)
    assert table_of(lm, owners.values()) == sorted((r["txn"], r["lock"], r["mode"]) for r in held)
    m = re.search(r"T(\d+) asks for (\w+) on (\S+)\.", q.problem)
    asker = owners.get(f"T{m.group(1)}") or Owner(int(m.group(1)))
    try:
        lm.lock(asker, LockId.parse(m.group(3)), LockMode[m.group(2)], timeout=0)
        outcome = "granted"
    except LockTimeout:
        outcome = "waits"
    assert re.search(r"Outcome: (\w+)", q.answer).group(1) == outcome
    assert table_of(lm, [asker]) == sorted((r["txn"], r["lock"], r["mode"]) for r in after)
