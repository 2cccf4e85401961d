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
  (what moved, who acked, who the commit still waits for);
- :func:`network_restore`: a node with an empty directory gets the
  master's log files over the network (:mod:`minidb.replication.restore`):
  the files listed and protected, each file's chunks, its checksum verified,
  the install, and the restored node's records; optionally with the
  connection dropped in the middle and a retry. Pure: it builds from scratch.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from matplotlib.figure import Figure

from minidb.io import SimDisk
from minidb.logstore import EnvironmentConfig, ManualClock
from minidb.replication import ReplicatedEnvironment, VLSNIndexConfig
from minidb.replication.errors import (
    ConnectionClosedError,
    InsufficientAcksError,
    InsufficientReplicasError,
    NetworkRestoreError,
)
from minidb.replication.group.driver import InMemoryGroup
from minidb.replication.group.membership import RepGroup, RepNode
from minidb.replication.restore import LogFileFeeder, NetworkRestore
from minidb.replication.stream.durability import Durability, ReplicaAckPolicy, SyncPolicy
from minidb.replication.stream.network import HandshakeAcceptor, HandshakeInitiator, InMemoryNetwork
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


@dataclass(frozen=True)
class RestoreShow:
    """A network restore as a notebook shows it: one line per step, and one row per file received."""

    lines: tuple[str, ...]
    files: tuple[tuple[str, int, str, int, bool], ...]  # (name, bytes, CRC-32, chunks, verified)
    bytes: int
    records_equal: bool

    def table(self) -> str:
        rows = [f"{'file':<14}{'bytes':>7}  {'CRC-32':<12}{'chunks':>6}  verified"]
        rows += [f"{name:<14}{size:>7}  {crc:<12}{chunks:>6}  {'yes' if ok else 'NO'}"
                 for name, size, crc, chunks, ok in self.files]
        return "\n".join(rows)


RESTORE_FILE_MAX = 2048  # small log files, so that a restore sends several


def _restore_node(name: str, disk: SimDisk) -> ReplicatedEnvironment:
    config = EnvironmentConfig(checkpoint_bytes_interval=None, clock=lambda: 1_700_000_000.0, trace=False,
                               file_max=RESTORE_FILE_MAX)
    return ReplicatedEnvironment.open(disk, config, VLSNIndexConfig(stride=4), group=GROUP, node_name=name)


def _connect(net: InMemoryNetwork, listener) -> tuple:
    initiator = HandshakeInitiator(net.connect(listener.address, "n3"), GROUP.name, GROUP.node("n3"))
    net.deliver()
    acceptor = HandshakeAcceptor(listener.accept(), GROUP, "n1")
    acceptor.poll()
    net.deliver()
    initiator.poll()
    return initiator.channel, acceptor.channel


def network_restore(records: int = 40, chunk_size: int = 1024, drop_after_chunks: int | None = None) -> RestoreShow:
    """Master ``n1`` writes ``records`` records; ``n3``, with an empty directory, gets its log files over the
    in-memory network in chunks of ``chunk_size`` bytes, one chunk per round. ``drop_after_chunks``: the
    connection drops once that many chunks arrived, and ``n3`` tries again."""
    if not 1 <= records <= 1000 or not 64 <= chunk_size <= 1 << 20:
        raise ValueError(f"records 1..1000 and chunk_size 64..1048576, not {records} and {chunk_size}")
    master = _restore_node("n1", SimDisk("n1"))
    master.become_master()
    db = master.database("accounts")
    for i in range(records):
        db.put(f"acct{i:04d}", f"{100 + i}")
    master.sync()
    protector = master.env.cleaner.protector
    net, disk, lines = InMemoryNetwork(), SimDisk("n3"), []
    listener = net.listen("n1/stream")
    drop = drop_after_chunks
    while True:
        mine, theirs = _connect(net, listener)
        restore = NetworkRestore(disk, mine, GROUP.name, "n1", reason="an empty directory")
        server = LogFileFeeder(master, theirs, "n3", chunk_size=chunk_size, max_chunks=1)
        discarded = f"; the last attempt's staging area discarded: {', '.join(restore.discarded)}" \
            if restore.discarded else ""
        lines.append(f"n3 -> n1: FileListRequest (an empty directory){discarded}")
        net.deliver()
        server.pump()
        lines.append(f"n1 -> n3: FileList of {len(server.files)} files "
                     f"({sum(f.length for f in server.files.values())} bytes), then a FileInfo each; n1 "
                     f"protects them from its cleaner and eraser: {', '.join(str(s) for s in protector.sets)}")
        try:
            while not restore.done:
                before = len(restore.received)
                net.deliver()
                restore.pump()
                for f in restore.received[before:]:
                    lines.append(f"{f.name}: FileStart, {f.chunks} FileChunk, FileEnd: {f.length} bytes, CRC-32 "
                                 f"0x{f.checksum:08x} verified; staged as restore.{f.name}")
                if drop is not None and restore.chunks_received >= drop:
                    drop = None
                    theirs.close()
                    net.drop()
                    restore.pump()
                net.deliver()
                server.pump()
        except NetworkRestoreError as e:
            try:
                server.pump()
            except ConnectionClosedError:  # n1 sees the connection closed: it lets the files go
                pass
            lines.append(f"{e}; n1's files protected now: {len(protector.sets)}")
            continue
        net.deliver()
        server.pump()  # RestoreDone
        break
    lines.append(f"the staged log verified by the log's verifier; restore.marker written last and fsynced; "
                 f"{restore.installed}; n1's files protected now: {len(protector.sets)}")
    node = _restore_node("n3", disk)
    mine_records = dict(node.database("accounts", create=False).items())
    equal = mine_records == dict(db.items())
    lines.append(f"n3 opens on the restored log: {len(mine_records)} records, VLSNs "
                 f"{node.range.first}..{node.range.last}, {'equal to' if equal else 'NOT'} n1's")
    files = tuple((f.name, f.length, f"0x{f.checksum:08x}", f.chunks, f.verified) for f in restore.received)
    return RestoreShow(tuple(lines), files, restore.bytes_received, equal)


__all__ = ["OPS", "SCRIPT", "TROUBLES", "GroupStep", "group_step", "commit_rounds", "new_group", "RestoreShow",
           "network_restore"]
