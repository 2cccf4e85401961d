"""``minidb generate --engine logstore``: environments written by the log store itself.

Each environment is a real :mod:`minidb.logstore` environment on real files,
so its log holds what the engine logs: LNs and deleted LNs (``LN_TX``,
``DEL_LN_TX`` in transactions, ``LN`` without), ``Commit`` and ``Abort``,
the BINs and INs that eviction and checkpoints write (with their
provisional flags), ``CkptStart``/``CkptEnd``, ``MapLN`` and
``FileSummaryLN``. Nodes are kept small (at most 8 slots) and the memory
budget tight, so trees grow several levels and eviction logs nodes between
checkpoints.

The workload is a seeded list of operations on one database, ``records``:

- a put or a delete in an open transaction (the first one begins it); at
  most four transactions are open at once, and no two of them write the
  same key, because the log store's record locks refuse a conflict at once
  instead of waiting;
- the commit (80%) or abort of an open transaction;
- now and then a put without a transaction, of a key nobody holds;
- a checkpoint every ``ckpt_every`` operations on average (all ten steps).

Commits do not fsync (``Durability.WRITE_NO_SYNC``); the log is synced once
at the end. Transactions still open at the end stay open: the environment
stops there as if the process had died after its last fsync, so recovery
would roll them back.

The first ``group`` environments are the *nodes of a replication group*:
:class:`~minidb.replication.ReplicatedEnvironment`\\ s that run the same list
of operations, checkpoints included, so their records and transaction ends
get the same VLSNs, and a ``Matchpoint`` at the end. Each node has a larger
cache than the one before, so eviction logs other BINs and INs at other
times and the nodes' LSNs differ, as they do in a real group. (The
checkpoints stay at the same places because the VLSN index's flush runs in
a transaction of its own, which takes a transaction id from the same
counter as the workload's: in JE a replica's replicated transactions carry
the master's ids, which replication's replay will bring.) The last node's puts
from the middle of the list on write other data, as if it had followed
another master: the report names the first VLSN where it diverges. The VLSN
stream of a real engine has no gaps and no duplicates, so there are none to
find here (``--engine log`` writes those faults on purpose).

The report is kept on the writing side, from the log manager's listener
(every entry's LSN, type and VLSN as it is appended) and the generator's own
own operations; what the listener cannot see is read back from the log:
the transaction id of a transactional entry, and what the environment logs
while it opens, before a listener can be attached.

Worked example (``minidb generate --engine logstore --envs 3 --ops 200
--seed 1 OUT``): three nodes whose streams run from VLSN 1 (the creation of
the database) to 189, the last a Matchpoint, at other LSNs on each node
(env-00, with the smallest cache, writes 318 entries, env-02 255); env-02
diverges from VLSN 96 on, the first put from operation 100 of the 200.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass

from minidb.errors import UserError
from minidb.log import LSN, EntryType
from minidb.logstore import Durability, Environment, EnvironmentConfig, Transaction
from minidb.replication import ReplicatedEnvironment
from minidb.spark.gen_log import FIXED_CLOCK, CheckpointClock, diverged
from minidb.spark.generate import (
    CheckpointRecord,
    EnvReport,
    GenerateReport,
    GenerateRequest,
    Generator,
    GroupReport,
    TxnRecord,
    count_files,
    env_name,
    new_env_disk,
    register_generator,
    write_environments,
)

DATABASE = "records"
KEYS = 400
MAX_OPEN_TXNS = 4
COMMIT_SHARE = 0.8
DELETE_SHARE = 0.15  # of the updates in transactions
NON_TXN_SHARE = 0.08  # of all operations
NODE_MAX_ENTRIES = 8
NODE_BUDGET = 12  # nodes in memory; each node of a group gets NODE_BUDGET_STEP more than the one before
NODE_BUDGET_STEP = 6


@dataclass(frozen=True)
class Op:
    """One operation of a workload: ``kind`` is put | delete | commit | abort | checkpoint;
    ``txn`` the workload's own number for the transaction (0: none)."""

    kind: str
    txn: int = 0
    key: str = ""
    data: bytes = b""


def workload(rng: random.Random, request: GenerateRequest, checkpoints: bool) -> list[Op]:
    """A seeded list of operations (see the module documentation); checkpoints only if asked."""
    ckpts = CheckpointClock(rng, request.ckpt_every)
    holder: dict[str, int] = {}  # key -> the open transaction that wrote it
    open_txns: list[int] = []
    next_txn, ops = 1, []

    def free_key(txn: int) -> str:
        while True:
            key = f"key{rng.randrange(KEYS):04d}"
            if holder.get(key, txn) == txn:
                return key

    def data() -> bytes:
        return rng.randbytes(rng.randint(*request.payload))

    for index in range(request.ops):
        if checkpoints and ckpts.due(index) and ckpts.end_at is not None:
            ops.append(Op("checkpoint"))  # the clock's start; a checkpoint runs whole
            continue
        r = rng.random()
        if r < NON_TXN_SHARE:
            ops.append(Op("put", 0, free_key(0), data()))
        elif not open_txns or (len(open_txns) < MAX_OPEN_TXNS and r < 0.3):
            txn, next_txn = next_txn, next_txn + 1
            open_txns.append(txn)
            key = free_key(txn)
            holder[key] = txn
            ops.append(Op("put", txn, key, data()))
        elif r < 0.82:
            txn = rng.choice(open_txns)
            key = free_key(txn)
            holder[key] = txn
            kind = "delete" if rng.random() < DELETE_SHARE else "put"
            ops.append(Op(kind, txn, key, data() if kind == "put" else b""))
        else:
            txn = rng.choice(open_txns)
            open_txns.remove(txn)
            for key in [k for k, t in holder.items() if t == txn]:
                del holder[key]
            ops.append(Op("commit" if rng.random() < COMMIT_SHARE else "abort", txn))
    return ops


class StoreWriter:
    """Runs operations on one environment and records, from the log's listener, what it logged."""

    def __init__(self, request: GenerateRequest, index: int, role: str, node_budget: int = NODE_BUDGET):
        self.disk = disk = new_env_disk(request, index)
        config = EnvironmentConfig(file_max=request.file_max, node_max_entries=NODE_MAX_ENTRIES,
                                   node_budget=node_budget, checkpoint_bytes_interval=None,
                                   durability=Durability.WRITE_NO_SYNC, clock=lambda: FIXED_CLOCK, trace=False,
                                   env_seed=f"{request.seed}/env/{index}")  # each its own id, the same per seed
        if role == "node":
            self.env = ReplicatedEnvironment.open(disk, config)
        else:
            self.env = Environment.open(disk, config)
        self.report = EnvReport(env_name(index), os.path.abspath(disk.path), role)
        self.txns: dict[int, Transaction] = {}  # the workload's transaction number -> open transaction
        self.vlsns_of_op: list[int] = []  # the VLSNs the running operation was given
        for entry in self.env.log.scan():  # what opening logged, before the listener
            self._logged(entry.lsn, entry.entry_type, entry.vlsn, entry)
        self.env.log.add_listener(self._logged)
        self.db = self.env.database(DATABASE)

    def _logged(self, lsn: LSN, entry_type: EntryType, vlsn: int | None, entry=None) -> None:
        if entry_type.name == "FileHeader":
            return  # counted per file at the end
        report = self.report
        report.types[entry_type.name] += 1
        if vlsn is not None:
            report.vlsns.append(vlsn)
            self.vlsns_of_op.append(vlsn)
        if entry_type.transactional:
            # the running operation's transaction, or one of the engine's own (the VLSN index's flush)
            txn_id = (entry or self.env.log.read(lsn)).txn_id
            txn = report.txns.get(txn_id)
            if txn is None:
                txn = report.txns[txn_id] = TxnRecord(txn_id, lsn, lsn)
            txn.last_lsn = lsn
            txn.entries += 1
            if entry_type.name in ("Commit", "Abort"):
                txn.outcome = "commit" if entry_type.name == "Commit" else "abort"
        elif entry_type.name == "CkptStart":
            report.checkpoints.append(CheckpointRecord(len(report.checkpoints) + 1, lsn))
        elif entry_type.name == "CkptEnd":
            report.checkpoints[-1].end_lsn = lsn

    def run(self, op: Op, data: bytes) -> list[int]:
        """Apply one operation (with ``data`` for a put); returns the VLSNs it was given."""
        self.vlsns_of_op = []
        if op.kind == "checkpoint":
            self.env.checkpoint()
            return self.vlsns_of_op
        txn = None
        if op.txn:
            txn = self.txns.get(op.txn) or self.txns.setdefault(op.txn, self.env.begin())
        if op.kind == "put":
            self.db.put(op.key, data, txn=txn)
        elif op.kind == "delete":
            self.db.delete(op.key, txn=txn)
        else:
            del self.txns[op.txn]
            if op.kind == "commit":
                txn.commit()
            else:
                txn.abort()
        return self.vlsns_of_op

    def stop(self) -> EnvReport:
        """Sync the log and stop where the workload ended, open transactions and all."""
        self.env.sync()
        self.env.log.close()
        return count_files(self.report, self.disk)


def standalone(request: GenerateRequest, index: int) -> EnvReport:
    rng = random.Random(f"{request.seed}/logstore/env/{index}")
    writer = StoreWriter(request, index, "standalone")
    for op in workload(rng, request, checkpoints=True):
        writer.run(op, op.data)
    return writer.stop()


def replication_group(request: GenerateRequest) -> tuple[list[EnvReport], GroupReport]:
    stream = workload(random.Random(f"{request.seed}/logstore/group"), request, checkpoints=True)
    diverge_at = next((i for i, op in enumerate(stream) if i >= len(stream) // 2 and op.kind == "put"), None)
    if diverge_at is None:
        raise UserError("the replicated workload is too short to diverge; use more --ops")
    diverging = request.group - 1
    reports, first_divergence, last_vlsn = [], None, 0
    for index in range(request.group):
        writer = StoreWriter(request, index, "node", node_budget=NODE_BUDGET + NODE_BUDGET_STEP * index)
        for position, op in enumerate(stream):
            data = op.data
            if index == diverging and position >= diverge_at and op.kind == "put":
                data = diverged(data)
            vlsns = writer.run(op, data)
            if index == diverging and position == diverge_at:
                first_divergence = vlsns[0]
        writer.env.log_matchpoint()
        last_vlsn = writer.env.vlsn_index.range.last
        reports.append(writer.stop())
    group = GroupReport([env_name(i) for i in range(request.group)], env_name(diverging), first_divergence,
                        last_vlsn=last_vlsn)
    return reports, group


def run(request: GenerateRequest) -> GenerateReport:
    return write_environments("logstore", request, replication_group, standalone)


register_generator(Generator(
    "logstore",
    "the log store: a tree of records, transactions, eviction and checkpoints, and a replicated group",
    run,
    supports_group=True,
))
