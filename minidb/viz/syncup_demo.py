"""The failover demonstrations behind notebook 14: a master dies, a new one is elected, the old one syncs up.

A three-node group (``n1``, ``n2``, ``n3``) of real replicated environments,
driven by a script (:mod:`minidb.viz.script`; the operations are
:data:`OPS`): writes with an ack policy, a partition, a node killed, an
election, a node rejoining. Each operation runs until the network is quiet
(frames held by a partition stay in flight). Deterministic: the networks
move only when pumped, and time is a ``ManualClock`` (a commit's ack
timeout, the election's heartbeats and retries, every Commit's time).

- The group starts with an election among the three (equal, empty logs and
  equal priorities: the first name, ``n1``, wins term 1).
- ``kill``: the node stops. It sends and receives nothing more, and takes no
  part in elections; its environment stays exactly as it was, standing for
  a node that comes back with everything it logged (a restart from disk
  would also run recovery, whose checkpoint puts its last commits behind a
  checkpoint: :func:`hard_recovery`).
- ``elect``: time passes (1.1 s, more than the heartbeat timeout), the
  running nodes notice the master is gone and elect one
  (:class:`~minidb.replication.group.elections.ElectionNode`, JE's rule by Paxos);
  the winner feeds the others, who sync up with it first.
- ``rejoin``: a killed node's links heal, it syncs up with the master
  (:class:`~minidb.replication.syncup.syncup.ReplicaFeederSyncup`: the matchpoint,
  then the rollback of its tail) and catches up.

Invariant the tests check: no write acknowledged by a majority (its commit
returned under SIMPLE_MAJORITY or ALL) is ever lost, and once everyone has
rejoined and the network is quiet every node holds the same visible stream.

- :func:`failover_step`: the group after the first ``step`` operations
  (pure: it replays from scratch);
- :func:`master_dies`: the script's writes and partitions with the master
  killed (and a new one elected) after operation ``after``, the old master
  rejoining at the end: the notebook's slider;
- :func:`je_rollback_example`: JE's rollback example (VLSNIndex
  documentation) in real environments, before and after the syncup;
- :func:`search_steps`: the matchpoint search between two environments, one
  question to the feeder at a time;
- :func:`restart_refused`: the old master restarted from disk with
  ``txn_rollback_limit`` 0, refused by the limit, nothing changed;
- :func:`hard_recovery`: the old master restarted from disk under the
  default limit: its rollback crosses the checkpoint recovery ended with and
  finishes by hard recovery (the checkpoints, which of them lie inside the
  rollback period, where recovery started, the logs before and after).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from matplotlib.figure import Figure

from minidb.io import CrashMode, SimDisk
from minidb.log import LSN
from minidb.log.types import type_by_code
from minidb.logstore import EnvironmentConfig, ManualClock
from minidb.replication import ReplicatedEnvironment, ReplicationConfig, RollbackPeriod, VLSNIndexConfig
from minidb.replication.errors import InsufficientAcksError, InsufficientReplicasError, RollbackLimitError
from minidb.replication.group.driver import InMemoryGroup, handshake
from minidb.replication.group.elections import ElectionNode
from minidb.replication.group.membership import RepGroup, RepNode
from minidb.replication.stream.durability import Durability, ReplicaAckPolicy, SyncPolicy
from minidb.replication.stream.feeder import Feeder
from minidb.replication.stream.network import InMemoryNetwork
from minidb.replication.stream.replica import Replica
from minidb.replication.syncup.syncup import (
    FeederEntry,
    MatchpointSearchResults,
    entry_checksum,
    feeder_answer,
    replica_candidates,
    search_matchpoint,
)
from minidb.replication.vlsn.scanner import stream_vlsn
from minidb.viz.script import Op, checked, op_table, script_error
from minidb.viz.syncup import Compared, NodeLog, draw_logs, node_log

NODES = ("n1", "n2", "n3")
GROUP = RepGroup("bank", [RepNode(n, n) for n in NODES])
POLICIES = tuple(p.name for p in ReplicaAckPolicy)
TIMEOUT_MS = 1000
ELECTION_WAIT_MS = 1100  # more than the heartbeat timeout: the replicas notice their master is gone
ELECTION_LIMIT_MS = 10_000  # an election that decides nothing by then (a minority) gives up

OPS = op_table(
    Op("write", ("key", "value", "policy"), "the master puts key = value in a transaction and commits it with an "
                                            "ack policy (ALL, SIMPLE_MAJORITY or NONE), waiting up to 1 s for acks"),
    Op("partition", ("node",), "cut a node off from the other two: frames between them stay in flight"),
    Op("heal", (), "end the partition"),
    Op("kill", ("node",), "the node stops: it sends and receives nothing more; its log stays as it was"),
    Op("elect", (), "time passes, the running nodes elect a master (a majority must take part)"),
    Op("rejoin", ("node",), "a killed node comes back: its links heal, it syncs up with the master "
                            "(matchpoint, rollback) and catches up"),
)
SCRIPT: list[tuple] = [
    ("write", "k1", "a", "SIMPLE_MAJORITY"),  # VLSNs 2-4 (accounts' creation, k1) on every node, acknowledged
    ("partition", "n1"),  # the master is cut off
    ("write", "k2", "b", "NONE"),  # VLSNs 5-6 on n1 only: nobody acknowledged them
    ("kill", "n1"),
    ("elect",),  # n2 and n3 hold the same; equal priorities: n2 (the first name)
    ("write", "k3", "c", "SIMPLE_MAJORITY"),  # n2 logs its own VLSNs 5-7 (TermStart, k3), n3 acks
    ("rejoin", "n1"),  # matchpoint VLSN 4: n1 rolls back its 5-6 (k2), then takes n2's
]
#: The operations the failover slider keeps (it places the kill and the election itself).
FAILOVER_OPS = ("kill", "elect", "rejoin")


def open_node(name: str, clock: ManualClock, disk: SimDisk | None = None) -> ReplicatedEnvironment:
    config = EnvironmentConfig(checkpoint_bytes_interval=None, clock=lambda: clock.now_ms() / 1000, trace=False)
    return ReplicatedEnvironment.open(disk or SimDisk(name), config, VLSNIndexConfig(stride=4), group=GROUP,
                                      node_name=name)


def _records(env: ReplicatedEnvironment) -> dict[str, str]:
    if env.env.db_tree.get("accounts") is None:
        return {}
    return {k.decode(): v.decode() for k, v in env.database("accounts", create=False).items()}


@dataclass(frozen=True)
class Write:
    """One write of the script: where its Commit went, and whether a majority acknowledged it."""

    key: str
    value: str
    policy: str
    master: str
    vlsn: int  # its Commit's VLSN (0: nothing logged)
    checksum: int  # its Commit's LSN-neutral checksum
    acknowledged: bool  # the commit returned with the acks its policy needs, and they make a majority
    line: str


@dataclass(frozen=True)
class SearchStep:
    """One question of the matchpoint search: the replica's sync point and the feeder's entry at its VLSN."""

    number: int
    vlsn: int
    type_name: str
    checksum: int
    lsn: LSN
    theirs: FeederEntry | None  # None: the feeder holds no entry there
    match: bool

    def describe(self, replica: str, feeder: str) -> str:
        there = "nothing" if self.theirs is None else \
            f"{self.theirs.type_name} {self.theirs.checksum:#010x} at {self.theirs.lsn}"
        return (f"{self.number}. VLSN {self.vlsn}: {replica} {self.type_name} {self.checksum:#010x} at {self.lsn}; "
                f"{feeder} {there}: {'match' if self.match else 'no match'}")


@dataclass(frozen=True)
class Search:
    replica: str
    feeder: str
    steps: tuple[SearchStep, ...]
    result: MatchpointSearchResults
    before: tuple[NodeLog, NodeLog]  # the two logs as the search saw them (before the rollback)

    def compared(self, upto: int | None = None) -> tuple[Compared, ...]:
        steps = self.steps if upto is None else self.steps[:upto]
        return tuple(Compared(s.number, s.vlsn, s.match) for s in steps)

    def figure(self, upto: int | None = None, title: str = "") -> Figure:
        return draw_logs(self.before, title or f"the matchpoint search: {self.replica} asks {self.feeder}",
                         self.compared(upto))

    def lines(self, upto: int | None = None) -> list[str]:
        steps = self.steps if upto is None else self.steps[:upto]
        return [s.describe(self.replica, self.feeder) for s in steps]


def search_steps(replica: ReplicatedEnvironment, master: ReplicatedEnvironment) -> Search:
    """The engine's matchpoint search (:func:`~minidb.replication.syncup.syncup.search_matchpoint`) between the two,
    recording each question it asks the feeder (:func:`~minidb.replication.syncup.syncup.feeder_answer`); reads only."""
    candidates = list(replica_candidates(replica))
    answers: dict[int, FeederEntry | None] = {}

    def feeder_entry(vlsn: int) -> FeederEntry | None:
        kind, values = feeder_answer(master, vlsn)
        answers[vlsn] = None if kind == "EntryNotFound" else FeederEntry(
            type_by_code(values["type_code"]).name, values["checksum"], LSN.unpack(values["lsn"]))
        return answers[vlsn]

    result = search_matchpoint(candidates, feeder_entry)
    steps = []
    for c in candidates:
        if c.vlsn in answers:
            theirs = answers[c.vlsn]
            steps.append(SearchStep(len(steps) + 1, c.vlsn, c.type_name, c.checksum, c.lsn, theirs,
                                    theirs is not None and theirs.checksum == c.checksum))
    return Search(replica.node_name, master.node_name, tuple(steps), result,
                  (node_log(replica, "rejoining"), node_log(master, "master")))


def _link(net: InMemoryNetwork, listener, master: ReplicatedEnvironment, env: ReplicatedEnvironment,
          syncup: bool) -> tuple[Feeder, Replica]:
    """A handshaken connection from ``env`` to ``master`` (listening on ``listener``): its feeder and replica."""
    feeder_channel, replica_channel = handshake(net, listener, master, env)
    return Feeder(master, feeder_channel, env.node_name), Replica(env, replica_channel, master.node_name,
                                                                  syncup=syncup)


class _Run:
    """The group while a script runs (see the module documentation)."""

    def __init__(self) -> None:
        self.clock = ManualClock()
        self.envs = {name: open_node(name, self.clock) for name in NODES}
        self.running = set(NODES)
        self.cut: str | None = None
        self.election_net = InMemoryNetwork()
        self.electors = {name: ElectionNode.for_env(env, self.election_net, self.clock)
                         for name, env in self.envs.items()}
        self.group: InMemoryGroup | None = None
        self.term = 0
        self.writes: list[Write] = []
        self.searches: list[Search] = []
        self.rolled_back: dict[str, list[tuple[int, str]]] = {name: [] for name in NODES}
        self.lines: list[str] = []
        self.elect()

    @property
    def master(self) -> str | None:
        return self.group.master.node_name if self.group is not None else None

    # -- the network --------------------------------------------------------------------------------------
    def _partition(self, net: InMemoryNetwork) -> None:
        if self.cut is None:
            net.heal()
        else:
            net.partition([self.cut], [n for n in NODES if n != self.cut])

    def _join(self, name: str) -> None:
        """Connect ``name`` to the master as InMemoryGroup.join does, but syncing up first."""
        group = self.group
        assert group is not None
        master = group.master
        feeder, replica = _link(group.net, group.listener, master, self.envs[name], syncup=True)
        group.envs[name], group.feeders[name], group.replicas[name] = self.envs[name], feeder, replica
        group.settle()
        syncup = replica.syncup
        if syncup.rollback is not None:
            self.rolled_back[name] += [(v, t) for v, _, t in reversed(syncup.rollback.rolled_back)]
        what = syncup.rollback.describe() if syncup.rollback is not None else "nothing to roll back"
        found = syncup.result.describe() if syncup.result is not None else "its log was empty"
        self.lines.append(f"  {name} syncs up with {master.node_name}: {found}; {what}")

    # -- the operations -----------------------------------------------------------------------------------
    def apply(self, number: int, op: tuple) -> None:
        """Run operation ``number`` of the script, or raise ScriptError if it cannot run now."""
        name = op[0]
        if name == "write" and self.group is None:
            raise script_error(number, op, "there is no master to write to: elect one first")
        if name == "kill" and op[1] not in self.running:
            raise script_error(number, op, f"{op[1]} is not running")
        if name == "elect" and self.group is not None:
            raise script_error(number, op, f"{self.master} is master and running: kill it first")
        if name == "rejoin":
            if op[1] in self.running:
                raise script_error(number, op, f"{op[1]} is running: only a killed node rejoins")
            if self.group is None:
                raise script_error(number, op, "there is no master to rejoin: elect one first")
            if self.cut is not None and self.cut != op[1]:
                raise script_error(number, op, f"the partition cuts {self.cut} off: heal it first")
        if name in ("partition", "heal"):
            self.partition(op[1] if name == "partition" else None)
        else:
            getattr(self, name)(*op[1:])

    def write(self, key: str, value: str, policy: str) -> None:
        master = self.group.master
        txn = master.begin()
        master.database("accounts").put(key, value, txn=txn)
        durability = Durability(SyncPolicy.SYNC, SyncPolicy.NO_SYNC, ReplicaAckPolicy[policy])
        started = self.clock.now_ms()
        acked_by: tuple[str, ...] = ()
        try:
            token = master.start_commit(txn, durability, clock=self.clock, timeout_ms=TIMEOUT_MS)
            token.wait(self.group.pump)
            acked_by = tuple(token.acked_by)
            vlsn = token.info.vlsn
            returned = True
            line = f"acked by {', '.join(acked_by) or 'nobody (none needed)'}"
        except InsufficientReplicasError:
            txn.abort()
            self.writes.append(Write(key, value, policy, master.node_name, 0, 0, False,
                                     f"write {key}={value} ({policy}): InsufficientReplicasError: too few replicas "
                                     "connected; nothing logged, the transaction aborted"))
            self.lines.append(self.writes[-1].line)
            return
        except InsufficientAcksError as e:
            vlsn, returned = master.range.last_txn_end, False
            line = (f"committed on {master.node_name}, InsufficientAcksError: {e.required} acks needed, acked by "
                    f"{', '.join(e.acked_by) or 'none'}, after {self.clock.now_ms() - started} ms")
        acknowledged = returned and policy != "NONE" and 1 + len(acked_by) >= GROUP.majority
        checksum = entry_checksum(master.vlsn_index.find(vlsn))
        self.writes.append(Write(key, value, policy, master.node_name, vlsn, checksum, acknowledged,
                                 f"write {key}={value} ({policy}) on {master.node_name}, Commit VLSN {vlsn}: {line}"))
        self.lines.append(self.writes[-1].line)
        self.group.settle()

    def partition(self, node: str | None) -> None:
        self.cut = node
        for net in (self.election_net, *([self.group.net] if self.group else [])):
            self._partition(net)
        self.lines.append(f"partition: {node} cut off from the others" if node
                          else "heal: every node reaches every other")
        if self.group is not None:
            self.group.settle()

    def kill(self, node: str) -> None:
        self.running.discard(node)
        self.electors.pop(node).close()
        if node == self.master:
            for replica in list(self.group.feeders):
                self.group.leave(replica)
            self.group = None  # its network, and what was in flight on it, is gone
            self.lines.append(f"kill: {node}, the master, stops; what it sent that nobody received is lost")
        else:
            if self.group is not None and node in self.group.feeders:
                self.group.leave(node)
            self.lines.append(f"kill: {node} stops")

    def elect(self) -> None:
        start = self.clock.now_ms()
        self.clock.advance(ELECTION_WAIT_MS)
        electors = [self.electors[n] for n in sorted(self.running)]
        ranks = ", ".join(f"{e.name} {self.envs[e.name].last_term}/{self.envs[e.name].range.last_txn_end}"
                          for e in electors)  # before the winner logs its TermStart
        while self.clock.now_ms() - start < ELECTION_LIMIT_MS:
            for _ in range(100):
                if not sum(e.pump() for e in electors) and not self.election_net.deliver():
                    break
            learned = {(e.term, e.master) for e in electors}
            if len(learned) == 1 and (term := next(iter(learned)))[0] > self.term and term[1] in self.running:
                break
            self.clock.advance(100)
        else:
            self.lines.append(f"elect: nobody elected in {ELECTION_LIMIT_MS // 1000} s: the running nodes "
                              f"({', '.join(sorted(self.running))}) that reach each other are not a majority")
            return
        first, (self.term, winner) = self.term == 0, term
        self.lines.append(f"{'start' if first else 'elect'}: {winner} is master of term {self.term} "
                          f"(last term/last_txn_end {ranks}: the newest term wins, then the highest "
                          "last_txn_end, then priority, then the first name)")
        self.group = InMemoryGroup({winner: self.envs[winner]}, winner)
        self._partition(self.group.net)
        for name in sorted(self.running - {winner}):
            self._join(name)

    def rejoin(self, node: str) -> None:
        if self.cut == node:
            self.partition(None)
        self.running.add(node)
        self.electors[node] = ElectionNode.for_env(self.envs[node], self.election_net, self.clock)
        self.lines.append(f"rejoin: {node} comes back")
        self.searches.append(search_steps(self.envs[node], self.group.master))
        self._join(node)


@dataclass(frozen=True)
class FailoverStep:
    step: int
    operation: str
    master: str | None
    term: int
    logs: tuple[NodeLog, ...]
    records: dict[str, dict[str, str]]  # node -> its records
    writes: tuple[Write, ...]
    rolled_back: dict[str, tuple[tuple[int, str], ...]]  # node -> (VLSN, type) rolled back, in VLSN order
    searches: tuple[Search, ...]
    lines: tuple[str, ...]
    kept: dict[str, tuple[str, ...]]  # node -> the keys of the acknowledged writes it holds

    @property
    def acknowledged(self) -> tuple[Write, ...]:
        return tuple(w for w in self.writes if w.acknowledged)

    @property
    def lost(self) -> tuple[str, ...]:
        """Acknowledged writes some running node does not hold (always empty: the invariant)."""
        return tuple(f"{w.key} on {node}" for node, keys in self.kept.items() for w in self.acknowledged
                     if w.key not in keys)

    @property
    def figure(self) -> Figure:
        return draw_logs(self.logs, f"step {self.step}: {self.operation}",
                         acked={(w.vlsn, w.checksum) for w in self.acknowledged})

    def summary(self) -> str:
        held = "; ".join(f"{node}: {', '.join(f'{k}={v}' for k, v in sorted(r.items())) or 'nothing'}"
                         for node, r in self.records.items())
        back = "; ".join(f"{node} VLSNs {', '.join(str(v) for v, _ in vs)}" for node, vs in self.rolled_back.items()
                         if vs) or "nothing"
        acked = ", ".join(w.key for w in self.acknowledged) or "none"
        return "\n".join([*self.lines, f"master: {self.master or 'none'} (term {self.term})", f"records: {held}",
                          f"rolled back: {back}", f"acknowledged by a majority: {acked}; lost: "
                          f"{', '.join(self.lost) or 'none'}"])


def _validate(script) -> tuple:
    operations = tuple(checked(script, OPS))
    for number, op in enumerate(operations, 1):
        if op[0] == "write" and (not all(isinstance(a, str) and a for a in op[1:3]) or op[3] not in POLICIES):
            raise script_error(number, op, f"write takes a key and a value (non-empty strings) and a policy, one of "
                                           f"{', '.join(POLICIES)}")
        if op[0] in ("partition", "kill", "rejoin") and op[1] not in NODES:
            raise script_error(number, op, f"the nodes are {', '.join(NODES)}, not {op[1]!r}")
    return operations


def failover_step(step: int, script=SCRIPT) -> FailoverStep:
    """The group after the first ``step`` operations of ``script`` (see the module documentation)."""
    operations = _validate(script)
    if not 0 <= step <= len(operations):
        raise ValueError(f"step must be between 0 and {len(operations)} (the script's length), not {step}")
    return _failover_step(step, operations)


@lru_cache(maxsize=64)
def _failover_step(step: int, operations: tuple) -> FailoverStep:
    run = _Run()
    for number, op in enumerate(operations[:step], 1):
        run.apply(number, op)
    return _snapshot(run, step, "start" if step == 0 else " ".join(map(str, operations[step - 1])))


def _snapshot(run: _Run, step: int, operation: str) -> FailoverStep:
    logs, records, kept = [], {}, {}
    for name in NODES:
        env = run.envs[name]
        role = "master" if name == run.master else ("replica" if name in run.running else "killed")
        logs.append(node_log(env, role))
        records[name] = _records(env)
        if name in run.running:
            visible = {stream_vlsn(e): entry_checksum(e) for e in env.log.scan() if stream_vlsn(e)}
            kept[name] = tuple(w.key for w in run.writes if w.acknowledged and visible.get(w.vlsn) == w.checksum)
    return FailoverStep(step, operation, run.master, run.term, tuple(logs), records, tuple(run.writes),
                        {n: tuple(v) for n, v in run.rolled_back.items()}, tuple(run.searches), tuple(run.lines),
                        kept)


def failover_script(script=SCRIPT, after: int | None = None, master: str = "n1") -> list[tuple]:
    """``script``'s writes and partitions, with ``master`` killed and a new master elected after operation
    ``after`` of them (default: where the script kills it), and ``master`` rejoining at the end."""
    operations = _validate(script)
    kept = [op for op in operations if op[0] not in FAILOVER_OPS]
    if after is None:
        before_kill = operations[:next((i for i, op in enumerate(operations) if op == ("kill", master)), len(kept))]
        after = sum(op[0] not in FAILOVER_OPS for op in before_kill)
    if not 0 <= after <= len(kept):
        raise ValueError(f"the master dies after operation 0 to {len(kept)} (the script's writes and "
                         f"partitions), not {after}")
    return kept[:after] + [("kill", master), ("elect",)] + kept[after:] + [("rejoin", master)]


def master_dies(after: int, script=SCRIPT) -> FailoverStep:
    """The outcome when the master dies after operation ``after`` of the script's writes and partitions."""
    scenario = failover_script(script, after)
    return failover_step(len(scenario), scenario)


# -- JE's rollback example ----------------------------------------------------------------------------------
def _later_clock() -> float:
    return 1_800_000_000.0


def _example_node(name: str, clock=lambda: 1_700_000_000.0) -> ReplicatedEnvironment:
    """A node configured as tests/replication/test_syncup.py's, so the example has the same VLSNs and LSNs."""
    config = EnvironmentConfig(node_max_entries=4, checkpoint_bytes_interval=None, clock=clock, file_max=2048,
                               buffer_size=1024, trace=False)
    group = RepGroup("bank", [RepNode("n1", "n1", 2), RepNode("n2", "n2"), RepNode("n3", "n3")])
    return ReplicatedEnvironment.open(SimDisk(name), config, VLSNIndexConfig(stride=3), group=group, node_name=name)


def _settle(net: InMemoryNetwork, feeder: Feeder, replica: Replica) -> None:
    while net.deliver() + feeder.pump() + replica.pump() or net.in_flight:
        pass


@dataclass(frozen=True)
class RollbackExample:
    search: Search
    after: tuple[NodeLog, NodeLog]  # n1 (rolled back) and n2, after the syncup and the stream
    rollback_lines: tuple[str, ...]
    records: dict[str, dict[str, str]]

    @property
    def before_figure(self) -> Figure:
        return draw_logs(self.search.before, "JE's rollback example: n1 rejoins n2, before the syncup")

    @property
    def after_figure(self) -> Figure:
        return draw_logs(self.after, "after the syncup: n1's VLSNs 2 and 3 overmarked INVISIBLE, then n2's 2 and 3")


def je_rollback_example() -> RollbackExample:
    """n1 logs a Matchpoint (VLSN 1) that n2 receives, then creates "accounts" (its MapLN, VLSN 2) and puts
    b=old3 (VLSN 3), which n2 never gets; n2 takes over, creates its own "accounts" and puts c=new3 (its own
    VLSNs 2, 3); n1 rejoins: matchpoint VLSN 1, VLSNs 2 and 3 overmarked INVISIBLE (n1's database removed with
    its creation), the stream restarts at VLSN 2 and brings n2's (tests/replication/test_syncup.py's first
    test)."""
    n1, n2 = _example_node("n1"), _example_node("n2", _later_clock)
    n1.become_master()
    n1.log_matchpoint()
    net = InMemoryNetwork()
    _settle(net, *_link(net, net.listen("n1"), n1, n2, syncup=False))
    n1.database("accounts").put("b", "old3")  # the first write creates "accounts": its MapLN, then the LN
    n1.become_unknown()
    n2.become_master()
    n2.database("accounts").put("c", "new3")  # n2's own "accounts", created at the same VLSN
    search = search_steps(n1, n2)
    net = InMemoryNetwork()
    feeder, replica = _link(net, net.listen("n2"), n2, n1, syncup=True)
    _settle(net, feeder, replica)
    result = replica.syncup.rollback
    lines = (result.describe(),
             *(f"VLSN {v} {t} at {lsn}: INVISIBLE" for v, lsn, t in reversed(result.rolled_back)),
             f"the stream restarts at VLSN {replica.syncup.start_vlsn}")
    records = {env.node_name: _records(env) for env in (n1, n2)}
    return RollbackExample(search, (node_log(n1, "rejoined"), node_log(n2, "master")), lines, records)


# -- the rollback limit -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Refused:
    error: str  # the RollbackLimitError, or "not refused: " and what the syncup did
    before: tuple
    after: tuple

    @property
    def unchanged(self) -> bool:
        return self.before == self.after


def _restarted(script, node: str) -> tuple[_Run, ReplicatedEnvironment]:
    """The group after ``script``'s operations up to ``node``'s rejoin, ``node`` restarted from its disk (a crash
    that keeps what was fsynced, then recovery, which ends with a checkpoint after its tail)."""
    operations = _validate(script)
    rejoin = next((i for i, op in enumerate(operations) if op == ("rejoin", node)), None)
    if rejoin is None:
        raise ValueError(f"the script never rejoins {node}")
    run = _Run()
    for number, op in enumerate(operations[:rejoin], 1):
        run.apply(number, op)
    old = run.envs[node]
    old.crash(CrashMode.nothing())
    run.envs[node] = open_node(node, run.clock, old.disk)
    return run, run.envs[node]


def restart_refused(script=SCRIPT, node: str = "n1", txn_rollback_limit: int = 0) -> Refused:
    """Run ``script`` up to ``node``'s rejoin, but restart ``node`` from its disk first, with ``txn_rollback_limit``
    (by default 0: no committed transaction may be rolled back): the limit refuses its syncup if it would roll
    back more committed transactions (``error`` says why, or what the syncup did instead)."""
    run, env = _restarted(script, node)
    env.rep_config = ReplicationConfig(txn_rollback_limit=txn_rollback_limit)

    def state() -> tuple:
        return (env.log.end_lsn, env.range.last, [(e.vlsn, e.type_name, e.header.invisible) for e in env.log.scan()],
                _records(env))

    before = state()
    try:
        run.rejoin(node)
    except RollbackLimitError as e:
        return Refused(f"RollbackLimitError: {e}", before, state())
    return Refused(f"not refused: {run.lines[-1].strip()}", before, state())  # nothing committed to roll back


# -- hard recovery --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Checkpoint:
    """One checkpoint of the rejoining node's log, and whether recovery may start from it."""

    number: int
    start: str  # CkptStart's LSN
    end: str  # CkptEnd's LSN
    in_rollback_period: bool


@dataclass(frozen=True)
class HardRecovery:
    """What a hard recovery picture needs (:func:`hard_recovery`)."""

    before: NodeLog  # the restarted node's log before its syncup
    after: tuple[NodeLog, NodeLog]  # the node (rolled back by hard recovery, caught up) and the master
    matchpoint: tuple[int, str]  # (VLSN, LSN)
    period: tuple[str, str]  # the rollback period: the matchpoint's LSN .. the RollbackEnd's
    checkpoints: tuple[Checkpoint, ...]  # in log order, those of the node's log after hard recovery
    recovered_from: str  # the CkptEnd hard recovery started from ("the start of the log": none)
    rollback_line: str  # the RollbackResult, described
    recovery_lines: tuple[str, ...]  # what hard recovery's "read the log" phase said
    records: dict[str, dict[str, str]]  # node -> records, after the catch-up

    @property
    def figure(self) -> Figure:
        return draw_logs((self.before, *self.after),
                         "hard recovery: the rollback crosses the checkpoint recovery ended with")


def hard_recovery(script=SCRIPT, node: str = "n1") -> HardRecovery:
    """:func:`restart_refused`'s scenario under the default ``txn_rollback_limit`` (10): the restarted node's
    rollback crosses the checkpoint its recovery ended with, so it finishes by hard recovery: the marks made
    durable, then the environment recovered again in place from a checkpoint before the matchpoint."""
    run, env = _restarted(script, node)
    before = node_log(env, "restarted")
    run.rejoin(node)
    result = run.group.replicas[node].syncup.rollback
    if result is None or result.hard_recovery is None:
        raise ValueError(f"{node}'s syncup needed no hard recovery: {run.lines[-1].strip()}")
    entries = list(env.log.scan())
    ends = [e for e in entries if e.type_name == "CkptEnd"]
    period = RollbackPeriod(result.matchpoint_lsn, result.start_lsn, result.end_lsn)
    checkpoints = tuple(Checkpoint(e.values["checkpoint_id"], str(e.values["ckpt_start_lsn"]), str(e.lsn),
                                   period.holds(e.values["ckpt_start_lsn"])) for e in ends)
    info = env.recovery_info if env.recovery_info.checkpoints_not_used else None
    lines = () if info is None else next(p.lines for p in info.phases if p.name == "read the log")
    master = run.group.master
    return HardRecovery(before, (node_log(env, "rejoined"), node_log(master, "master")),
                        (result.matchpoint_vlsn, str(result.matchpoint_lsn)),
                        (str(result.matchpoint_lsn), str(result.end_lsn)), checkpoints,
                        result.hard_recovery, result.describe(), tuple(lines),
                        {e.node_name: _records(e) for e in (env, master)})


__all__ = ["OPS", "SCRIPT", "NODES", "Write", "SearchStep", "Search", "FailoverStep", "RollbackExample", "Refused",
           "failover_step", "failover_script", "master_dies", "search_steps", "je_rollback_example",
           "restart_refused", "Checkpoint", "HardRecovery", "hard_recovery"]
