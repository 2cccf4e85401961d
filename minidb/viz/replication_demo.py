"""The replication group demonstrations behind notebook 13: feeders, replicas, commits waiting for acks.

A three-node group (``n1`` the master, replicas ``n2`` and ``n3``) on the
in-memory network (:class:`~minidb.replication.group.driver.InMemoryGroup`),
driven by a script (:mod:`minidb.viz.script`; the operations are
:data:`OPS`): commits with an ack policy, partitions, heals, slow links, a
replica joining late. Everything is deterministic: the network moves only
when the driver pumps it, and the timeout of a commit runs on a
``ManualClock``.

- :func:`group_step`: the group after the first ``step`` operations, with
  ``trouble`` applied from the start (the notebook's control: nothing, one
  replica cut off, one replica slow); returns the stream picture and what
  each commit did. Pure: it replays from scratch;
- :func:`commit_rounds`: one commit waiting for its acks, round by round
  (what moved, who acked, who the commit still waits for).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from matplotlib.figure import Figure

from minidb.io import SimDisk
from minidb.logstore import EnvironmentConfig, ManualClock
from minidb.replication import ReplicatedEnvironment, VLSNIndexConfig
from minidb.replication.errors import InsufficientAcksError, InsufficientReplicasError
from minidb.replication.group.driver import InMemoryGroup
from minidb.replication.group.membership import RepGroup, RepNode
from minidb.replication.stream.durability import Durability, ReplicaAckPolicy, SyncPolicy
from minidb.viz.replication import StreamPicture, draw_stream, stream_picture
from minidb.viz.script import Op, checked, op_table, script_error

NODES = ("n1", "n2", "n3")
REPLICAS = NODES[1:]
GROUP = RepGroup("bank", [RepNode(n, n) for n in NODES])
POLICIES = tuple(p.name for p in ReplicaAckPolicy)
TIMEOUT_MS = 1000
#: The notebook's control: what goes wrong with one replica from the start.
TROUBLES = ("none", "cut off n3", "slow n3")
SLOW_ROUNDS = 3

OPS = op_table(
    Op("commit", ("key", "policy"), "the master writes key in a transaction and commits with an ack policy "
                                    "(ALL, SIMPLE_MAJORITY or NONE), waiting up to 1 s for the acks"),
    Op("partition", ("replica",), "cut a replica off from the master: frames between them stay in flight"),
    Op("heal", (), "end every partition"),
    Op("slow", ("replica", "rounds"), "hold the master's frames to a replica for that many deliveries"),
    Op("join", ("replica",), "a replica that was not connected joins: its feeder starts at its next VLSN"),
    Op("settle", (), "move the network until nothing moves"),
)
SCRIPT: list[tuple] = [
    ("join", "n2"),
    ("join", "n3"),
    ("commit", "alice", "SIMPLE_MAJORITY"),  # n2 and n3 both ack
    ("partition", "n3"),
    ("commit", "bob", "SIMPLE_MAJORITY"),  # n2's ack is a majority with n1
    ("commit", "carol", "ALL"),  # n3 cannot ack: InsufficientAcksError after 1 s
    ("heal",),
    ("settle",),  # n3 catches up, and acks carol late (ignored: nobody waits)
]


def open_node(name: str) -> ReplicatedEnvironment:
    config = EnvironmentConfig(checkpoint_bytes_interval=None, clock=lambda: 1_700_000_000.0, trace=False)
    return ReplicatedEnvironment.open(SimDisk(name), config, VLSNIndexConfig(stride=4), group=GROUP,
                                      node_name=name)


def new_group(connected: tuple[str, ...] = REPLICAS) -> InMemoryGroup:
    envs = {"n1": open_node("n1")}
    group = InMemoryGroup(envs, "n1")
    for name in connected:
        group.join(open_node(name))
    return group


def commit(group: InMemoryGroup, key: str, policy: str, clock: ManualClock) -> str:
    """One transaction on the master with ``policy``; what happened, in one line."""
    master = group.master
    txn = master.begin()
    master.database("accounts").put(key, "100", txn=txn)
    durability = Durability(SyncPolicy.SYNC, SyncPolicy.NO_SYNC, ReplicaAckPolicy[policy])
    started = clock.now_ms()
    try:
        token = master.start_commit(txn, durability, clock=clock, timeout_ms=TIMEOUT_MS)
        token.wait(group.pump)
    except InsufficientReplicasError:
        txn.abort()
        connected = master.feeder_txns.active_replicas()
        return f"commit {key} ({policy}): InsufficientReplicasError: {len(connected)} replica(s) connected " \
               f"({', '.join(connected) or 'none'}); nothing logged, the transaction aborted"
    except InsufficientAcksError as e:
        return f"commit {key} ({policy}): committed on n1, InsufficientAcksError: {e.required} acks needed, " \
               f"acked by {', '.join(e.acked_by) or 'none'}, after {clock.now_ms() - started} ms"
    return f"commit {key} ({policy}): acked by {', '.join(token.acked_by) or 'nobody (none needed)'}"


@dataclass(frozen=True)
class GroupStep:
    step: int
    operation: str
    trouble: str
    picture: StreamPicture
    lines: tuple[str, ...]  # what each operation did, in order

    @property
    def figure(self) -> Figure:
        return draw_stream(self.picture, title=self.title)

    @property
    def title(self) -> str:
        """The step and who is cut off now (by the script or the control), then the control's trouble."""
        cut = [row.name for row in self.picture.rows if row.cut_off]
        parts = [f"{', '.join(cut)} cut off" if cut else "no replica cut off"]
        if self.trouble != "none":
            parts.append(f"control: {self.trouble}")
        return f"step {self.step}: {self.operation} ({'; '.join(parts)})"

    def summary(self) -> str:
        rows = "; ".join(f"{r.name} holds up to VLSN {r.last}" + (f", acked up to {r.acked}" if r.role == "replica"
                                                                     else "") for r in self.picture.rows)
        return "\n".join([*self.lines, rows])


def group_step(step: int, script=SCRIPT, trouble: str = "none") -> GroupStep:
    """The group after the first ``step`` operations of ``script``, with ``trouble`` (see the module documentation)."""
    operations = tuple(checked(script, OPS))
    joined: set[str] = set()
    for number, op in enumerate(operations, 1):
        if op[0] == "commit" and (not isinstance(op[1], str) or not op[1] or op[2] not in POLICIES):
            raise script_error(number, op, f"commit takes a key (a non-empty string) and a policy, one of "
                                           f"{', '.join(POLICIES)}")
        if op[0] in ("partition", "slow", "join") and op[1] not in REPLICAS:
            raise script_error(number, op, f"the replicas are {', '.join(REPLICAS)}, not {op[1]!r}")
        if op[0] == "slow" and not (isinstance(op[2], int) and 1 <= op[2] <= 100):
            raise script_error(number, op, f"rounds must be a whole number from 1 to 100, not {op[2]!r}")
        if op[0] == "join":
            if op[1] in joined:
                raise script_error(number, op, f"{op[1]} has joined already")
            joined.add(op[1])
    if not 0 <= step <= len(operations):
        raise ValueError(f"step must be between 0 and {len(operations)} (the script's length), not {step}")
    if trouble not in TROUBLES:
        raise ValueError(f"trouble is one of {', '.join(TROUBLES)}, not {trouble!r}")
    return _group_step(step, operations, trouble)


@lru_cache(maxsize=64)
def _group_step(step: int, operations: tuple, trouble: str) -> GroupStep:
    late = tuple(op[1] for op in operations if op[0] == "join")
    group = new_group(tuple(n for n in REPLICAS if n not in late))
    clock = ManualClock(start_ms=0)
    lines: list[str] = []

    def make_trouble() -> None:
        if trouble == "cut off n3":
            group.net.partition(["n1", "n2"], ["n3"])
        elif trouble == "slow n3":
            group.net.delay("n1", "n3", SLOW_ROUNDS)

    if "n3" not in late:
        make_trouble()
    for op in operations[:step]:
        if op[0] == "commit":
            if trouble == "slow n3":
                make_trouble()  # each commit meets the slow link again
            lines.append(commit(group, op[1], op[2], clock))
        elif op[0] == "partition":
            group.net.partition([n for n in NODES if n != op[1]], [op[1]])
            lines.append(f"partition: {op[1]} cut off from n1")
        elif op[0] == "heal":
            group.net.heal()
            lines.append("heal: every node reaches every other")
        elif op[0] == "slow":
            group.net.delay("n1", op[1], op[2])
            lines.append(f"slow: n1 -> {op[1]} held for {op[2]} deliveries")
        elif op[0] == "join":
            group.join(open_node(op[1]))
            if op[1] == "n3":
                make_trouble()
            feeder, replica = group.feeders[op[1]], group.replicas[op[1]]
            lines.append(f"join: {op[1]} asks for VLSN {replica.start_vlsn}; its feeder sends "
                         f"{feeder.sent} entries ({feeder.cache_hits} found in the log item cache, "
                         f"{feeder.sent - feeder.cache_hits} by a scan from the VLSN index) and protects n1's log files from "
                         f"{feeder.protected.first_file} on")
        else:
            rounds = group.settle()
            sent = {n: f.sent for n, f in group.feeders.items()}
            lines.append(f"settle: {rounds} rounds; entries sent so far {sent}")
    described = "start" if step == 0 else " ".join(map(str, operations[step - 1]))
    return GroupStep(step, described, trouble, stream_picture(group), tuple(lines))


def commit_rounds(policy: str = "SIMPLE_MAJORITY", trouble: str = "slow n3") -> list[str]:
    """One commit waiting for its acks, pumped round by round: what each round moved, who acked, who is awaited."""
    if policy not in POLICIES or trouble not in TROUBLES:
        raise ValueError(f"policy one of {', '.join(POLICIES)}, trouble one of {', '.join(TROUBLES)}")
    group = new_group()
    if trouble == "cut off n3":
        group.net.partition(["n1", "n2"], ["n3"])
    elif trouble == "slow n3":
        group.net.delay("n1", "n3", SLOW_ROUNDS)
    master = group.master
    txn = master.begin()
    master.database("accounts").put("alice", "100", txn=txn)
    clock = ManualClock(start_ms=0)
    token = master.start_commit(txn, Durability(SyncPolicy.SYNC, SyncPolicy.NO_SYNC, ReplicaAckPolicy[policy]),
                                clock=clock, timeout_ms=TIMEOUT_MS)
    lines = [f"round 0: Commit of txn {txn.id} logged on n1 at VLSN {token.info.vlsn}; {policy} needs "
             f"{token.info.required} ack(s); waiting for {', '.join(token.waiting_for) or 'nobody'}"]
    rounds = 0
    while not token.done and rounds < 8:
        rounds += 1
        seen = len(group.net.history)
        group.pump()
        moved = [line.removeprefix("delivered ").split("(")[0] for line in group.net.history[seen:] if line.startswith("delivered")]
        lines.append(f"round {rounds}: delivered {'; '.join(moved) or 'nothing'} -> acked by "
                     f"{', '.join(token.acked_by) or 'none'}; waiting for {', '.join(token.waiting_for) or 'nobody'}")
    lines.append("the commit returns" if token.done else "no ack yet: the commit keeps waiting, up to its timeout")
    return lines


__all__ = ["OPS", "SCRIPT", "TROUBLES", "GroupStep", "group_step", "commit_rounds", "new_group"]
