"""The replication group's crash test: three nodes, failovers, partitions and node crashes, then convergence.

A seeded workload runs a group of three nodes (``n1``, ``n2``, ``n3``), each
a replicated environment on its own :class:`~minidb.io.SimDisk` (small log
files and buffers, tiny nodes, a small-stride VLSN index, each node's own
clock), on one in-memory network, driven by
:class:`~minidb.replication.group.failover.FailoverGroup` (elections with
Paxos, feeders, syncup and rollback, network restores). Its operations,
chosen by the seeded generator:

- transactions of one to three puts and deletes committed on the master
  with an ack policy (SIMPLE_MAJORITY mostly, some ALL and NONE) and a
  replica sync policy (mostly SYNC); the commit waits for its acks through
  the group's pump on a manual clock (500 ms);
- a partition that cuts one node (often the master) off, and a heal;
- a failover: the master is cut off and the others elect a new one;
- **a node crash at one of its disk operations**: the node and the rank
  ``k`` of the write, truncate or fsync are drawn by the generator, the
  node's disk is scheduled to crash right after its ``k``-th next operation
  (``SimDisk.schedule_crash``), keeping none, all or a random subset of the
  unsynced writes; the crash happens wherever that operation is (a commit,
  a replay, an acceptor's write, a checkpoint, a syncup's rollback, a
  recovery), and the node is restarted later (recovery, then it learns the
  master, syncs up and rolls back, or is restored from the master's files);
- a restart of a crashed node, a checkpoint and a Matchpoint on the master.

Each node's ``txn_rollback_limit`` is drawn per seed by a generator of its
own (so each workload draws the operations it always drew): mostly the default
(10), whose rollbacks across a checkpoint, such as the one recovery ends
with, finish by hard recovery; sometimes 0 or 1, which refuse such a
rollback and send the node to a network restore.

What is swept per seed, in the **sampled** mode (``crash_sweep``, the quick
default): every crash the workload schedules (one crash point of one node's
disk history each; three to six per seed, each a different node, rank and
crash mode), plus, at the end, a crash scheduled on a rejoining node at one
of the first operations of its syncup or rollback. Over the suite's seeds
this reaches every kind of write and fsync of every role; ``crash points``
in the summary counts the crashes that happened (about 2.5 a seed).

In the **exhaustive** mode (``exhaustive_sweep``, ``minidb crashtest group
--exhaustive``) the workload draws the same operations but schedules none of
its crashes. A run of three nodes on the in-memory network, the manual
clock and simulated disks is a pure function of its seed (FoundationDB's
deterministic simulation), so each seed is first run once without a crash,
recording each node's disk events (writes, truncates and fsyncs, from the
group's forming to the end of the settling, a network restore's included:
it stages and installs the master's files on the node's own disk,
:class:`_History`); then, for every node ``n``, every
one of its events ``k`` and every crash mode of the other engines' sweeps
(nothing unsynced kept, everything kept, and after a write that write torn:
:func:`crash_modes`), that seed is run again from the start with ``n``'s disk
scheduled to crash right after its ``k``-th event (:class:`CrashAt`). The run
is the same as the first up to that event (the check compares the event, so
a run that does not repeat itself is a violation); from there the rest of the
workload runs with ``n`` down, ``n`` is restarted (by the workload or by the
end's settling), rejoins, syncs up and rolls back, and the checks below are
made. Seed 1 with 30 operations: 128 events of the three nodes, 308 crash
points, each a whole run of the group (about 0.1 s: the run up to the crash
is not shared between points but run again, which keeps every point a plain
run of the workload). Not enumerated: the events of the three environments'
creation, before the group forms (the replication crash test crashes an
environment's creation at every point), and those of the last election
after the settling (no crash may be pending for the checks).

Then everything is healed, every crashed node restarted, and the group
settles (elections, syncup, rollback, catch-up), and the checks are:

(a) no commit acknowledged by a majority is lost: for each key, the value
    of the last commit that returned success with SIMPLE_MAJORITY or ALL
    (master and replica sync SYNC) is on every node, unless a later commit
    of that key (acknowledged or not) replaced it;
(b) every node holds the same records;
(c) the VLSN streams agree: the same range, and at each VLSN the same
    LSN-neutral item checksum; each node's index agrees with its log
    (:func:`~minidb.crashtest.replication.check_index`);
(d) every RollbackStart in a log has its RollbackEnd (a crash in the
    middle of a rollback is finished by recovery); the group's driver met
    no unexpected error; the group converged at all.

The test found that comparing logs by how far they reach (``last_txn_end``)
alone loses acknowledged commits (seeds 164, 377, 609 and 793 of 1..1000
with 30 operations): an old master that crashed with an unacknowledged tail
longer than what its successor had acknowledged since won the election when
it restarted, and the others rolled the acknowledged commits back. Elections
now rank a log by its last ``TermStart`` first (:mod:`minidb.replication.group.elections`).
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field

from minidb.crashtest.replication import check_index, workload_configs
from minidb.crashtest.sweep import SweepResult
from minidb.errors import MinidbError, SimulatedCrash
from minidb.io import CrashMode, Event, SimDisk
from minidb.io.simdisk import CRASH_POINT_KINDS
from minidb.logstore import LockConflictError, ManualClock
from minidb.logstore.txn.txn import TxnState
from minidb.replication import (
    Durability,
    FailoverGroup,
    InsufficientAcksError,
    InsufficientReplicasError,
    RepGroup,
    ReplicaAckPolicy,
    ReplicatedEnvironment,
    RepNode,
    SyncPolicy,
)
from minidb.replication.config import DEFAULT_TXN_ROLLBACK_LIMIT, ReplicationConfig
from minidb.replication.syncup.syncup import entry_checksum
from minidb.replication.vlsn.scanner import stream_vlsn

NAMES = ("n1", "n2", "n3")
GROUP = RepGroup("crashtest", [RepNode(name, name) for name in NAMES])
# Created by the first transaction, on whichever node is master then: a failover can roll the creation back.
DATABASES = ("a",)
ACK_TIMEOUT_MS = 500


@dataclass
class Write:
    """One committed write of the workload: its order, key, value (None: a deletion), and whether a
    majority acknowledged it durably (the guarantee of check a)."""

    order: int
    db: str
    key: bytes
    value: bytes | None
    acknowledged: bool


@dataclass
class GroupWorkload:
    seed: int
    writes: list[Write] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)  # "n2 after op 7 (mode)", in order
    failovers: int = 0
    partitions: int = 0
    restores: int = 0
    rollbacks: int = 0
    hard_recoveries: int = 0  # rollbacks across a checkpoint, finished by hard recovery
    redone_at_open: int = 0  # rollbacks a crash cut short, finished by recovery
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CrashAt:
    """A crash point of the exhaustive mode: node ``node`` crashes right after its ``k``-th disk event
    (1-based; writes, truncates and fsyncs counted from the group's forming), keeping ``mode``."""

    node: str
    k: int
    mode: CrashMode
    event: Event  # the k-th event, as the run without a crash made it

    def __str__(self) -> str:
        return f"{self.node} crashes after its disk event {self.k} ({self.event}) keeping {self.mode}"


class _History:
    """One node's disk events (writes, truncates, fsyncs) from the group's forming on, across the disks it is
    given (a network restore stages and installs the master's files on the node's own disk: those events are
    the node's, and crash points like any other)."""

    def __init__(self, disk: SimDisk):
        self.disk, self.start = disk, len(disk.events)
        self.done: list[Event] = []  # the events on the node's earlier disks
        self.stopped: list[Event] | None = None

    @property
    def count_before(self) -> int:
        return len(self.done)

    def _current(self) -> list[Event]:
        return [e for e in self.disk.events[self.start:] if e.kind in CRASH_POINT_KINDS]

    def move_to(self, disk: SimDisk) -> None:
        self.done += self._current()
        self.disk, self.start = disk, len(disk.events)

    def stop(self) -> None:
        self.stopped = self.done + self._current()

    def events(self) -> list[Event]:
        return self.stopped if self.stopped is not None else self.done + self._current()


class _Runner:
    """One run of the workload. Sampled (``exhaustive=False``): the crashes its generator draws.
    Exhaustive: no drawn crash (the generator still draws them, so the rest of the run is the same),
    only ``crash_at`` if given; every node's disk events are recorded from the group's forming on."""

    def __init__(self, seed: int, ops: int, exhaustive: bool = False, crash_at: CrashAt | None = None):
        self.rng = random.Random(seed)
        self.ops = ops
        self.exhaustive = exhaustive
        self.crash_at = crash_at
        config, self.index_config = workload_configs(self.rng)
        self.config = dataclasses.replace(config, durability=SyncPolicy.SYNC)
        self.keys = [f"k{i:02d}".encode() for i in range(self.rng.choice([6, 12]))]
        self.clock = ManualClock()
        self.wl = GroupWorkload(seed)
        self.history: dict[str, _History] = {}
        limits = random.Random(f"group-rollback-limit-{seed}")
        self.rep_configs = {name: ReplicationConfig(limits.choice([0, 1] + [DEFAULT_TXN_ROLLBACK_LIMIT] * 4))
                            for name in NAMES}
        envs = {name: self.open(name, SimDisk(f"crashtest-group-{seed}-{name}")) for name in NAMES}
        self.group = FailoverGroup(envs, self.clock, reopen=self.open)
        for name in NAMES:
            self.history[name] = _History(self.group.disks[name])
            self._arm(name)

    def _arm(self, name: str) -> None:
        """Schedule ``crash_at`` on node ``name``'s current disk, if it is this node's and still ahead."""
        at = self.crash_at
        if at is not None and at.node == name and at.k > self.history[name].count_before:
            self.history[name].disk.schedule_crash(after_ops=at.k - self.history[name].count_before, mode=at.mode)

    def open(self, name: str, disk: SimDisk) -> ReplicatedEnvironment:
        history = self.history.get(name)
        if history is not None and history.disk is not disk:  # a network restore gave the node a new disk
            history.move_to(disk)
            self._arm(name)
        offset = NAMES.index(name) / 1000  # each node's own clock: two masters' Commits never look alike
        config = dataclasses.replace(self.config, clock=lambda: self.clock.now_ms() / 1000 + offset)
        env = ReplicatedEnvironment.open(disk, config, self.index_config, group=GROUP, node_name=name,
                                         rep_config=self.rep_configs[name])
        if env.recovered_rollback is not None:
            self.wl.redone_at_open += 1
        return env

    # -- operations ------------------------------------------------------------------------------------
    def run(self) -> GroupWorkload:
        rng, group = self.rng, self.group
        self.master()
        for i in range(self.ops):
            roll = rng.random()
            if roll < 0.5:
                self.transaction(i)
            elif roll < 0.56:
                self.partition()
            elif roll < 0.6:
                group.heal()
            elif roll < 0.66:
                self.failover()
            elif roll < 0.84:
                self.schedule_crash(i)
            elif roll < 0.94:
                self.restart_one()
            else:
                self.on_master(lambda env: env.checkpoint() if rng.random() < 0.5 else env.log_matchpoint())
        self.converge()
        return self.wl

    def master(self) -> ReplicatedEnvironment | None:
        if self.group.master is None or not self.group.converged(self.group.master):
            self.group.elect(max_ms=3_000)
        return self.group.master_env

    def pump(self) -> int:
        """The group's step, as a commit waiting for acks calls it: each step is a millisecond, so a wait
        always reaches its deadline, even if something moves at every step."""
        self.clock.advance(1)
        return self.group.pump()

    def on_master(self, step) -> None:
        env = self.master()
        if env is None:
            return
        try:
            step(env)
        except SimulatedCrash:
            self.group.crash(env.node_name)

    def transaction(self, order: int) -> None:
        rng = self.rng
        ack = rng.choice([ReplicaAckPolicy.SIMPLE_MAJORITY] * 6 + [ReplicaAckPolicy.ALL, ReplicaAckPolicy.NONE])
        replica_sync = rng.choice([SyncPolicy.SYNC] * 3 + [SyncPolicy.NO_SYNC])
        durability = Durability(SyncPolicy.SYNC, replica_sync, ack)
        writes = [(rng.choice(DATABASES), rng.choice(self.keys),
                   None if rng.random() < 0.2 else f"{order}-{rng.randrange(1000)}".encode())
                  for _ in range(rng.randint(1, 3))]

        def commit(env: ReplicatedEnvironment) -> None:
            try:
                txn = env.begin(durability)
            except InsufficientReplicasError:
                return
            done = []
            try:
                for db, key, value in writes:
                    handle = env.database(db)
                    if value is None:
                        if handle.delete(key, txn=txn) is not None:
                            done.append((db, key, None))
                    else:
                        handle.put(key, value, txn=txn)
                        done.append((db, key, value))
                env.commit(txn, clock=self.clock, timeout_ms=ACK_TIMEOUT_MS, pump=self.pump)
                acknowledged = ack is not ReplicaAckPolicy.NONE and replica_sync is SyncPolicy.SYNC
            except InsufficientAcksError:
                acknowledged = False  # committed on the master, maybe rolled back later
            except SimulatedCrash:  # the master crashed: its Commit may have been durable, or not
                self.wl.writes += [Write(order, db, key, value, False) for db, key, value in done]
                raise
            except (InsufficientReplicasError, LockConflictError):
                if not env.closed and txn.state is TxnState.OPEN:
                    txn.abort()
                return
            self.wl.writes += [Write(order, db, key, value, acknowledged) for db, key, value in done]

        self.on_master(commit)

    def partition(self) -> None:
        alone = self.group.master if self.rng.random() < 0.5 else self.rng.choice(NAMES)
        if alone is None:
            return
        self.group.partition({alone}, set(NAMES) - {alone})
        self.wl.partitions += 1

    def failover(self) -> None:
        old = self.group.master
        if old is None:
            return
        self.group.partition({old}, set(NAMES) - {old})
        if self.group.elect(max_ms=5_000) not in (None, old):
            self.wl.failovers += 1
        self.group.heal()

    def schedule_crash(self, order: int) -> None:
        name = self.rng.choice(NAMES)
        if self.group.envs[name] is None:
            return
        self._schedule(name, self.rng.randint(1, 25), f"after op {order}")

    def _schedule(self, name: str, k: int, when: str) -> None:
        mode = self.rng.choice([CrashMode.nothing(), CrashMode.everything(), CrashMode.random(self.rng.randrange(99))])
        if self.exhaustive:
            return
        self.group.disks[name].schedule_crash(after_ops=k, mode=mode)
        self.wl.crashes.append(f"{name} at its {k}-th disk operation {when} ({mode})")

    def restart_one(self) -> None:
        down = [name for name in NAMES if self.group.envs[name] is None]
        if down:
            self.restart(self.rng.choice(down))

    def restart(self, name: str) -> None:
        try:
            self.group.restart(name)
        except SimulatedCrash:  # a crash scheduled inside recovery: the node stays down
            self.group.crash(name)

    # -- the end: heal, restart, settle --------------------------------------------------------------------
    def converge(self) -> None:
        group = self.group
        group.heal()
        rejoin_crash = self.rng.random() < 0.5
        for _ in range(8):
            down = [name for name in NAMES if group.envs[name] is None]
            for name in down:
                if rejoin_crash:  # a crash during the syncup or rollback of a rejoining node
                    rejoin_crash = False
                    self.restart(name)
                    if group.envs[name] is not None:
                        self._schedule(name, self.rng.randint(1, 12), "while it rejoins")
                    continue
                self.restart(name)
            master = group.elect(max_ms=10_000)
            if master is not None and all(group.envs[n] is not None for n in NAMES) and group.converged(master):
                break
        for name in NAMES:  # no crash left pending for the checks: the exhaustive mode's points end here
            group.disks[name].cancel_crash()
            self.history[name].stop()
        master = group.elect(max_ms=10_000)
        if master is None or any(group.envs[n] is None for n in NAMES) or not group.converged(master):
            self.wl.problems.append(f"the group did not converge: master {master}, up {group.up()}")
        self.wl.restores = len(group.restores)
        self.wl.rollbacks = len(group.rollbacks)
        self.wl.hard_recoveries = sum(result.hard_recovery is not None for _, result in group.rollbacks)


def records_of(env: ReplicatedEnvironment) -> dict[str, dict[bytes, bytes]]:
    return {name: dict(env.database(name, create=False).items())
            for name in DATABASES if env.env.db_tree.get(name) is not None}


def stream_checksums(env: ReplicatedEnvironment) -> list[tuple[int, int]]:
    """(VLSN, LSN-neutral item checksum) of every visible replicated entry of the node's log."""
    return [(vlsn, entry_checksum(e)) for e in env.log.scan() if (vlsn := stream_vlsn(e)) is not None]


def check_group(wl: GroupWorkload, group: FailoverGroup) -> list[str]:
    """The checks (a)-(d) of the module documentation; what is wrong, if anything."""
    problems = list(wl.problems) + [f"driver error: {e}" for e in group.errors]
    envs = {name: group.envs[name] for name in NAMES if group.envs[name] is not None}
    if len(envs) < len(NAMES):
        return problems
    try:
        recs = {name: records_of(env) for name, env in envs.items()}
        streams = {name: stream_checksums(env) for name, env in envs.items()}
        first = recs["n1"]
        for name in NAMES[1:]:  # (b)
            if recs[name] != first:
                problems.append(f"(b) {name}'s records differ from n1's: {_diff(recs[name], first)}")
        for name in NAMES[1:]:  # (c)
            mine, theirs = streams[name], streams["n1"]
            if mine != theirs:
                at = next((i for i, (x, y) in enumerate(zip(mine, theirs, strict=False)) if x != y),
                          min(len(mine), len(theirs)))
                problems.append(f"(c) {name}'s VLSN stream differs from n1's from entry {at}: "
                                f"{mine[at:at + 2]} != {theirs[at:at + 2]} ({len(mine)} and {len(theirs)} entries)")
        for name, env in envs.items():
            problem = check_index(env)
            if problem is not None:
                problems.append(f"(c) {name}: {problem}")
            problems += [f"(d) {name}: {p}" for p in _rollbacks_finished(env)]
        problems += [f"(a) {p}" for p in _acknowledged_kept(wl.writes, first)]
    except MinidbError as e:
        problems.append(f"checking failed: {type(e).__name__}: {e}")
    return problems


def _diff(a: dict, b: dict) -> str:
    for db in sorted(set(a) ^ set(b)):
        return f"database {db!r} exists {'here' if db in a else 'there'} only ({len(a.get(db, b.get(db, {})))} records)"
    for db in sorted(set(a) | set(b)):
        x, y = a.get(db, {}), b.get(db, {})
        for key in sorted(set(x) | set(y)):
            if x.get(key) != y.get(key):
                return f"database {db!r} key {key!r}: {x.get(key)!r} != {y.get(key)!r}"
    return "no difference found"


def _rollbacks_finished(env: ReplicatedEnvironment) -> list[str]:
    starts, ends = [], set()
    for entry in env.log.scan():
        if entry.type_name == "RollbackStart":
            starts.append(entry.lsn)
        elif entry.type_name == "RollbackEnd":
            ends.add(entry.values["rollback_start_lsn"])
    return [f"RollbackStart at {lsn} has no RollbackEnd" for lsn in starts if lsn not in ends]


def _acknowledged_kept(writes: list[Write], final: dict[str, dict[bytes, bytes]]) -> list[str]:
    problems = []
    by_key: dict[tuple[str, bytes], list[Write]] = {}
    for write in writes:
        by_key.setdefault((write.db, write.key), []).append(write)
    for (db, key), history in by_key.items():
        acked = [w for w in history if w.acknowledged]
        if not acked:
            continue
        last = acked[-1]
        allowed = {last.value} | {w.value for w in history if w.order > last.order}
        got = final.get(db, {}).get(key)
        if got not in allowed:
            problems.append(f"database {db!r} key {key!r} holds {got!r}, but the commit acknowledged at op "
                            f"{last.order} wrote {last.value!r} (and no later commit wrote {got!r})")
    return problems


def run_group_workload(seed: int, ops: int) -> tuple[GroupWorkload, FailoverGroup]:
    """The workload of the module documentation, run to convergence: (what happened, the group)."""
    runner = _Runner(seed, ops)
    return runner.run(), runner.group


def crash_sweep(seed: int, ops: int) -> SweepResult:
    """One seed: the workload with its node crashes, then the checks (a)-(d)."""
    try:
        wl, group = run_group_workload(seed, ops)
    except MinidbError as e:
        return SweepResult(0, [f"seed {seed}: the workload failed: {type(e).__name__}: {e}"])
    result = SweepResult(len(group.crashes), [f"seed {seed}: {p}" for p in check_group(wl, group)])
    group.close()
    return result


def crash_modes(event: Event, rng: random.Random) -> list[CrashMode]:
    """The crash modes of the other engines' sweeps at one event: nothing unsynced kept, everything kept,
    and after a write of more than a byte, that write torn (the rest kept)."""
    modes = [CrashMode.nothing(), CrashMode.everything()]
    if event.kind == "write" and len(event.data) > 1:
        modes.append(CrashMode.torn(seed=rng.randrange(1 << 30)))
    return modes


def node_events(seed: int, ops: int) -> tuple[dict[str, list[Event]], list[str]]:
    """The run of ``seed`` without a crash: each node's disk events (the exhaustive mode's crash points),
    and what its checks found wrong."""
    runner = _Runner(seed, ops, exhaustive=True)
    wl = runner.run()
    events = {name: runner.history[name].events() for name in NAMES}
    problems = check_group(wl, runner.group)
    runner.group.close()
    return events, problems


def exhaustive_crash_points(seed: int, events: dict[str, list[Event]]) -> list[CrashAt]:
    """Every (node, k) of ``events``, in each of its :func:`crash_modes`."""
    rng = random.Random(seed * 7919 + 1)
    return [CrashAt(name, k, mode, event) for name in NAMES for k, event in enumerate(events[name], 1)
            for mode in crash_modes(event, rng)]


def run_crash_point(seed: int, ops: int, at: CrashAt) -> list[str]:
    """The run of ``seed`` with the one crash ``at``, the crashed node restarted and the group settled;
    what the checks (a)-(d) found wrong, and whether the crash happened where the run without it put
    the event."""
    try:
        runner = _Runner(seed, ops, exhaustive=True, crash_at=at)
        wl = runner.run()
    except MinidbError as e:
        return [f"the workload failed: {type(e).__name__}: {e}"]
    problems = check_group(wl, runner.group)
    events = runner.history[at.node].events()
    if len(events) < at.k or not _same_event(events[at.k - 1], at.event):
        problems.append(f"the run did not repeat itself: {at.node}'s disk event {at.k} is "
                        f"{events[at.k - 1] if len(events) >= at.k else 'missing'}, not {at.event}")
    elif at.node not in runner.group.crashes:
        problems.append(f"{at.node} did not stop at its crash")
    runner.group.close()
    return problems


def _same_event(a: Event, b: Event) -> bool:
    return (a.kind, a.name, a.offset, a.data, a.size) == (b.kind, b.name, b.offset, b.data, b.size)


def exhaustive_sweep(seed: int, ops: int) -> SweepResult:
    """One seed, every crash point: each node crashed at each of its disk events, in each crash mode."""
    try:
        events, problems = node_events(seed, ops)
    except MinidbError as e:
        return SweepResult(0, [f"seed {seed}: the workload failed: {type(e).__name__}: {e}"])
    result = SweepResult(0, [f"seed {seed}, without a crash: {p}" for p in problems])
    for at in exhaustive_crash_points(seed, events):
        result.points += 1
        result.violations += [f"seed {seed}, {at}: {p}" for p in run_crash_point(seed, ops, at)]
    return result


__all__ = ["CrashAt", "GroupWorkload", "Write", "run_group_workload", "check_group", "crash_sweep",
           "crash_modes", "node_events", "exhaustive_crash_points", "run_crash_point", "exhaustive_sweep"]
