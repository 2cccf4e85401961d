"""The page store's lock hierarchy as a problem: held locks, one more request, granted or waits.

Locks form a hierarchy, volume ``v(1)`` > store ``s(1.3)`` > page
``p(1.3.12)`` > record ``r(1.3.12.2)``: before a lock on a node, the lock
manager takes every ancestor not yet held strongly enough in the *parent
mode* (IS above a read, IX above a write), top down; an ancestor held in EX,
or in SH, SIX or UD for a read, covers the request, and nothing is locked
(:mod:`minidb.pagestore.lock.manager`).

The scenario: a seeded run of two or three transactions, each asking the
real :class:`~minidb.pagestore.lock.LockManager` for a few locks at the
store, page and record levels, with timeout 0 (a request that cannot be
granted at once is refused rather than waited for, and leaves the table as
the engine leaves it). The problem is the lock table it left, each
transaction's locks with the implicit ones; then one more request. The
answer is the lock manager's own trace of that request: each level asked
for, granted, converted, covered, or where it would wait and for whom.
"""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from minidb.pagestore.ids import PageId, RecordId, StoreId
from minidb.pagestore.lock import LOCK_MANAGER, LockId, LockManager, LockMode, LockTimeout, parent_mode
from minidb.quiz import Quiz
from minidb.quiz.text import numbered, table

MODES = (LockMode.IS, LockMode.IX, LockMode.SH, LockMode.SIX, LockMode.UD, LockMode.EX)
RECORD_MODES = (LockMode.SH, LockMode.UD, LockMode.EX)
STORE = StoreId(1, 3)
PAGES = (PageId(1, 3, 12), PageId(1, 3, 13))


@dataclass(frozen=True)
class Owner:
    txn_id: int


def _target(rng: Random) -> tuple[LockId, LockMode]:
    level = rng.choice(("store", "page", "record", "record", "record"))
    if level == "store":
        return LockId.store(STORE), rng.choice(MODES)
    page = rng.choice(PAGES)
    if level == "page":
        return LockId.page(page), rng.choice(MODES)
    return LockId.record(RecordId(page.vol, page.store, page.page, rng.randrange(3))), rng.choice(RECORD_MODES)


def request(lm: LockManager, owner: Owner, lock_id: LockId, mode: LockMode) -> str:
    """Ask for the lock at once (timeout 0): "granted", or why it would wait."""
    try:
        lm.lock(owner, lock_id, mode, timeout=0)
    except LockTimeout as e:
        return f"waits: {e}"
    return "granted"


def held_rows(lm: LockManager, owners: list[Owner]) -> list[tuple]:
    return [(f"T{o.txn_id}", lock_id, mode.name) for o in owners for lock_id, mode in sorted(lm.held(o).items())]


def build_lock_hierarchy(seed: int) -> Quiz:
    rng = Random(seed)
    lm = LOCK_MANAGER.call(escalation_threshold=None, trace=True)
    owners = [Owner(t) for t in range(1, rng.randint(2, 3) + 1)]
    for _ in range(rng.randint(3, 5)):
        owner = rng.choice(owners)
        lock_id, mode = _target(rng)
        request(lm, owner, lock_id, mode)
    while True:  # a request the asker does not hold already (else there is nothing to ask)
        asker = rng.choice(owners)
        page = rng.choice(PAGES)
        target = LockId.record(RecordId(page.vol, page.store, page.page, rng.randrange(3)))
        mode = rng.choice(RECORD_MODES + (LockMode.SH,))
        if target not in lm.held(asker):
            break
    problem = ("The page store's lock table (each transaction's locks, intention locks on the parents "
               "included; the hierarchy is v(1) > s(1.3) > p(1.3.N) > r(1.3.N.slot)):\n\n"
               + table(("txn", "lock", "mode"), held_rows(lm, owners))
               + f"\n\nT{asker.txn_id} asks for {mode.name} on {target}."
               " Which locks does the lock manager ask for at each level, top down, in which mode? Is each "
               "granted (or converted, or covered by a lock above), or does the request wait, and for whom?\n")
    before = lm.held(asker)
    lm.trace.lines.clear()
    outcome = request(lm, asker, target, mode)
    asked = list(lm.trace.lines)
    lines = [f"{ancestor}: T{asker.txn_id} holds {before[ancestor].name} already, enough for the parent mode "
             f"{parent_mode(mode).name}: not asked again" for ancestor in target.ancestors()
             if ancestor in before and not any(f" {ancestor}:" in line for line in asked)] + asked
    answer = (numbered(lines) + f"\n\nOutcome: {outcome}.\n\nT{asker.txn_id}'s locks afterwards:\n\n"
              + table(("txn", "lock", "mode"), held_rows(lm, [asker])) + "\n")
    return Quiz("lock-hierarchy", seed, problem, answer)
