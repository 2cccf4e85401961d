"""The waits-for graph: transactions as nodes, an edge from each waiter to each transaction it waits for.

This is the exact relation that Dreadlocks approximates with digests: the
lock manager exports it (:meth:`~.manager.LockManager.waits_for`) as plain
data for drawing (``minidb.viz.locks`` turns it into graphviz source) and
uses it to tell a real deadlock from a false positive. An edge carries the
lock, the holder's mode and the reason (:mod:`.queue`): ``conflicting mode``
(its granted mode conflicts), ``conversion first`` (a pending conversion
keeps new requests out) or ``ahead in the queue`` (first come, first served).

Example, the upgrade deadlock: T1 and T2 hold SH on p(1.3.48) and both ask
for EX. Edges T1 -> T2 and T2 -> T1, both "conflicting mode" (SH); ``cycles()`` is
``[(1, 2)]``.
"""

from __future__ import annotations

from dataclasses import dataclass

from minidb.pagestore.lock.lockid import LockId
from minidb.pagestore.lock.modes import LockMode


@dataclass(frozen=True)
class WaitNode:
    txn_id: int
    waiting_on: LockId | None  # the lock it waits for, if it waits
    wanted: LockMode | None
    fingerprint: int
    digest: int  # its digest if waiting, else its fingerprint
    victim: bool = False  # chosen as a deadlock victim, not yet gone


@dataclass(frozen=True)
class WaitEdge:
    waiter: int
    holder: int
    lock_id: LockId
    holder_mode: LockMode
    reason: str


@dataclass(frozen=True)
class WaitsForGraph:
    nodes: tuple[WaitNode, ...]
    edges: tuple[WaitEdge, ...]
    bitmap_bits: int

    def successors(self, txn_id: int) -> list[int]:
        return sorted({e.holder for e in self.edges if e.waiter == txn_id})

    def node(self, txn_id: int) -> WaitNode:
        for n in self.nodes:
            if n.txn_id == txn_id:
                return n
        raise KeyError(txn_id)

    def reaches(self, start: int, goal: int) -> bool:
        """Whether a path of one or more edges leads from ``start`` to ``goal``."""
        seen: set[int] = set()
        stack = list(self.successors(start))
        while stack:
            t = stack.pop()
            if t == goal:
                return True
            if t not in seen:
                seen.add(t)
                stack.extend(self.successors(t))
        return False

    def in_cycle(self, txn_id: int) -> bool:
        return self.reaches(txn_id, txn_id)

    def cycles(self) -> list[tuple[int, ...]]:
        """Every elementary cycle, each rotated to start at its smallest transaction id."""
        adjacency = {n.txn_id: self.successors(n.txn_id) for n in self.nodes}
        found: set[tuple[int, ...]] = set()

        def walk(start: int, t: int, path: list[int]) -> None:
            for nxt in adjacency.get(t, []):
                if nxt == start:
                    found.add(tuple(path))
                elif nxt > start and nxt not in path:
                    walk(start, nxt, path + [nxt])

        for start in sorted(adjacency):
            walk(start, start, [start])
        return sorted(found)


def exact_edges(waiters: list, blockers_of) -> dict[int, set[int]]:
    """Adjacency (txn -> txns it waits for) from the waiting requests; victims are left out
    (they are about to stop waiting), as Dreadlocks leaves them out of digests."""
    adjacency: dict[int, set[int]] = {}
    for request in waiters:
        if request.victim is not None:
            continue
        adjacency.setdefault(request.owner.txn_id, set()).update(b.owner.txn_id for b, _ in blockers_of(request))
    return adjacency


def in_cycle(adjacency: dict[int, set[int]], txn_id: int) -> bool:
    seen: set[int] = set()
    stack = list(adjacency.get(txn_id, ()))
    while stack:
        t = stack.pop()
        if t == txn_id:
            return True
        if t not in seen:
            seen.add(t)
            stack.extend(adjacency.get(t, ()))
    return False
