"""The B+tree crash test: index operations in several transactions, a crash at every write and fsync.

A seeded workload formats a small volume (512-byte pages, so a leaf holds a
handful of entries and splits are frequent; a buffer pool of a few frames,
so pages are written at any moment) and creates one index, unique or not,
in a committed transaction. Then up to three interleaved transactions
insert, remove and update keys, scan ranges (forward and backward, checked
against the model at once), take savepoints and roll back to them, commit
(durable or not) and abort; now and then a checkpoint, page cleaning or a
log sync. A key belongs to the transaction that touched it first until
that one ends; the others leave it alone. The transactions take their
key-value locks from a lock manager with a lock timeout of 0 (one thread:
a request that would wait fails at once, with :class:`LockTimeout`, and the
operation changes nothing): a next key or a scanned range that another
transaction holds refuses the operation. A scan that goes through must see
exactly the committed entries and its own transaction's changes, never
another's (the isolation key-value locking gives). Rollbacks and aborts
undo keys logically on pages that others' splits made.

A *model* follows along: the committed entries, each transaction's own
changes, and the committed state after each commit. Then, for every write,
truncate and fsync after the index's creation (and each way a crash can
treat unsynced writes: none kept, all kept, a torn last write, a random
subset), the crashed disk is opened, which restarts, and:

1. the commits whose commit point is in the log the crash left must be a
   prefix of the commit order and include every durable commit that had
   returned before the crash;
2. the index must hold *exactly* the committed entries after that prefix
   (losers' inserts gone, their removes undone), read leaf by leaf;
3. the tree must pass :func:`~minidb.pagestore.btree.verify.check_tree`
   (sorted keys, one leaf depth, sibling links both ways, separators
   bracketing children), whatever split was cut in the middle;
4. no transaction is left active and the volume's maps are consistent;
5. at a quarter of the crash points, a twin of the crashed image is
   restarted with a crash *during restart* (after a random one of its disk
   operations: in the middle of the undo of a split, of a logical undo),
   then restarted again: 2-4 must hold as well (restart is idempotent).

Anything else, an exception included, is a violation.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from minidb.crashtest.sweep import Restarted, SweepResult, sweep_crash_points
from minidb.errors import MinidbError
from minidb.io import SimDisk
from minidb.log import LSN, LogManager
from minidb.pagestore import DuplicateKeyError, StorageManager, check_tree
from minidb.pagestore.lock import LOCK_MANAGER, LockTimeout

PAGE_SIZE, NUM_PAGES, EXT_SZ = 512, 256, 4
FILE_MAX = 8000
MAX_ACTIVE = 3
RESTART_FRAMES = 16

Entry = tuple[Any, bytes]


def _clock() -> float:
    return 1_700_000_000.0


@dataclass
class TxnModel:
    xct: Any
    added: set[Entry] = field(default_factory=set)
    removed: set[Entry] = field(default_factory=set)
    saves: list[tuple[Any, set[Entry], set[Entry]]] = field(default_factory=list)


@dataclass(frozen=True)
class Commit:
    tid: int
    lsn: LSN
    returned_at: int | None  # the event index by which a durable commit had returned (None: not durable)


@dataclass
class Workload:
    disk: SimDisk
    frames: int
    unique: bool
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
        self.frames = self.rng.choice([6, 8])
        self.unique = self.rng.random() < 0.6
        self.disk = SimDisk(f"crashtest-btree-{seed}")
        self.sm = StorageManager.format(self.disk, num_pages=NUM_PAGES, ext_sz=EXT_SZ, page_size=PAGE_SIZE,
                                        frames=self.frames, clock=_clock, file_max=FILE_MAX, restart_trace=False,
                                        locking=LOCK_MANAGER.call(escalation_threshold=None))
        self.sm.indexes.lock_timeout = 0
        self.refused = 0  # operations a lock held by another transaction refused
        with self.sm.transaction() as t:
            self.index = self.sm.create_index(t, "i2" if self.unique else "u1,str", unique=self.unique)
        self.created_at = len(self.disk.events) - 1
        self.committed: set[Entry] = set()
        self.owner: dict[Any, int] = {}
        self.active: list[TxnModel] = []
        self.commits: list[Commit] = []
        self.states: list[frozenset[Entry]] = [frozenset()]
        self.problems: list[str] = []

    # -- the model -------------------------------------------------------------------------------------
    def seen(self, t: TxnModel) -> set[Entry]:
        return (self.committed - t.removed) | t.added

    def new_key(self) -> Any:
        n = self.rng.randrange(60)
        return n * 7 - 200 if self.unique else (n % 6, "k" * (n % 5))

    def element(self) -> bytes:
        return bytes([97 + self.rng.randrange(26)]) * self.rng.randrange(8, 40)

    def mine(self, t: TxnModel, key: Any) -> bool:
        """Whether ``t`` may touch ``key`` (no other active transaction touched it), taking it if so."""
        holder = self.owner.setdefault(key, t.xct.txn_id)
        return holder == t.xct.txn_id

    # -- the steps -----------------------------------------------------------------------------------------
    def run(self) -> Workload:
        drive(self.sm, self.rng, self.ops, lambda: self.step(self.pick()))
        return Workload(self.disk, self.frames, self.unique, self.index, self.created_at, self.commits,
                        self.states, self.problems)

    def pick(self) -> TxnModel:
        if len(self.active) < MAX_ACTIVE and (not self.active or self.rng.random() < 0.3):
            self.active.append(TxnModel(self.sm.begin()))
        return self.rng.choice(self.active)

    def step(self, t: TxnModel) -> None:
        roll = self.rng.random()
        if roll < 0.4:
            self.insert(t)
        elif roll < 0.55:
            self.remove(t)
        elif roll < 0.62:
            self.update(t)
        elif roll < 0.7:
            self.scan(t)
        elif roll < 0.78:
            self.save_or_rollback(t)
        elif roll < 0.92:
            self.commit(t, durable=self.rng.random() < 0.7)
        else:
            self.abort(t)

    def insert(self, t: TxnModel) -> None:
        for _ in range(self.rng.randint(1, 6)):
            key, el = self.new_key(), self.element()
            if not self.mine(t, key):
                continue
            present = [e for e in self.seen(t) if e[0] == key]
            try:
                self.sm.index_insert(t.xct, self.index, key, el)
            except LockTimeout:
                self.refused += 1
                continue
            except DuplicateKeyError:
                if not present or (not self.unique and (key, el) not in present):
                    self.problems.append(f"T{t.xct.txn_id}: insert of {key!r} refused as a duplicate")
                continue
            if present and (self.unique or (key, el) in present):
                self.problems.append(f"T{t.xct.txn_id}: duplicate {key!r} inserted")
            self._add(t, (key, el))

    def _add(self, t: TxnModel, entry: Entry) -> None:
        if entry in t.removed:
            t.removed.discard(entry)
        else:
            t.added.add(entry)

    def _drop(self, t: TxnModel, entry: Entry) -> None:
        if entry in t.added:
            t.added.discard(entry)
        else:
            t.removed.add(entry)

    def _victim(self, t: TxnModel) -> Entry | None:
        candidates = sorted(e for e in self.seen(t) if self.owner.get(e[0], t.xct.txn_id) == t.xct.txn_id)
        if not candidates:
            return None
        entry = self.rng.choice(candidates)
        self.mine(t, entry[0])
        return entry

    def remove(self, t: TxnModel) -> None:
        entry = self._victim(t)
        if entry is not None:
            try:
                got = self.sm.index_remove(t.xct, self.index, entry[0], None if self.unique else entry[1])
            except LockTimeout:
                self.refused += 1
                return
            if got != entry[1]:
                self.problems.append(f"T{t.xct.txn_id}: removing {entry[0]!r} gave {got!r}, not {entry[1]!r}")
            self._drop(t, entry)

    def update(self, t: TxnModel) -> None:
        entry = self._victim(t)
        el = self.element()
        if entry is None or (entry[0], el) in self.seen(t):
            return
        try:
            self.sm.index_update(t.xct, self.index, entry[0], el, None if self.unique else entry[1])
        except LockTimeout:
            self.refused += 1
            return
        self._drop(t, entry)
        self._add(t, (entry[0], el))

    def scan(self, t: TxnModel) -> None:
        a, b = sorted([self.new_key(), self.new_key()])
        lo_incl, hi_incl, backward = (self.rng.random() < 0.5 for _ in range(3))
        lo, hi = (None if self.rng.random() < 0.2 else a), (None if self.rng.random() < 0.2 else b)
        want = [e for e in sorted(self.seen(t)) if (lo is None or e[0] > lo or lo_incl and e[0] == lo)
                and (hi is None or e[0] < hi or hi_incl and e[0] == hi)]
        try:
            got = list(self.sm.index_scan(t.xct, self.index, lo, hi, lo_incl, hi_incl, backward))
        except LockTimeout:
            self.refused += 1
            return
        if got != (want[::-1] if backward else want):
            self.problems.append(f"T{t.xct.txn_id}: scan {lo!r}..{hi!r} gave {got[:4]}..., the model {want[:4]}...")

    def save_or_rollback(self, t: TxnModel) -> None:
        save_or_rollback(self.sm, self.rng, t)

    def commit(self, t: TxnModel, durable: bool) -> None:
        lsn = self.sm.commit(t.xct, durable=durable)
        self._end(t)
        if lsn.is_null:
            return
        self.committed = (self.committed - t.removed) | t.added
        self.commits.append(Commit(t.xct.txn_id, lsn, len(self.disk.events) - 1 if durable else None))
        self.states.append(frozenset(self.committed))

    def abort(self, t: TxnModel) -> None:
        self.sm.abort(t.xct)
        self._end(t)

    def _end(self, t: TxnModel) -> None:
        self.active.remove(t)
        self.owner = {k: tid for k, tid in self.owner.items() if tid != t.xct.txn_id}


def drive(sm: StorageManager, rng: random.Random, ops: int, step: Callable[[], None]) -> None:
    """``ops`` steps of a workload: now and then a checkpoint, page cleaning or a log sync, else ``step()``;
    then the log flushed (the crash points are the disk's events)."""
    for _ in range(ops):
        roll = rng.random()
        if roll < 0.06:
            sm.checkpoint()
        elif roll < 0.12:
            sm.bp.clean()
        elif roll < 0.15:
            sm.log.sync()
        else:
            step()
    sm.log.flush()


def save_or_rollback(sm: StorageManager, rng: random.Random, t: TxnModel) -> None:
    """Half the time (when ``t`` has savepoints), roll ``t`` back to one of them, and its model with it;
    else take a new savepoint."""
    if t.saves and rng.random() < 0.5:
        i = rng.randrange(len(t.saves))
        point, added, removed = t.saves[i]
        sm.rollback_to(t.xct, point)
        t.added, t.removed = set(added), set(removed)
        del t.saves[i + 1:]
    else:
        t.saves.append((sm.save_point(t.xct), set(t.added), set(t.removed)))


def run_workload(seed: int, ops: int) -> Workload:
    return Runner(seed, ops).run()


def surviving(image: SimDisk, commits: list[Commit]) -> list[bool]:
    """Whether each commit point is in the log the crash left (read before restart): its ``xct_end``, or
    the ``xct_freeing_space`` before it when it freed pages (an R*-tree's dissolved nodes)."""
    log = LogManager(image, file_max=FILE_MAX, readonly=True)
    try:
        found = []
        for commit in commits:
            try:
                entry = log.read(commit.lsn)
            except MinidbError:
                found.append(False)
                continue
            found.append(entry.txn_id == commit.tid and (entry.type_name == "xct_freeing_space" or (
                entry.type_name == "xct_end" and entry.values["committed"])))
        return found
    finally:
        log.close()


def open_sm(image: SimDisk) -> StorageManager:
    return StorageManager.open(image, frames=RESTART_FRAMES, clock=_clock, file_max=FILE_MAX, restart_trace=False)


def check_restarted(workload: Workload, sm: StorageManager, k: int) -> str | None:
    """None if the restarted ``sm`` holds exactly the committed entries after ``k`` commits, in a sound tree."""
    ix = sm.indexes.index(workload.index)
    problems, found = check_tree(sm.bp, ix.root, ix.unique)
    if problems:
        return f"after restart: {problems[:3]}"
    return compare_restarted(sm, sorted((ix.desc.decode(key), el) for key, el in found), workload.states[k], k)


def compare_restarted(sm: StorageManager, got: list[Any], state: frozenset[Any], k: int) -> str | None:
    """None if the restarted ``sm``'s index held ``got``, exactly the committed ``state`` after ``k``
    commits, and no transaction is active and the volume's maps are consistent."""
    want = sorted(state)
    if got != want:
        missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
        return f"after {k} commits: missing {missing[:3]}, extra {extra[:3]}"
    if sm.xcts.active():
        return f"transactions still active after restart: {sm.xcts.active()}"
    volume_problems = sm.check()
    if volume_problems:
        return f"volume maps: {volume_problems[:3]}"
    return None


def check_point(workload: Workload, image: SimDisk, crash_event: int) -> Restarted:
    return check_commits_and_restart(workload.commits, image, crash_event, open_sm,
                                     lambda sm, k: check_restarted(workload, sm, k))


def returned(commits: list[Commit], crash_event: int) -> tuple[bool, ...]:
    """Which commits had returned when the crash came: all :func:`check_commits_and_restart` reads from the
    crash's event index besides the image (the memo key of the sweep, :mod:`minidb.crashtest.sweep`)."""
    return tuple(c.returned_at is not None and c.returned_at <= crash_event for c in commits)


def check_commits_and_restart(commits: list[Commit], image: SimDisk, crash_event: int,
                              reopen: Callable[[SimDisk], Any], check: Callable[[Any, int], str | None]) -> Restarted:
    """Check that the commits the crashed ``image`` kept are a prefix holding every durable one that had
    returned, restart it (``reopen``) and ``check`` it against the state after those ``k`` commits; with
    what a crash during that restart needs (:func:`~minidb.crashtest.sweep.crash_during_restart`): an
    image crashed during it is restarted and checked against the same ``k``."""
    try:
        present = surviving(image, commits)
        k = sum(present)
        if present != [True] * k + [False] * (len(present) - k):
            return Restarted(f"the surviving commits are not a prefix of the commit order: {present}")
        lost = [c.tid for c in commits[k:] if c.returned_at is not None and c.returned_at <= crash_event]
        if lost:
            return Restarted(f"durable commits of {['T%d' % t for t in lost]} lost")
        before = len(image.events)
        sm = reopen(image)
        restart = image.events[before:]  # what restart did, before the check reads (and may write)
        problem = check(sm, k)
    except MinidbError as e:
        return Restarted(f"restart failed: {type(e).__name__}: {e}")

    def recheck(crashed: SimDisk) -> str | None:
        try:
            return check(reopen(crashed), k)
        except MinidbError as e:
            return f"restart failed: {type(e).__name__}: {e}"

    return Restarted(problem, restart, recheck)


def crash_sweep(seed: int, ops: int, torn_variants: int = 1, random_variants: int = 1,
                restart_crashes: float = 0.25) -> SweepResult:
    workload = run_workload(seed, ops)
    return sweep_crash_points(workload.disk, workload.created_at + 1, seed,
                              lambda image, event: check_point(workload, image, event),
                              workload.problems, torn_variants, random_variants, restart_crashes,
                              memo_key=lambda event: returned(workload.commits, event))
