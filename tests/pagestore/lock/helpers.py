"""Owners and lock ids for the lock manager's tests."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from minidb.pagestore import ExtentId, PageId, RecordId, StoreId
from minidb.pagestore.lock import LockId

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
