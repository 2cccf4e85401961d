"""Owners and lock ids for the lock manager's tests."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from minidb.pagestore import ExtentId, PageId, RecordId, StoreId
from minidb.pagestore.lock import Duration, LockId

GOLDEN = Path(__file__).resolve().parent.parent.parent / "golden"


@dataclass(frozen=True)
class Txn:
    """A lock owner: anything with an int txn_id (larger = younger)."""

    txn_id: int


T1, T2, T3, T4, T5 = (Txn(n) for n in range(1, 6))

V1 = LockId.volume(1)
S13 = LockId.store(StoreId(1, 3))
S14 = LockId.store(StoreId(1, 4))
P48 = LockId.page(PageId(1, 3, 48))
P50 = LockId.page(PageId(1, 3, 50))
X16 = LockId.extent(ExtentId(1, 6))


def rec(slot: int, page: int = 48, store: int = 3) -> LockId:
    return LockId.record(RecordId(1, store, page, slot))


def user(n: int) -> LockId:
    return LockId.user(n)


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("MINIDB_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"output differs from {path}; rerun with MINIDB_UPDATE_GOLDEN=1 if intended"


def check_bookkeeping(lm):
    """Every owner's locks, child counts and long-child counts as a recount from its locks gives them,
    each request's parent the owner's request one level up, and every held request in its head's
    queue in the table (what the accelerated twin's inline grant and unlock must keep too)."""
    for st in lm._owners.values():
        children, long_children = {}, {}
        for lock_id, request in st.locks.items():
            path = lock_id.ancestors()
            parent = path[-1] if path else None
            expected = st.locks.get(parent) or st.released_parents.get(parent) if parent is not None else None
            assert request.parent is expected, lock_id
            assert lm._table[lock_id] is request.head and request in request.head.queue
            if parent is not None:
                children[parent] = children.get(parent, 0) + 1
                if request.duration is Duration.LONG and parent.code in ("p", "s"):
                    long_children[parent] = long_children.get(parent, 0) + 1
        counted = {lock_id: request.n_children for lock_id, request in [*st.locks.items(), *st.released_parents.items()]
                   if request.n_children}
        assert counted == children and st.long_children == long_children
        assert all(request.n_children for request in st.released_parents.values())  # none left over
    assert all(head.queue for head in lm._table.values())
