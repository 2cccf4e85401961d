"""Replication's crash test: every crash point of a replicated workload, recovered and checked.

A seeded workload runs on a simulated disk in a replicated environment with
small log files, a small log buffer, tiny nodes and a VLSN index with a
small stride and small buckets (so buckets fill, close at file boundaries
and are flushed at every checkpoint): records written with and without
transactions, commits and aborts, Matchpoints, full checkpoints and
checkpoints stepped pause by pause with operations in between (so VLSNs are
logged between CkptStart and the index's flush at step 6, as in the JE documentation's
recovery example), explicit syncs, and a restart in the middle (a clean
close, or a power failure) so that VLSN allocation must continue across it.

Each fsync that returned after a replicated entry (a synced commit, a
checkpoint's CkptEnd, an explicit sync) is a promise: that entry's VLSN must
survive any later crash.

Then, for every write, truncate and fsync of the disk's history and every
way a crash can treat the unsynced writes, the replicated environment is
opened on the crashed image (recovery loads the flushed index, re-tracks
from CkptStart and merges) and checked:

1. recovery succeeds;
2. the VLSNs of the visible replicated entries of the surviving log ascend
   from 1 with no gaps (1, 2, ..., n), across the restart;
3. the index's range is 1..n, with ``last_sync`` the last Commit, Abort or
   Matchpoint and ``last_txn_end`` the last Commit or Abort;
4. every VLSN of the range maps, through ``get_lte_lsn`` plus a forward
   scan and through ``get_gte_lsn`` plus a backward scan, to the entry that
   carries it;
5. every promise holds;
6. the next replicated entry gets VLSN n + 1;
7. transaction ids: replicated transactions (Commit/Abort with a VLSN)
   have positive ids, internal ones (the index's flushes) negative ids, and
   no id ends two transactions, across crashes and the restart (the id
   counter is recovered for both kinds).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from minidb.crashtest.sweep import SweepResult
from minidb.errors import MinidbError
from minidb.io import CrashMode, SimDisk, crash_points
from minidb.log import LSN
from minidb.logstore import Durability, EnvironmentConfig, LockConflictError
from minidb.replication import SYNC_TYPES, TXN_END_TYPES, ReplicatedEnvironment, VLSNIndexConfig
from minidb.replication.vlsn.scanner import stream_vlsn

DATABASES = ("a", "b")


def fixed_clock() -> float:
    return 1_700_000_000.0


@dataclass
class ReplicatedWorkload:
    seed: int
    disk: SimDisk
    config: EnvironmentConfig
    index_config: VLSNIndexConfig
    promises: list[tuple[int, int]] = field(default_factory=list)  # (event index of the fsync, VLSN made durable)
    checkpoints: int = 0
    stepped_checkpoints: int = 0
    restarts: list[str] = field(default_factory=list)
    vlsns: int = 0  # VLSNs handed out, over every run

    def promised(self, event_index: int) -> list[int]:
        return [vlsn for index, vlsn in self.promises if index <= event_index]


def workload_configs(rng: random.Random) -> tuple[EnvironmentConfig, VLSNIndexConfig]:
    config = EnvironmentConfig(
        file_max=rng.choice([1500, 2500, 4000]),
        buffer_size=rng.choice([1000, 4000]),
        node_max_entries=4,
        node_budget=rng.choice([6, 12, None]),
        checkpoint_bytes_interval=rng.choice([None, 3000]),
        durability=rng.choice([Durability.SYNC, Durability.SYNC, Durability.WRITE_NO_SYNC]),
        clock=fixed_clock,
        trace=False,
    )
    index_config = VLSNIndexConfig(stride=rng.choice([1, 2, 3, 5]), max_mappings=rng.choice([2, 3, 6]),
                                   max_distance=rng.choice([150, 600, 100_000]), log_item_cache_size=4,
                                   trace=False)
    return config, index_config


class _Runner:
    def __init__(self, seed: int, ops: int):
        self.rng = random.Random(seed)
        config, index_config = workload_configs(self.rng)
        self.workload = ReplicatedWorkload(seed, SimDisk(f"crashtest-replication-{seed}"), config, index_config)
        self.ops = ops
        self.keys = [f"k{i:02d}".encode() for i in range(self.rng.choice([10, 20]))]
        self.env = self._open()

    def _open(self) -> ReplicatedEnvironment:
        wl = self.workload
        env = ReplicatedEnvironment.open(wl.disk, wl.config, wl.index_config)
        for name in DATABASES:
            env.database(name)
        return env

    def promise(self) -> None:
        """An fsync just returned: every VLSN logged so far must survive a later crash."""
        last = self.env.vlsn_index.allocator.last
        if last:
            self.workload.promises.append((len(self.workload.disk.events) - 1, last))

    def value(self) -> bytes:
        return f"v{self.rng.randrange(1000)}".encode() * self.rng.choice([1, 2, 6])

    def write(self, txn=None) -> None:
        db = self.env.database(self.rng.choice(DATABASES))
        key = self.rng.choice(self.keys)
        if self.rng.random() < 0.2:
            db.delete(key, txn=txn)
        else:
            db.put(key, self.value(), txn=txn)

    def short_txn(self) -> None:
        txn = self.env.begin()
        try:
            for _ in range(self.rng.randint(1, 3)):
                self.write(txn)
        except LockConflictError:
            txn.abort()
            return
        if self.rng.random() < 0.7:
            lsn = txn.commit()
            if not lsn.is_null and txn.durability is Durability.SYNC:  # a commit with nothing to log syncs nothing
                self.promise()
        else:
            txn.abort()

    def small_op(self, pause=None) -> None:
        if self.rng.random() >= 0.35:
            return
        roll = self.rng.random()
        if roll < 0.6:
            self.write()
        elif roll < 0.85:
            self.short_txn()
        else:
            self.env.log_matchpoint()

    def checkpoint(self) -> None:
        self.env.checkpoint()
        self.promise()
        self.workload.checkpoints += 1

    def stepped_checkpoint(self) -> None:
        run = self.env.env.checkpointer.start("stepped")
        while not run.done:
            pause = run.advance()
            if pause is not None and pause.step == 8 and pause.step_done:
                self.promise()  # CkptEnd was fsynced; operations after this pause are not
            if not run.done and pause is not None:
                self.small_op(pause)
        self.workload.checkpoints += 1
        self.workload.stepped_checkpoints += 1

    def restart(self) -> None:
        if self.rng.random() < 0.5:
            self.env.close()
            self.workload.restarts.append("close")
        else:
            self.env.crash(CrashMode.nothing())
            self.workload.restarts.append("crash")
        self.workload.vlsns += self.env.vlsn_index.allocator.last
        self.env = self._open()
        self.workload.vlsns -= self.env.vlsn_index.allocator.last  # VLSNs lost by the crash are handed out again

    def run(self) -> ReplicatedWorkload:
        rng = self.rng
        forced = {self.ops // 4: "stepped", self.ops // 2: "restart", (3 * self.ops) // 4: "checkpoint"}
        for i in range(self.ops):
            roll = rng.random()
            try:
                if forced.get(i) == "stepped":
                    self.stepped_checkpoint()
                elif forced.get(i) == "restart":
                    self.restart()
                elif forced.get(i) == "checkpoint":
                    self.checkpoint()
                elif roll < 0.40:
                    for _ in range(rng.randint(1, 4)):
                        self.write()
                elif roll < 0.65:
                    self.short_txn()
                elif roll < 0.72:
                    self.env.log_matchpoint()
                elif roll < 0.82:
                    self.stepped_checkpoint()
                elif roll < 0.88:
                    self.checkpoint()
                else:
                    self.env.sync()
                    self.promise()
            except LockConflictError:
                pass
        self.workload.vlsns += self.env.vlsn_index.allocator.last
        return self.workload


def run_workload(seed: int, ops: int) -> ReplicatedWorkload:
    return _Runner(seed, ops).run()


def stream_of(env: ReplicatedEnvironment) -> list[tuple[int, LSN, str]]:
    """(VLSN, LSN, type) of every visible replicated entry of the log, in log order."""
    return [(vlsn, e.lsn, e.type_name) for e in env.log.scan() if (vlsn := stream_vlsn(e)) is not None]


def check_index(env: ReplicatedEnvironment) -> str | None:
    """None if the index and the log agree (points 2-4 of the module documentation); else what is wrong."""
    stream = stream_of(env)
    vlsns = [v for v, _, _ in stream]
    if vlsns != list(range(1, len(vlsns) + 1)):
        gaps = [(a, b) for a, b in zip(vlsns, vlsns[1:], strict=False) if b != a + 1][:3]
        return f"the log's VLSNs do not ascend from 1 without gaps: first breaks {gaps or vlsns[:3]}"
    index = env.vlsn_index
    got = index.range
    n = len(vlsns)
    last_sync = max((v for v, _, t in stream if t in SYNC_TYPES), default=0)
    last_txn_end = max((v for v, _, t in stream if t in TXN_END_TYPES), default=0)
    if n == 0:
        return None if got.is_empty else f"the log has no VLSN but the index's range is {got}"
    if (got.first, got.last, got.last_sync, got.last_txn_end) != (1, n, last_sync, last_txn_end):
        return (f"the index's range is {got}; the log holds VLSNs 1..{n}, last sync {last_sync}, "
                f"last txn end {last_txn_end}")
    forward, backward = index.forward_scanner(), index.backward_scanner()
    for vlsn, lsn, _ in stream:
        if not index.get_lte_lsn(vlsn) <= lsn <= index.get_gte_lsn(vlsn):
            return f"VLSN {vlsn} at {lsn}: LTE {index.get_lte_lsn(vlsn)} or GTE {index.get_gte_lsn(vlsn)} is wrong"
        found = forward.find(vlsn).lsn
        back = backward.find(vlsn).lsn
        if found != lsn or back != lsn:
            return f"VLSN {vlsn} is at {lsn}, the forward scan found {found}, the backward scan {back}"
    return None


def check_txn_ids(env: ReplicatedEnvironment) -> str | None:
    """None if transaction ids keep their kinds and are never reused (point 7); else what is wrong."""
    ended: dict[int, LSN] = {}
    for entry in env.log.scan():
        if entry.type_name not in TXN_END_TYPES:
            continue
        txn_id, replicated = entry.txn_id, entry.vlsn is not None
        if (txn_id > 0) != replicated:
            kind = "replicated" if replicated else "internal"
            return f"{entry.type_name} at {entry.lsn} ends {kind} txn {txn_id}: ids of that kind are " + (
                "positive" if replicated else "negative")
        if txn_id in ended:
            return f"txn id {txn_id} ends two transactions: at {ended[txn_id]} and at {entry.lsn}"
        ended[txn_id] = entry.lsn
    return None


@dataclass(frozen=True)
class Recovered:
    last_vlsn: int | None
    problem: str | None


def recover_and_check(workload: ReplicatedWorkload, image: SimDisk) -> Recovered:
    try:
        env = ReplicatedEnvironment.open(image, workload.config, workload.index_config)
    except MinidbError as e:
        return Recovered(None, f"recovery failed: {type(e).__name__}: {e}")
    try:
        problem = check_index(env) or check_txn_ids(env)
        last = env.range.last
        if problem is None:
            db = env.database(DATABASES[0])  # created again (its MapLN takes a VLSN) if the crash lost it
            before = env.range.last
            lsn = db.put(b"after-recovery", b"x")
            got = env.log.read(lsn).vlsn
            if got != before + 1:
                problem = f"the range ends at VLSN {before}, but the next entry got VLSN {got}"
    except MinidbError as e:
        return Recovered(None, f"checking failed: {type(e).__name__}: {e}")
    return Recovered(last, problem)


def check_point(workload: ReplicatedWorkload, image: SimDisk, event_index: int,
                cache: dict[str, Recovered] | None = None) -> str | None:
    key = image.content_digest() if cache is not None else None
    recovered = cache.get(key) if cache is not None and key is not None else None
    if recovered is None:
        recovered = recover_and_check(workload, image)
        if cache is not None and key is not None:
            cache[key] = recovered
    if recovered.problem is not None:
        return recovered.problem
    assert recovered.last_vlsn is not None
    for vlsn in workload.promised(event_index):
        if vlsn > recovered.last_vlsn:
            return f"VLSN {vlsn} was fsynced before the crash, but the recovered range ends at {recovered.last_vlsn}"
    return None


def crash_sweep(seed: int, ops: int, torn_variants: int = 1, random_variants: int = 1) -> SweepResult:
    """Every crash point of workload ``seed``; byte-identical crash images are recovered once."""
    workload = run_workload(seed, ops)
    result = SweepResult()
    cache: dict[str, Recovered] = {}
    for point in crash_points(workload.disk, torn_variants=torn_variants, random_variants=random_variants, seed=seed):
        result.points += 1
        problem = check_point(workload, point.disk, point.event.index, cache)
        if problem is not None:
            result.violations.append(f"seed {seed}, {point}: {problem}")
    return result


__all__ = ["ReplicatedWorkload", "run_workload", "check_index", "check_point", "crash_sweep", "stream_of"]
