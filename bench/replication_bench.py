"""Replicated commits per second over TCP on localhost, by ack policy, next to a single node.

What it measures, on real files in ``bench/out/``: a group of three nodes in
one process (the master and two replicas, each replica and each feeder in its
own thread, talking through :class:`~minidb.replication.stream.network.TcpNetwork`
on 127.0.0.1), and one plain log store environment on its own. Each commit is
one transaction writing one record of 100 bytes. The master logs its Commit
WRITE_NO_SYNC and the replicas NO_SYNC (JE's ``COMMIT_WRITE_NO_SYNC`` on the
master, its default NO_SYNC on replicas); the single node commits
WRITE_NO_SYNC too, so the difference is the replication: the stream and the
wait for acks. Ack policies NONE, SIMPLE_MAJORITY (one replica's ack) and ALL
(both) run side by side, interleaved within each of REPEATS rounds; each
rate is the median over the rounds.

The feeders poll their connection every ``FEEDER_POLL_S`` for acks and new
entries (a feeder is stepped; see :mod:`minidb.replication.stream.feeder`), so an
ack waits at most that long to be read, plus the thread switches of a Python
process.
"""

from __future__ import annotations

import os
import threading

from bench import report
from minidb.logstore import Durability as LogDurability, Environment, EnvironmentConfig
from minidb.replication import ReplicatedEnvironment
from minidb.replication.errors import ReplicationNetworkError
from minidb.replication.group.membership import RepGroup, RepNode
from minidb.replication.stream.durability import Durability, ReplicaAckPolicy, SyncPolicy
from minidb.replication.stream.feeder import Feeder
from minidb.replication.stream.network import HandshakeAcceptor, HandshakeInitiator, TcpNetwork
from minidb.replication.stream.replica import Replica

COMMITS = 400
REPEATS = report.REPEATS
VALUE = "v" * 100
POLICIES = (ReplicaAckPolicy.NONE, ReplicaAckPolicy.SIMPLE_MAJORITY, ReplicaAckPolicy.ALL)
FEEDER_POLL_S = 0.0005
ACK_TIMEOUT_MS = 10_000


def config() -> EnvironmentConfig:
    return EnvironmentConfig(checkpoint_bytes_interval=None, durability=LogDurability.WRITE_NO_SYNC, trace=False)


class TcpGroup:
    """Three nodes over TCP on localhost: a master, two replicas; feeders and replicas in threads."""

    def __init__(self, path: str, nodes: int = 3):
        self.net = TcpNetwork()
        self.listener = self.net.listen("127.0.0.1:0")
        names = [f"n{i}" for i in range(1, nodes + 1)]
        port = int(self.listener.address.rpartition(":")[2])
        self.group = RepGroup("bench", [RepNode(n, self.listener.address if n == "n1" else f"127.0.0.1:{port + i}")
                                        for i, n in enumerate(names)])
        self.envs = {n: ReplicatedEnvironment.open(os.path.join(path, n), config(), group=self.group, node_name=n)
                     for n in names}
        self.master = self.envs["n1"]
        self.master.become_master()
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        self.errors: list[BaseException] = []
        for name in names[1:]:
            self._join(name)

    def _join(self, name: str) -> None:
        initiator = HandshakeInitiator(self.net.connect(self.listener.address, name), "bench",
                                       self.group.node(name))
        acceptor = HandshakeAcceptor(self.listener.accept(timeout=10), self.group, "n1")
        acceptor.poll(timeout=10)
        initiator.poll(timeout=10)
        feeder = Feeder(self.master, acceptor.channel, name)
        replica = Replica(self.envs[name], initiator.channel, "n1")
        feeder.pump(timeout=10)  # the StartStream: active from here on
        self._run(lambda: feeder.pump(timeout=FEEDER_POLL_S))
        self._run(lambda: replica.pump(timeout=0.05))

    def _run(self, step) -> None:
        def loop() -> None:
            try:
                while not self.stop.is_set():
                    step()
            except ReplicationNetworkError:
                if not self.stop.is_set():
                    raise
            except BaseException as e:  # noqa: BLE001 - reported by close()
                self.errors.append(e)

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        self.threads.append(thread)

    def commits(self, count: int, durability: Durability, start: int) -> None:
        db = self.master.database("bench")
        for i in range(start, start + count):
            txn = self.master.begin(durability)
            db.put(f"key{i:07d}", VALUE, txn=txn)
            self.master.commit(txn, timeout_ms=ACK_TIMEOUT_MS)

    def close(self) -> dict[str, int]:
        """Wait for the replicas to hold the master's whole stream, stop, close; each node's last VLSN."""
        last = self.master.range.last
        for env in self.envs.values():
            while env.range.last < last and not self.errors:
                self.stop.wait(0.01)
        self.stop.set()
        for feeder in list(self.master.feeder_txns.feeders.values()):
            feeder.close()
        for thread in self.threads:
            thread.join(5)
        self.listener.close()
        if self.errors:
            raise self.errors[0]
        ends = {name: env.range.last for name, env in self.envs.items()}
        for env in self.envs.values():
            env.close()
        return ends


def measure(path: str, commits: int, repeats: int) -> tuple[dict[str, float], dict[str, int]]:
    """Commits per second of each configuration (medians), and each node's last VLSN."""
    seconds: dict[str, list[float]] = {"single": [], **{p.name: [] for p in POLICIES}}
    single = Environment.open(os.path.join(path, "single"), config())
    group = TcpGroup(path)
    db = single.database("bench")
    done = 0

    def single_commits(start: int) -> None:
        for i in range(start, start + commits):
            with single.begin() as txn:
                db.put(f"key{i:07d}", VALUE, txn=txn)

    for _ in range(repeats):
        seconds["single"].append(report.timed(lambda done=done: single_commits(done)))
        for policy in POLICIES:
            durability = Durability(SyncPolicy.WRITE_NO_SYNC, SyncPolicy.NO_SYNC, policy)
            seconds[policy.name].append(report.timed(lambda d=durability, done=done: group.commits(commits, d, done)))
            done += commits
    ends = group.close()
    single.close()
    return {name: commits / report.median(values) for name, values in seconds.items()}, ends


def run(commits: int = COMMITS, repeats: int = REPEATS) -> str:
    (rate, ends), reference = report.both_in("replication-", lambda path: measure(path, commits, repeats))
    titles = {"single": "single node (not replicated)", **{p.name: f"3 nodes, {p.name}" for p in POLICIES}}
    speedups = [report.Speedup(title, "commits/s", rate[name], reference and reference[0][name])
                for name, title in titles.items()]
    rows = [["single node (not replicated)", "—", report.fmt_rate(rate["single"]), "1.00×"]]
    for policy in POLICIES:
        acks = policy.required_acks(3)
        rows.append([f"3 nodes, {policy.name}", str(acks), report.fmt_rate(rate[policy.name]),
                     report.fmt_ratio(rate[policy.name] / rate["single"])])
    same = len(set(ends.values())) == 1
    return f"""\
## Replication: commits with acks (`bench/replication_bench.py`)

Measured {report.run_date()} on {report.machine_line()};
files on {report.file_system()}.

A group of three nodes in one process talks over TCP on 127.0.0.1 (a thread per feeder and per
replica; feeders poll every {FEEDER_POLL_S * 1000:g} ms). Each commit is one transaction writing
one 100-byte record; the master logs its Commit WRITE_NO_SYNC, the replicas NO_SYNC, the single
node WRITE_NO_SYNC. {commits:,} commits per policy and round, {repeats} rounds interleaved;
rates are medians. After the run every node's stream ends at VLSN
{max(ends.values()):,} ({'all equal' if same else 'NOT equal: ' + str(ends)}).

{report.table(["configuration", "acks waited for", "commits/s", "÷ single node"], rows, right=(1, 2, 3))}

Reading the table: with NONE the master does not wait, but its feeders still read and send every
entry in the same process (the cost of the stream alone). SIMPLE_MAJORITY waits for the first of
two replicas to replay the Commit and answer (one round trip over localhost plus the replica's
replay); ALL waits for the slower of the two. Here all three nodes share one Python process (one
interpreter lock) on the machine's cores, so most of the cost is thread switching and the
feeders' polling, and SIMPLE_MAJORITY and ALL differ by less than the run-to-run noise; with a
machine per node the wait is the network's round trip and the replica's log write.

{report.speedup_table(speedups)}
"""


__all__ = ["run", "TcpGroup"]
