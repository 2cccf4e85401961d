"""The R*-tree crash test: box insertions and removals in several transactions, a crash at every write and fsync.

A seeded workload formats a small volume (512-byte pages; a fanout of 4 to
6, so nodes overflow every few inserts: forced reinsertions, splits, the
root growing, nodes dissolved by removes and the root shrinking all happen;
a buffer pool of a few frames, so pages, and the log before them, are
written in the middle of any of these) and creates one R*-tree in a
committed transaction. Then up to three transactions insert and remove
boxes, search (all four conditions, checked against the model at once),
take savepoints and roll back to them, commit (durable or not) and abort;
now and then a checkpoint, page cleaning or a log sync. The whole index is
locked (EX to change, SH to search) with a lock timeout of 0, so while one
transaction changes the index the others' operations are refused
(:class:`LockTimeout`, nothing changed) until it ends.

A *model* follows along: the committed entries, each transaction's own
changes, and the committed state after each commit. Then, for every write,
truncate and fsync after the index's creation (and each way a crash can
treat unsynced writes), the crashed disk is opened, which restarts, and:

1. the commits whose commit point is in the log the crash left must be a
   prefix of the commit order and include every durable commit that had
   returned before the crash;
2. the index must hold *exactly* the committed entries after that prefix
   (losers' inserts gone, their removes undone);
3. the tree must pass :func:`~minidb.pagestore.rtree.verify.check_rtree`
   (one leaf depth, every box the union of its child's, fill between
   ``m`` and ``M``), whatever split, reinsertion or condensing was cut;
4. no transaction is left active and the volume's maps are consistent;
5. at a quarter of the crash points, a twin of the crashed image is
   restarted with a crash *during restart*, then restarted again: 2-4
   must hold as well.

Anything else, an exception included, is a violation.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from minidb.crashtest.btree import (
    FILE_MAX,
    Commit,
    TxnModel,
    check_commits_and_restart,
    compare_restarted,
    drive,
    open_sm,
    returned,
    save_or_rollback,
)
from minidb.crashtest.sweep import Restarted, SweepResult, sweep_crash_points
from minidb.io import SimDisk
from minidb.pagestore import Box, StorageManager, check_rtree
from minidb.pagestore.lock import LOCK_MANAGER, LockTimeout

PAGE_SIZE, NUM_PAGES, EXT_SZ = 512, 256, 4
MAX_ACTIVE = 3
SEARCHES = ("overlap", "cover", "inside", "exact")

Entry = tuple[Box, bytes]


def _clock() -> float:
    return 1_700_000_000.0


def matches(box: Box, query: Box, cond: str) -> bool:
    """The model's answer to whether an entry's ``box`` meets ``cond`` with ``query``."""
    return {"overlap": box.overlaps(query), "cover": box.covers(query), "inside": query.covers(box),
            "exact": box == query}[cond]


@dataclass
class Workload:
    disk: SimDisk
    index: Any
    created_at: int  # the event index of the fsync that made the index's creation durable
    commits: list[Commit]
    states: list[frozenset[Entry]]  # committed entries after the first k commits
    problems: list[str]


class Runner:
    """One seeded workload (see the module documentation); each kind of step is a method."""

    def __init__(self, seed: int, ops: int):
        self.rng = random.Random(seed)
        self.ops = ops
        self.disk = SimDisk(f"crashtest-rtree-{seed}")
        self.sm = StorageManager.format(self.disk, num_pages=NUM_PAGES, ext_sz=EXT_SZ, page_size=PAGE_SIZE,
                                        frames=self.rng.choice([6, 8]), clock=_clock, file_max=FILE_MAX,
                                        restart_trace=False, locking=LOCK_MANAGER.call(escalation_threshold=None))
        self.sm.rtrees.lock_timeout = 0
        self.refused = 0  # operations the index lock held by another transaction refused
        with self.sm.transaction() as t:
            self.index = self.sm.create_rtree(t, fanout=self.rng.choice([4, 5, 6]))
        self.created_at = len(self.disk.events) - 1
        self.committed: set[Entry] = set()
        self.active: list[TxnModel] = []
        self.commits: list[Commit] = []
        self.states: list[frozenset[Entry]] = [frozenset()]
        self.problems: list[str] = []
        self.serial = 0

    def seen(self, t: TxnModel) -> set[Entry]:
        return (self.committed - t.removed) | t.added

    def box(self) -> Box:
        x, y = self.rng.randrange(60), self.rng.randrange(60)
        return Box(x, y, x + self.rng.choice([0, 1, 2, 5]), y + self.rng.choice([0, 1, 3]))

    # -- the steps -----------------------------------------------------------------------------------------
    def run(self) -> Workload:
        drive(self.sm, self.rng, self.ops, lambda: self.step(self.pick()))
        return Workload(self.disk, self.index, self.created_at, self.commits, self.states, self.problems)

    def pick(self) -> TxnModel:
        if len(self.active) < MAX_ACTIVE and (not self.active or self.rng.random() < 0.2):
            self.active.append(TxnModel(self.sm.begin()))
        return self.rng.choice(self.active)

    def step(self, t: TxnModel) -> None:
        roll = self.rng.random()
        try:
            if roll < 0.45:
                self.insert(t)
            elif roll < 0.62:
                self.remove(t)
            elif roll < 0.7:
                self.search(t)
            elif roll < 0.78:
                self.save_or_rollback(t)
            elif roll < 0.93:
                self.commit(t, durable=self.rng.random() < 0.7)
            else:
                self.abort(t)
        except LockTimeout:
            self.refused += 1

    def insert(self, t: TxnModel) -> None:
        for _ in range(self.rng.randint(1, 6)):
            self.serial += 1
            entry = (self.box(), b"e%d" % self.serial)
            self.sm.rtree_insert(t.xct, self.index, *entry)
            if entry in t.removed:
                t.removed.discard(entry)
            else:
                t.added.add(entry)

    def remove(self, t: TxnModel) -> None:
        for _ in range(self.rng.randint(1, 4)):
            candidates = sorted(self.seen(t))
            if not candidates:
                return
            entry = self.rng.choice(candidates)
            self.sm.rtree_remove(t.xct, self.index, *entry)
            if entry in t.added:
                t.added.discard(entry)
            else:
                t.removed.add(entry)

    def search(self, t: TxnModel) -> None:
        query, cond = self.box(), self.rng.choice(SEARCHES)
        if cond in ("cover", "exact") and self.seen(t) and self.rng.random() < 0.7:
            query = self.rng.choice(sorted(self.seen(t)))[0]
        elif cond == "inside":
            query = Box(query.xlo, query.ylo, query.xhi + 20, query.yhi + 20)
        got = self.sm.rtree_search(t.xct, self.index, query, cond)
        want = sorted(e for e in self.seen(t) if matches(e[0], query, cond))
        if got != want:
            self.problems.append(f"T{t.xct.txn_id}: {cond} {query} gave {got[:3]}..., the model {want[:3]}...")

    def save_or_rollback(self, t: TxnModel) -> None:
        save_or_rollback(self.sm, self.rng, t)

    def commit(self, t: TxnModel, durable: bool) -> None:
        lsn = self.sm.commit(t.xct, durable=durable)
        self.active.remove(t)
        if lsn.is_null:
            return
        self.committed = (self.committed - t.removed) | t.added
        self.commits.append(Commit(t.xct.txn_id, lsn, len(self.disk.events) - 1 if durable else None))
        self.states.append(frozenset(self.committed))

    def abort(self, t: TxnModel) -> None:
        self.sm.abort(t.xct)
        self.active.remove(t)


def run_workload(seed: int, ops: int) -> Workload:
    return Runner(seed, ops).run()


def check_restarted(workload: Workload, sm: StorageManager, k: int) -> str | None:
    """None if the restarted ``sm`` holds exactly the committed entries after ``k`` commits, in a sound tree."""
    problems, got = check_rtree(sm.volume, sm.rtrees.tree(workload.index).root)
    if problems:
        return f"after restart: {problems[:3]}"
    return compare_restarted(sm, got, workload.states[k], k)


def check_point(workload: Workload, image: SimDisk, crash_event: int) -> Restarted:
    return check_commits_and_restart(workload.commits, image, crash_event, open_sm,
                                     lambda sm, k: check_restarted(workload, sm, k))


def crash_sweep(seed: int, ops: int, torn_variants: int = 1, random_variants: int = 1,
                restart_crashes: float = 0.25) -> SweepResult:
    workload = run_workload(seed, ops)
    return sweep_crash_points(workload.disk, workload.created_at + 1, seed,
                              lambda image, event: check_point(workload, image, event),
                              workload.problems, torn_variants, random_variants, restart_crashes,
                              memo_key=lambda event: returned(workload.commits, event))
