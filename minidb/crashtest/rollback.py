"""The rollback's crash test: a syncup rollback crashed at every write and fsync, recovered and checked.

A seeded workload on two nodes of a group (simulated disks, small log files
and buffers, tiny nodes, a small-stride VLSN index): n1, the master,
replicates records written with and without transactions, commits, aborts
and Matchpoints to n2 over the in-memory network (sometimes a checkpoint in
between); then n1 logs a tail that never reaches n2 (records, committed and
aborted transactions, Matchpoints; for about half the seeds, or when asked,
a checkpoint in its middle) and fsyncs it. n2 takes over and logs its own
tail. n1 rejoins as a replica: syncup finds the matchpoint and rolls n1's
tail back (:mod:`minidb.replication.syncup.rollback`); a tail with a
checkpoint is rolled back by hard recovery. n1's ``txn_rollback_limit`` is
the default or the tail's length, whichever is larger, so the limit never
refuses the rollback (what it refuses, and that it changes nothing, is
tested apart).

Then, for every write, truncate and fsync of n1's disk from the syncup on
and every way a crash can treat the unsynced writes, n1 is opened on the
crashed image and checked:

1. recovery succeeds (finishing the rollback if RollbackStart is durable);
2. the rollback is finished or was never started: with a RollbackStart in
   the log there is its RollbackEnd, and every replicated entry after the
   matchpoint is INVISIBLE; without one, nothing is invisible;
3. the log and the VLSN index agree (:func:`~minidb.crashtest.replication.check_index`), and
   the range ends at the matchpoint (finished) or at n1's last VLSN (not
   started);
4. the records equal those right after the rollback run without a crash
   (the state at the matchpoint), or those before it (not started).

The model of the state at the matchpoint is n2's records once it has taken
n1's stream, before it writes anything itself; the rollback run without a
crash must leave n1 with exactly those (checked once per workload), and,
run with ``converge``, n1 then holds n2's records after taking its stream.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field

from minidb.crashtest.replication import check_index, workload_configs
from minidb.crashtest.sweep import SweepResult, sweep_crash_points
from minidb.errors import MinidbError
from minidb.io import SimDisk
from minidb.log import LSN
from minidb.logstore import LockConflictError
from minidb.replication import (
    Feeder,
    HandshakeAcceptor,
    HandshakeInitiator,
    InMemoryNetwork,
    RepGroup,
    Replica,
    ReplicaFeederSyncup,
    ReplicatedEnvironment,
    ReplicationConfig,
    RepNode,
    VLSNIndexConfig,
)
from minidb.replication.config import DEFAULT_TXN_ROLLBACK_LIMIT

GROUP = RepGroup("crash", [RepNode("n1", "n1", 2), RepNode("n2", "n2", 1)])
DATABASES = ("a", "b")
Records = dict[str, dict[bytes, bytes]]


def _clock(base: float):
    return lambda: base


@dataclass
class RollbackWorkload:
    seed: int
    disk: SimDisk  # n1's
    config: object
    index_config: VLSNIndexConfig
    start: int = 0  # the first event of the syncup on n1's disk
    before: Records = field(default_factory=dict)  # n1's records before the rollback
    after: Records = field(default_factory=dict)  # ... right after it (the state at the matchpoint)
    at_matchpoint: Records = field(default_factory=dict)  # the model: n2's records at the matchpoint
    across_checkpoint: bool = False  # n1's tail holds a checkpoint: the rollback needs hard recovery
    hard_recovery: str | None = None  # where the hard recovery started (the RollbackResult's)
    last_before: int = 0  # n1's last VLSN before the rollback
    matchpoint: int = 0
    rolled_back: int = 0  # entries made invisible
    rollback_end: LSN | None = None  # the RollbackEnd's LSN (None: nothing was rolled back)
    converged: bool | None = None  # after catching up with n2, n1 holds n2's records (run with converge)
    caught_up: Records = field(default_factory=dict)  # n1's records then, its log synced (run with converge)


def records_of(env: ReplicatedEnvironment) -> Records:
    return {name: dict(env.database(name, create=False).items())
            for name in DATABASES if env.env.db_tree.get(name) is not None}


class _Runner:
    def __init__(self, seed: int, ops: int, across_checkpoint: bool | None = None):
        self.rng = random.Random(seed)
        config, index_config = workload_configs(self.rng)
        config = dataclasses.replace(config, checkpoint_bytes_interval=None)  # the tail's checkpoint is drawn
        self.ops = ops
        self.keys = [f"k{i:02d}".encode() for i in range(self.rng.choice([6, 12]))]
        self.workload = RollbackWorkload(seed, SimDisk(f"crashtest-rollback-{seed}"), config, index_config)
        side = random.Random(f"rollback-checkpoint-{seed}")  # its own generator: the workload's draws stay the same
        self.workload.across_checkpoint = side.random() < 0.5 if across_checkpoint is None else across_checkpoint
        self.checkpoint_after = side.random()  # where in n1's tail, as a fraction of it
        rep_config = ReplicationConfig(txn_rollback_limit=max(DEFAULT_TXN_ROLLBACK_LIMIT, ops))
        self.n1 = ReplicatedEnvironment.open(self.workload.disk, config, index_config, group=GROUP, node_name="n1",
                                             rep_config=rep_config)
        self.n2 = ReplicatedEnvironment.open(SimDisk(f"crashtest-rollback-{seed}-n2"),
                                             dataclasses.replace(config, clock=_clock(1.9e9)),
                                             index_config, group=GROUP, node_name="n2")

    def write(self, env, txn=None) -> None:
        db = env.database(self.rng.choice(DATABASES))
        key = self.rng.choice(self.keys)
        if self.rng.random() < 0.2:
            db.delete(key, txn=txn)
        else:
            db.put(key, f"{env.node_name}-{self.rng.randrange(1000)}".encode(), txn=txn)

    def op(self, env) -> None:
        roll = self.rng.random()
        try:
            if roll < 0.4:
                self.write(env)
            elif roll < 0.85:
                txn = env.begin()
                try:
                    for _ in range(self.rng.randint(1, 3)):
                        self.write(env, txn)
                finally:
                    txn.commit() if self.rng.random() < 0.75 else txn.abort()
            else:
                env.log_matchpoint()
        except LockConflictError:
            pass

    def link(self, master, replica, syncup: bool):
        net = InMemoryNetwork()
        listener = net.listen(master.node_name)
        initiator = HandshakeInitiator(net.connect(master.node_name, replica.node_name), GROUP.name,
                                       GROUP.node(replica.node_name))
        acceptor = HandshakeAcceptor(listener.accept(), GROUP, master.node_name)
        net.deliver()
        acceptor.poll()
        net.deliver()
        initiator.poll()
        return net, Feeder(master, acceptor.channel, replica.node_name), initiator.channel

    def run(self) -> RollbackWorkload:
        rng, n1, n2, wl = self.rng, self.n1, self.n2, self.workload
        n1.become_master()
        for name in DATABASES:
            n1.database(name)
        for i in range(self.ops):
            self.op(n1)
            if i == self.ops // 2 and rng.random() < 0.5:
                n1.checkpoint()
        n1.log_matchpoint()  # at least one common sync point
        net, feeder, channel = self.link(n1, n2, syncup=False)
        replica = Replica(n2, channel, "n1")
        while net.deliver() + feeder.pump() + replica.pump() or net.in_flight:
            pass
        wl.at_matchpoint = records_of(n2)
        tail = rng.randint(1, max(1, self.ops // 2))
        for i in range(tail):
            self.op(n1)
            if wl.across_checkpoint and i == int(self.checkpoint_after * tail):
                n1.checkpoint()
        n1.sync()
        wl.before, wl.last_before = records_of(n1), n1.range.last
        n1.become_unknown()
        n2.become_master()
        for _ in range(rng.randint(0, 3)):
            self.op(n2)
        wl.start = len(wl.disk.events)
        net, feeder, channel = self.link(n2, n1, syncup=True)
        n1.become_replica("n2")
        syncup = ReplicaFeederSyncup(n1, channel, "n2")
        while not syncup.pump():
            net.deliver()
            feeder.pump()
            net.deliver()
        wl.after = records_of(n1)
        wl.matchpoint = syncup.result.matchpoint_vlsn
        wl.rolled_back = len(syncup.rollback.rolled_back) if syncup.rollback else 0
        wl.rollback_end = syncup.rollback.end_lsn if syncup.rollback else None
        wl.hard_recovery = syncup.rollback.hard_recovery if syncup.rollback else None
        if self.converge:  # n1 takes n2's stream from the matchpoint on: both hold the same records
            replica = Replica(n1, channel, "n2")
            while net.deliver() + feeder.pump() + replica.pump() or net.in_flight:
                pass
            wl.converged = records_of(n1) == records_of(n2) and n1.range.last == n2.range.last
            n1.sync()
            wl.caught_up = records_of(n1)
        return wl


def run_rollback_workload(seed: int, ops: int, converge: bool = False,
                          across_checkpoint: bool | None = None) -> RollbackWorkload:
    """The workload of the module documentation; ``converge``: then let n1 catch up with n2 (``converged``);
    ``across_checkpoint``: a checkpoint in n1's tail, or none (default: drawn for each seed)."""
    runner = _Runner(seed, ops, across_checkpoint)
    runner.converge = converge
    return runner.run()


def check_rollback_point(workload: RollbackWorkload, image: SimDisk) -> str | None:
    """None if n1, opened on ``image``, finished the rollback or never began it (module documentation)."""
    try:
        env = ReplicatedEnvironment.open(image, workload.config, workload.index_config)
    except MinidbError as e:
        return f"recovery failed: {type(e).__name__}: {e}"
    try:
        entries = list(env.log.scan())
        names = [e.type_name for e in entries]
        started = "RollbackStart" in names
        if started and "RollbackEnd" not in names:
            return "RollbackStart without RollbackEnd after recovery"
        start_lsn = next((e.lsn for e in entries if e.type_name == "RollbackStart"), None)
        invisible = [e for e in entries if e.header.invisible]
        problem = check_index(env)
        if problem is not None:
            return problem
        if started:
            mp_lsn = env.log.read(start_lsn).values["matchpoint_lsn"]
            visible = [e for e in entries if mp_lsn < e.lsn < start_lsn and e.vlsn is not None
                       and not e.header.invisible]
            if visible:
                return f"rollback finished, but {visible[0].type_name} VLSN {visible[0].vlsn} is still visible"
            want_last, want = workload.matchpoint, workload.after
        else:
            if invisible:
                return f"no RollbackStart, but the entry at {invisible[0].lsn} is INVISIBLE"
            want_last, want = workload.last_before, workload.before
        if env.range.last != want_last:
            return f"the range ends at VLSN {env.range.last}, not {want_last}"
        got = records_of(env)
        if got != want:
            return (f"the records after recovery ({'rolled back' if started else 'not rolled back'}) differ: "
                    f"{sorted(got.items())[:2]} != {sorted(want.items())[:2]}")
    except MinidbError as e:
        return f"checking failed: {type(e).__name__}: {e}"
    return None


def crash_sweep(seed: int, ops: int, torn_variants: int = 1, random_variants: int = 1,
                across_checkpoint: bool | None = None) -> SweepResult:
    """Every crash point of workload ``seed`` from its syncup on (identical images are checked once)."""
    workload = run_rollback_workload(seed, ops, across_checkpoint=across_checkpoint)
    problems = []
    if workload.after != workload.at_matchpoint:
        problems.append(f"the rollback run without a crash left records that are not n2's at the matchpoint: "
                        f"{sorted(workload.after.items())[:2]} != {sorted(workload.at_matchpoint.items())[:2]}")
    return sweep_crash_points(workload.disk, workload.start, seed,
                              lambda image, event: check_rollback_point(workload, image), problems,
                              torn_variants, random_variants, restart_crashes=0.0, memo_key=lambda event: None)


__all__ = ["RollbackWorkload", "run_rollback_workload", "check_rollback_point", "crash_sweep"]
