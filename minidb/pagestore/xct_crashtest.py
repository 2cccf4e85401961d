"""The page store's crash test: transactions, a crash at every write and fsync, restart, a model.

A seeded workload runs up to three interleaved transactions on a small
volume (512-byte pages, a buffer pool of a few frames, so pages are evicted
and written at any moment): files created and destroyed, small and large
records created, updated, appended to, truncated, read and freed, savepoints
and partial rollbacks, commits (durable or not) and aborts, checkpoints,
page cleaning. In every other seed records are small only up to 8 bytes (one
chunk fits a slot) and index pages list 3 pages, so that records grown and
cut by whole pages (:meth:`Runner.reshape`) pass through the large shapes,
LARGE_0, LARGE_1 and LARGE_2, and back (the check after restart compares
every record's bytes and checks the large records' pages,
:meth:`FileManager.check_large_records`). A *model* follows along: the
records each transaction sees, and the committed state after each commit.

Transactions take their locks through :class:`ScriptLocking`, a lock table
that never waits: an operation whose lock another transaction holds is
simply not tried (the workload is single-threaded; conflicts and deadlocks
are the lock manager's tests).

Then, for every write, truncate and fsync of the workload (and each way a
crash can treat unsynced writes: none kept, all kept, a torn last write, a
random subset), the crashed disk is opened, which restarts, and:

1. the commits that survived (their commit point is in the recovered log)
   must be a prefix of the commit order, and include every commit whose
   durable ``commit()`` had returned before the crash;
2. the files and their records must be *exactly* the model's committed
   state after that prefix: committed data there, uncommitted and aborted
   data gone;
3. the volume's maps must be consistent, no transaction active, no store
   in use but the files' two stores each;
4. at some crash points, a second image of the same crash is restarted
   with a crash *during restart* (after a random one of its disk
   operations), then restarted again: the result must be the same
   (restart is idempotent).

Anything else, including an exception, is a violation.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from minidb.errors import MinidbError, SimulatedCrash
from minidb.io import SimDisk, crash_points
from minidb.io.sweep import SweepResult
from minidb.log.lsn import LSN
from minidb.pagestore.errors import RecordWontFitError, VolumeFullError
from minidb.pagestore.files.file import Policy
from minidb.pagestore.ids import RecordId, StoreId
from minidb.pagestore.pages.rectag import chunk_size
from minidb.pagestore.sm import StorageManager
from minidb.pagestore.volume.stores import STORE_DIRECTORY, ROOT_INDEX

PAGE_SIZE, NUM_PAGES, EXT_SZ = 512, 128, 4
DATA_PAGE = chunk_size(PAGE_SIZE)  # bytes of a large record's body on one data page
FILE_MAX = 6000
MAX_ACTIVE = 3
LARGE_SHAPES = {"max_small_rec": 8, "index_fanout": 3}  # LARGE_1 holds 3 pages, LARGE_2 9: cheap to reach
RESTART_FRAMES = 12  # restart with a pool larger than the workload's: fewer evictions, a quicker sweep


def _clock() -> float:
    return 1_700_000_000.0


class WouldBlock(Exception):
    """The workload's lock table refuses to wait: the operation is not tried."""


class ScriptLocking:
    """Record and store locks for a single-threaded workload: conflicts raise instead of waiting.

    A record lock implies an intention lock on its store (the hierarchy of
    Shore's lock manager, reduced to what the workload needs: IS, IX, SH, EX).
    """

    COMPATIBLE = {"IS": {"IS", "IX", "SH"}, "IX": {"IS", "IX"}, "SH": {"IS", "SH"}, "EX": set()}

    def __init__(self) -> None:
        self.records: dict[RecordId, tuple[int, str]] = {}
        self.stores: dict[StoreId, dict[int, set[str]]] = {}  # store -> tid -> modes held

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
        return True  # pages, extents: the workload never conflicts on them

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


State = dict[StoreId, dict[RecordId, tuple[bytes, bytes]]]


@dataclass
class TxnModel:
    """What one transaction has done, as the model sees it."""

    xct: Any
    writes: dict[RecordId, tuple[bytes, bytes] | None] = field(default_factory=dict)
    created: set[StoreId] = field(default_factory=set)
    destroyed: set[StoreId] = field(default_factory=set)
    savepoints: list[tuple[Any, tuple]] = field(default_factory=list)

    def snapshot(self) -> tuple:
        return dict(self.writes), set(self.created), set(self.destroyed)

    def restore(self, snap: tuple) -> None:
        self.writes, self.created, self.destroyed = dict(snap[0]), set(snap[1]), set(snap[2])


@dataclass(frozen=True)
class Commit:
    tid: int
    lsn: LSN  # the commit point (xct_end or xct_freeing_space)
    synced_at: int | None  # index of the last disk event when a durable commit returned


@dataclass
class Workload:
    disk: SimDisk
    frames: int
    buffer_size: int
    formatted_at: int
    commits: list[Commit]
    states: list[State]  # states[k]: the committed state after the first k commits
    reshapes: set[tuple[str, str]] = field(default_factory=set)  # (shape before, shape after) of each reshape


class Runner:
    """Runs one seeded workload against a storage manager and its model."""

    def __init__(self, seed: int, ops: int):
        self.rng = random.Random(seed)
        self.ops = ops
        self.frames = self.rng.choice([3, 4, 6])
        self.buffer_size = self.rng.choice([512, 2048, 8192])
        self.disk = SimDisk(f"crashtest-pagestore-{seed}")
        self.locking = ScriptLocking()
        self.shapes = seed % 2 == 0  # not drawn from the RNG: the other seeds run the workloads they always ran
        self.sm = StorageManager.format(self.disk, num_pages=NUM_PAGES, ext_sz=EXT_SZ, page_size=PAGE_SIZE,
                                        frames=self.frames, locking=self.locking, clock=_clock, file_max=FILE_MAX,
                                        buffer_size=self.buffer_size, **(LARGE_SHAPES if self.shapes else {}))
        self.reshapes: set[tuple[str, str]] = set()
        self.formatted_at = len(self.disk.events) - 1
        self.committed: State = {}
        self.states: list[State] = [{}]
        self.commits: list[Commit] = []
        self.active: list[TxnModel] = []

    # -- the model's view ------------------------------------------------------------------------
    def files_seen(self, t: TxnModel) -> list[StoreId]:
        files = (set(self.committed) | t.created) - t.destroyed
        return sorted(files)

    def records_seen(self, t: TxnModel, fid: StoreId) -> dict[RecordId, tuple[bytes, bytes]]:
        seen = dict(self.committed.get(fid, {}))
        for rid, value in t.writes.items():
            if StoreId(rid.vol, rid.store) != fid:
                continue
            if value is None:
                seen.pop(rid, None)
            else:
                seen[rid] = value
        return seen

    # -- operations ----------------------------------------------------------------------------------
    def run(self) -> Workload:
        for _ in range(self.ops):
            roll = self.rng.random()
            if roll < 0.04:
                self.sm.checkpoint()
            elif roll < 0.08:
                self.sm.bp.clean()
            elif roll < 0.10:
                self.sm.log.sync()
            elif not self.active or (len(self.active) < MAX_ACTIVE and roll < 0.22):
                self.active.append(TxnModel(self.sm.begin()))
            else:
                self.step(self.rng.choice(self.active))
        self.sm.log.flush()
        return Workload(self.disk, self.frames, self.buffer_size, self.formatted_at, self.commits, self.states,
                        self.reshapes)

    def step(self, t: TxnModel) -> None:
        files = self.files_seen(t)
        roll = self.rng.random()
        try:
            if roll < 0.08 or not files:
                fid = self.sm.create_file(t.xct)
                t.created.add(fid)
            elif roll < 0.40:
                self.create(t, self.rng.choice(files))
            elif roll < 0.62 and self.shapes and self.rng.random() < 0.7:
                self.reshape(t, self.rng.choice(files))
            elif roll < 0.62:
                self.change(t, self.rng.choice(files))
            elif roll < 0.68:
                rid = self.pick(t, self.rng.choice(files))
                if rid is not None:
                    self.sm.read_rec(t.xct, rid)
            elif roll < 0.72:
                self.destroy(t, self.rng.choice(files))
            elif roll < 0.77:
                t.savepoints.append((self.sm.save_point(t.xct), t.snapshot()))
            elif roll < 0.81 and t.savepoints:
                index = self.rng.randrange(len(t.savepoints))
                point, snap = t.savepoints[index]
                self.sm.rollback_to(t.xct, point)
                t.restore(snap)
                del t.savepoints[index + 1:]  # later savepoints are gone; this one stays
            elif roll < 0.93:
                self.commit(t, durable=self.rng.random() < 0.85)
            else:
                self.sm.abort(t.xct)
                self.active.remove(t)
        except WouldBlock:
            pass
        except (RecordWontFitError, VolumeFullError):
            pass  # the operation changed nothing (it rolls back what it did)

    def pick(self, t: TxnModel, fid: StoreId) -> RecordId | None:
        seen = self.records_seen(t, fid)
        if not seen:
            return None
        return self.rng.choice(sorted(seen))

    def body(self) -> bytes:
        if self.rng.random() < 0.2:
            size = self.rng.randint(150, 700)
        else:
            size = self.rng.randint(0, 8 if self.shapes else 50)
        return bytes(self.rng.randrange(256) for _ in range(size))

    def create(self, t: TxnModel, fid: StoreId) -> None:
        hdr = bytes(self.rng.randrange(256) for _ in range(self.rng.randint(0, 4)))
        body = self.body()
        policy = self.rng.choice([Policy.DEFAULT, Policy.APPEND, Policy.CACHE | Policy.COMPACT])
        rid = self.sm.create_rec(t.xct, fid, body, hdr, policy)
        t.writes[rid] = (hdr, body)

    def change(self, t: TxnModel, fid: StoreId) -> None:
        rid = self.pick(t, fid)
        if rid is None:
            return
        hdr, body = self.records_seen(t, fid)[rid]
        roll = self.rng.random()
        if roll < 0.3 and body:
            start = self.rng.randrange(len(body))
            data = bytes(self.rng.randrange(256) for _ in range(self.rng.randint(1, len(body) - start)))
            self.sm.update_rec(t.xct, rid, start, data)
            body = body[:start] + data + body[start + len(data):]
        elif roll < 0.55:
            data = self.body()[:self.rng.choice([10, 60, 400])]
            self.sm.append_rec(t.xct, rid, data)
            body = body + data
        elif roll < 0.7 and body:
            amount = self.rng.randint(1, len(body))
            self.sm.truncate_rec(t.xct, rid, amount)
            body = body[:len(body) - amount]
        else:
            self.sm.free_rec(t.xct, rid)
            t.writes[rid] = None
            return
        t.writes[rid] = (hdr, body)

    def reshape(self, t: TxnModel, fid: StoreId) -> None:
        """Grow a record by pages or cut it, one to three times: it changes shape (small, LARGE_0, 1, 2)."""
        rid = self.pick(t, fid)
        if rid is None:
            return
        hdr, body = self.records_seen(t, fid)[rid]
        for _ in range(self.rng.randint(1, 3)):
            before = self.sm.read_rec(t.xct, rid).flags.name  # locks the record first, as the change will
            if self.rng.random() < 0.6 or not body:
                size = self.rng.choice([1, 2, 3]) * DATA_PAGE + self.rng.randint(-40, 40)
                data = bytes(self.rng.randrange(256) for _ in range(size))
                self.sm.append_rec(t.xct, rid, data)
                body = body + data
            else:
                keep = self.rng.randint(0, len(body))
                if self.rng.random() < 0.3:
                    keep = min(keep, self.rng.randint(0, 8))  # small again
                self.sm.truncate_rec(t.xct, rid, len(body) - keep)
                body = body[:keep]
            t.writes[rid] = (hdr, body)
            self.reshapes.add((before, self.sm.read_rec(t.xct, rid).flags.name))

    def destroy(self, t: TxnModel, fid: StoreId) -> None:
        self.sm.destroy_file(t.xct, fid)
        t.destroyed.add(fid)

    def commit(self, t: TxnModel, durable: bool) -> None:
        lsn = self.sm.commit(t.xct, durable=durable)
        self.active.remove(t)
        if lsn.is_null:
            return  # read-only: nothing logged, nothing to survive
        state = {fid: dict(recs) for fid, recs in self.committed.items()}
        for fid in t.created:
            state.setdefault(fid, {})
        for rid, value in t.writes.items():
            fid = StoreId(rid.vol, rid.store)
            if fid in t.destroyed:
                continue
            if value is None:
                state.get(fid, {}).pop(rid, None)
            else:
                state.setdefault(fid, {})[rid] = value
        for fid in t.destroyed:
            state.pop(fid, None)
        self.committed = state
        self.states.append(state)
        self.commits.append(Commit(t.xct.txn_id, lsn, len(self.disk.events) - 1 if durable else None))


def run_workload(seed: int, ops: int) -> Workload:
    return Runner(seed, ops).run()


def open_sm(workload: Workload, disk: SimDisk) -> StorageManager:
    return StorageManager.open(disk, frames=RESTART_FRAMES, clock=_clock, file_max=FILE_MAX,
                               buffer_size=workload.buffer_size, restart_trace=False)


def survived(sm: StorageManager, commit: Commit) -> bool:
    """Whether the commit point of ``commit`` is in the (recovered) log."""
    try:
        entry = sm.log.read(commit.lsn)
    except MinidbError:
        return False
    if entry.txn_id != commit.tid:
        return False
    return entry.type_name == "xct_freeing_space" or (entry.type_name == "xct_end" and entry.values["committed"])


def check_restarted(workload: Workload, sm: StorageManager, crash_event: int) -> str | None:
    """None if ``sm`` (just restarted after a crash after ``crash_event``) holds exactly what it must."""
    present = [survived(sm, c) for c in workload.commits]
    k = sum(present)
    if present != [True] * k + [False] * (len(present) - k):
        return f"the surviving commits are not a prefix of the commit order: {present}"
    for commit, ok in zip(workload.commits, present):
        if not ok and commit.synced_at is not None and commit.synced_at <= crash_event:
            return f"T{commit.tid}'s durable commit (synced at event {commit.synced_at}) was lost"
    expected = workload.states[k]
    got = sm.contents()
    if got != expected:
        return _difference(expected, got, k)
    problems = sm.check()
    if problems:
        return f"inconsistent maps after restart: {problems[:2]}"
    problems = sm.files.check_large_records()
    if problems:
        return f"damaged large records after restart: {problems[:2]}"
    if sm.xcts.active():
        return f"transactions still active after restart: {sm.xcts.active()}"
    stores = {s.store for s in sm.volume.stores()} - {STORE_DIRECTORY, ROOT_INDEX}
    wanted = set()
    for fid in expected:
        wanted |= {fid.store, sm.files.file_info(fid).large}
    if stores != wanted:
        return f"stores in use {sorted(stores)}, but the files need {sorted(wanted)}"
    return None


def _difference(expected: State, got: State, k: int) -> str:
    if set(expected) != set(got):
        return f"after {k} commits: files {sorted(got)}, expected {sorted(expected)}"
    for fid in sorted(expected):
        if expected[fid] != got[fid]:
            missing = sorted(set(expected[fid]) - set(got[fid]))
            extra = sorted(set(got[fid]) - set(expected[fid]))
            wrong = sorted(r for r in set(expected[fid]) & set(got[fid]) if expected[fid][r] != got[fid][r])
            return f"after {k} commits, {fid}: missing {missing[:3]}, extra {extra[:3]}, different {wrong[:3]}"
    return "contents differ"


def check_point(workload: Workload, image: SimDisk, crash_event: int, restart_crash: random.Random | None = None
                ) -> str | None:
    twin = image.clone() if restart_crash is not None else None
    try:
        before = len(image.events)
        sm = open_sm(workload, image)
        restart_ops = sum(1 for e in image.events[before:] if e.kind in ("write", "truncate", "fsync"))
        problem = check_restarted(workload, sm, crash_event)
        if problem is not None or twin is None:
            return problem
        if restart_ops:
            at = restart_crash.randint(1, restart_ops)
            twin.schedule_crash(after_ops=at)
            try:
                open_sm(workload, twin)
                return f"the crash scheduled during restart (after {at} of {restart_ops} operations) did not happen"
            except SimulatedCrash:
                pass
            problem = check_restarted(workload, open_sm(workload, twin), crash_event)
            if problem is not None:
                return f"after a crash during restart (after {at} of {restart_ops} operations): {problem}"
    except MinidbError as e:
        return f"restart failed: {type(e).__name__}: {e}"
    return None


def crash_sweep(seed: int, ops: int, torn_variants: int = 1, random_variants: int = 1,
                restart_crashes: float = 0.25) -> SweepResult:
    workload = run_workload(seed, ops)
    rng = random.Random(seed * 7919 + 1)
    result = SweepResult()
    for point in crash_points(workload.disk, start=workload.formatted_at + 1, torn_variants=torn_variants,
                              random_variants=random_variants, seed=seed):
        result.points += 1
        nested = rng if rng.random() < restart_crashes else None
        problem = check_point(workload, point.disk, point.event.index, nested)
        if problem is not None:
            result.violations.append(f"seed {seed}, {point}: {problem}")
    return result
