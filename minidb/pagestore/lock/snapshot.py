"""A consistent picture of the lock table, as plain data, and its text dump.

:meth:`~.manager.LockManager.snapshot` copies the table under the manager's
mutex into these frozen records; drawing code, the notebook and the golden
test read them without touching the live structures. :meth:`LockTableSnapshot.dump`
prints it like Shore's ``lock_core_m::dump`` (one line per lock head: its
id, the supremum of the granted modes, the queue), followed by the
transactions with their Dreadlocks fingerprints and digests::

    lock table: 4 locks, 2 transactions
      v(1)         IX  T1(IX) T2(IS)
      s(1.3)       IX  T1(IX) T2(IS)
      p(1.3.48)    IX  T1(IX) T2(IS)
      r(1.3.48.2)  EX  T1(EX) T2(SH*)
    transactions:
      T1  holds 4                                  fingerprint {5,17,40}
      T2  holds 3, waits for SH on r(1.3.48.2)     fingerprint {2,9,61}  digest {2,5,9,17,40,61}

In a queue, ``T1(EX)`` is granted, ``T2(SH*)`` waits, ``T3(SH/EX)`` holds SH
and converts to EX; ``,short`` or ``,instant`` follows a duration that is
not long. ``[has page]`` marks an extent lock whose extent has a page
allocated by some transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from minidb.pagestore.lock.dreadlocks import format_bits
from minidb.pagestore.lock.lockid import LockId
from minidb.pagestore.lock.modes import LockMode
from minidb.pagestore.lock.request import Duration


@dataclass(frozen=True)
class RequestView:
    txn_id: int
    mode: LockMode
    convert_mode: LockMode | None
    status: str  # "granted", "waiting", "converting"
    duration: Duration

    def describe(self) -> str:
        text = f"T{self.txn_id}({self.mode.name}"
        if self.status == "converting":
            text += f"/{self.convert_mode.name}"  # type: ignore[union-attr]
        elif self.status == "waiting":
            text += "*"
        if self.duration is not Duration.LONG:
            text += f",{self.duration}"
        return text + ")"


@dataclass(frozen=True)
class HeadView:
    lock_id: LockId
    granted_mode: LockMode
    requests: tuple[RequestView, ...]
    has_page_alloc: bool = False


@dataclass(frozen=True)
class OwnerView:
    txn_id: int
    held: tuple[tuple[LockId, LockMode, Duration], ...]  # in hierarchy order
    waiting_on: LockId | None
    wanted: LockMode | None
    fingerprint: int
    digest: int  # while waiting; otherwise its fingerprint


@dataclass(frozen=True)
class LockTableSnapshot:
    heads: tuple[HeadView, ...]  # in hierarchy order
    owners: tuple[OwnerView, ...]  # by transaction id
    bitmap_bits: int

    def head(self, lock_id: LockId) -> HeadView | None:
        for h in self.heads:
            if h.lock_id == lock_id:
                return h
        return None

    def owner(self, txn_id: int) -> OwnerView | None:
        for o in self.owners:
            if o.txn_id == txn_id:
                return o
        return None

    def dump(self, names: Callable[[LockId], str] = str) -> str:
        """The table as text; ``names`` prints a lock id (an index's key decoded, for instance)."""
        lines = [f"lock table: {len(self.heads)} locks, {len(self.owners)} transactions"]
        width = max((len(names(h.lock_id)) for h in self.heads), default=0)
        for h in self.heads:
            queue = " ".join(r.describe() for r in h.requests)
            flag = "  [has page]" if h.has_page_alloc else ""
            lines.append(f"  {names(h.lock_id):<{width}}  {h.granted_mode.name:<3} {queue}{flag}")
        if self.owners:
            lines.append("transactions:")
            rows = []
            for o in self.owners:
                what = f"holds {len(o.held)}"
                if o.waiting_on is not None:
                    what += f", waits for {o.wanted.name} on {names(o.waiting_on)}"  # type: ignore[union-attr]
                dl = f"fingerprint {format_bits(o.fingerprint)}"
                if o.waiting_on is not None:
                    dl += f"  digest {format_bits(o.digest)}"
                rows.append((f"T{o.txn_id}", what, dl))
            w0 = max(len(r[0]) for r in rows)
            w1 = max(len(r[1]) for r in rows)
            lines += [f"  {a:<{w0}}  {b:<{w1}}  {c}" for a, b, c in rows]
        return "\n".join(lines) + "\n"
