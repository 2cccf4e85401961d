"""A lock table for a scripted, single-threaded workload: a conflict is refused instead of waited for.

The page store's crash test (:mod:`minidb.crashtest.pagestore`) runs its
transactions in one thread, so a lock another transaction holds could only
be waited for forever. :class:`ScriptLocking` stands in for the lock
manager: it grants what is compatible and raises :class:`WouldBlock` for
the rest, and the workload simply does not try that operation. Conflicts,
waits and deadlocks are the lock manager's own tests.
"""

from __future__ import annotations

from typing import Any

from minidb.pagestore import ExtentId, RecordId, StoreId
from minidb.pagestore.lock import LockId


class WouldBlock(Exception):
    """The workload's lock table refuses to wait: the operation is not tried."""


class ScriptLocking:
    """Record and store locks for a single-threaded workload: conflicts raise instead of waiting.

    A record lock implies an intention lock on its store (the hierarchy of
    Shore's lock manager, reduced to what the workload needs: IS, IX, SH, EX).

    Page and extent locks are recorded and never refused (the records keep the
    workload's transactions apart on them), so that the allocation protocol
    sees them: a page or free extent another transaction has locked is
    skipped (``held_by_other``), an extent is freed at commit only if nobody
    else holds it and its "has pages" bit is clear. Quarks release the record,
    store and page locks taken inside them; extent locks stay.
    """

    COMPATIBLE = {"IS": {"IS", "IX", "SH"}, "IX": {"IS", "IX"}, "SH": {"IS", "SH"}, "EX": set()}

    def __init__(self) -> None:
        self.records: dict[RecordId, tuple[int, str]] = {}
        self.stores: dict[StoreId, dict[int, set[str]]] = {}  # store -> tid -> modes held
        self.others: dict[LockId, dict[int, set[str]]] = {}  # pages and extents: lock id -> tid -> modes
        self.has_pages: dict[LockId, bool] = {}  # the extent locks' "has pages" bits
        self.quarks: dict[int, list[tuple]] = {}  # tid -> what it held when each open quark opened
        self.quarks_opened = 0

    def _store_ok(self, tid: int, stid: StoreId, mode: str) -> bool:
        return all(held in self.COMPATIBLE[mode] for other, modes in self.stores.get(stid, {}).items()
                   if other != tid for held in modes)

    def _grant(self, xct: Any, target: Any, mode: str) -> bool:
        tid = xct.txn_id
        if isinstance(target, RecordId):
            stid, intent = StoreId(target.vol, target.store), ("IX" if mode == "EX" else "IS")
            held = self.records.get(target)
            if not self._store_ok(tid, stid, intent):
                return False
            if held is not None and held[0] != tid and (mode == "EX" or held[1] == "EX"):
                return False
            if held is None or held[0] != tid or mode == "EX":
                self.records[target] = (tid, mode)
            self.stores.setdefault(stid, {}).setdefault(tid, set()).add(intent)
            return True
        if isinstance(target, StoreId):
            if not self._store_ok(tid, target, mode):
                return False
            self.stores.setdefault(target, {}).setdefault(tid, set()).add(mode)
            return True
        self.others.setdefault(LockId.of(target), {}).setdefault(tid, set()).add(mode)
        return True

    def lock(self, xct: Any, target: Any, mode: str, duration: str = "long", timeout: float | None = None) -> None:
        if not self._grant(xct, target, mode):
            raise WouldBlock(f"T{xct.txn_id}: {target} {mode}")

    def try_lock(self, xct: Any, target: Any, mode: str, duration: str = "long") -> bool:
        return self._grant(xct, target, mode)

    def release_all(self, xct: Any) -> None:
        tid = xct.txn_id
        self.records = {rid: held for rid, held in self.records.items() if held[0] != tid}
        for holders in self.stores.values():
            holders.pop(tid, None)
        for lock_id in list(self.others):
            self.others[lock_id].pop(tid, None)
            if not self.others[lock_id]:
                del self.others[lock_id]
                self.has_pages.pop(lock_id, None)
        self.quarks.pop(tid, None)

    def held_by_other(self, xct: Any, target: Any) -> bool:
        return any(tid != xct.txn_id for tid in self.others.get(LockId.of(target), {}))

    def mark_extent(self, xct: Any, xid: ExtentId, has_pages: bool) -> None:
        self.has_pages[LockId.of(xid)] = has_pages

    def upgrade_extent_to_free(self, xct: Any, xid: ExtentId) -> bool:
        lock_id = LockId.of(xid)
        if self.held_by_other(xct, xid) or self.has_pages.get(lock_id, False):
            return False
        self.others.setdefault(lock_id, {}).setdefault(xct.txn_id, set()).add("EX")
        return True

    def _holdings(self, tid: int) -> tuple:
        return ({rid for rid, held in self.records.items() if held[0] == tid},
                {k: set(v[tid]) for k, v in self.stores.items() if tid in v},
                {k: set(v[tid]) for k, v in self.others.items() if tid in v and k.code != "x"})

    def open_quark(self, xct: Any) -> int:
        stack = self.quarks.setdefault(xct.txn_id, [])
        stack.append(self._holdings(xct.txn_id))
        self.quarks_opened += 1
        return len(stack)

    def close_quark(self, xct: Any) -> int:
        tid = xct.txn_id
        records, stores, others = self.quarks[tid].pop()
        now = self._holdings(tid)
        for rid in now[0] - records:
            del self.records[rid]
        for table, before, held in ((self.stores, stores, now[1]), (self.others, others, now[2])):
            for key in held:
                if key in before:
                    table[key][tid] = before[key]
                else:
                    del table[key][tid]
        return len(now[0] - records) + sum(len(h - stores.get(k, set())) for k, h in now[1].items())

    # two-phase commit: a store held in SH and IX is logged as SIX
    STRENGTH = ["IS", "IX", "SH", "EX"]

    def held(self, xct: Any) -> dict[LockId, str]:
        tid = xct.txn_id
        held = {LockId.of(rid): mode for rid, (owner, mode) in self.records.items() if owner == tid}
        for stid, holders in self.stores.items():
            modes = holders.get(tid)
            if modes:
                held[LockId.of(stid)] = "SIX" if {"SH", "IX"} <= modes else max(modes, key=self.STRENGTH.index)
        for lock_id, holders in self.others.items():  # pages and extents (the allocation protocol)
            modes = holders.get(tid)
            if modes:
                held[lock_id] = max(modes, key=self.STRENGTH.index)
        return held

    def detach(self, xct: Any) -> None:
        return None

    def reacquire(self, xct: Any, locks: dict[LockId, str]) -> None:
        """Restart: the table as it was for ``xct`` (prepared transactions held these together)."""
        for lid, mode in locks.items():
            if lid.code == "r":
                self.records[RecordId(*lid.numbers)] = (xct.txn_id, mode)
            elif lid.code == "s":
                modes = {"SH", "IX"} if mode == "SIX" else {mode}
                self.stores.setdefault(StoreId(*lid.numbers), {}).setdefault(xct.txn_id, set()).update(modes)
            else:
                self.others.setdefault(lid, {}).setdefault(xct.txn_id, set()).add(mode)
