"""Transactions of one operation each: a get, a put or a remove per ``with sm.transaction()`` block.

What the transaction manager's twin could get wrong shows up here: a
read-only transaction that ends otherwise than the reference's (logs an
entry, syncs the log, is counted as a commit, keeps its locks or stays in
the table), a block that commits where it should abort or aborts a
transaction already ended, a commit of a transaction that is not active
that is not refused with the reference's error. Each block's transaction
is seeded: mostly lookups (read-only), some inserts and removes (they log),
some blocks raising after their work (aborted: rolled back, or just ended
if they logged nothing), some ending their transaction themselves inside.
Run with a lock manager (the key-value locks taken and released, the lock
table dumped after each block) and without one (``NoLocking``: nothing to
ask). The answers, the transaction and lock counters, the lock tables, and
the disk's bytes and events must be the reference's.
"""

from __future__ import annotations

import random
from typing import Any

from minidb.errors import MinidbError
from minidb.pagestore.lock import LockManager

from tests.agreement.scenarios import disk_state, scenario
from tests.pagestore.sm_helpers import new_sm

XCT_MANAGER = "pagestore.transactions.xctmgr.XctManager"
BLOCK = "pagestore.transactions.xctmgr.transaction_block"
TREE = "pagestore.btree.btree.Tree"
INDEX_MANAGER = "pagestore.btree.index.IndexManager"


class Refused(Exception):
    """Raised by a block of the scenario after its work: the block's transaction is aborted."""


def one_block(sm: Any, rng: random.Random, ix: Any, answers: list) -> None:
    """One transaction of one seeded operation in a ``with`` block; what it answered or raised."""
    what = rng.choice(["get"] * 6 + ["put", "put", "remove", "get then raise", "put then raise",
                                     "commit inside", "abort inside"])
    key = rng.randrange(60)
    try:
        with sm.transaction(durable=rng.random() < 0.3) as t:
            if what == "put" or what == "put then raise":
                answers.append((what, key, sm.index_insert(t, ix, key, bytes([key]) * 20)))
            elif what == "remove":
                answers.append((what, key, sm.index_remove(t, ix, key)))
            else:
                answers.append((what, key, sm.index_lookup(t, ix, key)))
            if what.endswith("then raise"):
                raise Refused(what)
            if what == "commit inside":
                answers.append(("committed at", str(sm.commit(t))))
            elif what == "abort inside":
                sm.abort(t)
    except (MinidbError, Refused) as e:
        answers.append((what, key, type(e).__name__, str(e)))


@scenario(XCT_MANAGER, BLOCK, TREE, INDEX_MANAGER)
def one_operation_per_transaction(seed: int) -> dict[str, Any]:
    """Seeded blocks of one operation each, with a lock manager and without."""
    rng = random.Random(seed)
    result: dict[str, Any] = {}
    for name, locks in (("locked", LockManager(escalation_threshold=None)), ("unlocked", None)):
        sm = new_sm(f"xct{seed}{name}", locking=locks)
        with sm.transaction() as t:
            ix = sm.create_index(t, "i4")
        answers: list = []
        for _ in range(120):
            one_block(sm, rng, ix, answers)
            if locks is not None:
                answers.append(locks.dump(sm.indexes.lock_name))
            answers.append((sorted(x.txn_id for x in sm.xcts.active()), sm.log.end_lsn, len(sm.disk.events)))
        answers.append(sm.indexes.entries(ix))
        result[name] = {"answers": answers, "xct": sm.xcts.stats.as_dict(),
                        "locks": None if locks is None else locks.stats.as_dict()}
        sm.close()
        result[name]["disk"] = disk_state(sm.disk)
    return result
