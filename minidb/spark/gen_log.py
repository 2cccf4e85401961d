"""``minidb generate --engine log``: seeded workloads written straight into the shared log.

This generator writes transactions, checkpoints and VLSNs itself, with the
test entry types of :mod:`minidb.spark.logdef`, through a real
:class:`~minidb.log.LogManager` on real files: small, fast logs of the same
structure the engines write, with faults no correct engine writes (a gap and
a duplicate in a VLSN stream) planted for the analyses to find.
``--engine logstore`` (:mod:`minidb.spark.gen_logstore`) has the log store
write the logs instead.

A *standalone* environment runs a mix of operations, each logging one entry:

- a transaction's update (``GenUpdate``; the first one begins it), chained to
  the transaction's previous entry by ``txn_prev_lsn``; at most four
  transactions are open at once;
- a commit (80%) or an abort of an open transaction;
- a checkpoint start, and a few operations later its end (every
  ``ckpt_every`` operations on average), with the first active LSN;
- now and then a ``Trace`` note.

Transactions still open at the end stay open (a crash would have cut them).

The first ``group`` environments are the *nodes of a replication group*: a
master stream of transactional operations, numbered by VLSN 1, 2, 3, ..., is
replayed by every node, each between checkpoints and notes of its own (those
are not replicated, as in JE). Each node chains a transaction's entries by
its own LSNs, so the bytes differ from node to node while the VLSN stream is
the same. Three faults are written on purpose, for the analyses to find:

- a *gap*: one node never logs one VLSN (an update near the first quarter);
- a *duplicate*: the same node logs another update twice (near 3/5);
- a *divergence*: the last node's updates from the middle of the stream on
  carry different data, as if it had followed another master. Its first
  diverging VLSN is reported.

The anomalies go to the second node (the first when the group has two), so
the divergence is the only difference of the last node. Worked example
(``minidb generate --engine log --envs 3 --ops 200 --seed 1 OUT``): a
stream of 176 replicated operations; env-01 never logs VLSN 44 and logs
VLSN 105 twice; env-02's entries differ from VLSN 88 on.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass

from minidb.errors import UserError
from minidb.log import LSN, NULL_LSN, TRACE, LogManager
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
from minidb.spark.logdef import GEN_ABORT, GEN_CKPT_END, GEN_CKPT_START, GEN_COMMIT, GEN_UPDATE

FIXED_CLOCK = 1_700_000_000.0  # FileHeader times: the same seed gives the same bytes
MAX_OPEN_TXNS = 4
COMMIT_SHARE = 0.8
REPLICATED_SHARE = 0.88  # of a node's operations; the rest are local
NOTE_SHARE = 0.03  # of a standalone environment's operations
DIVERGED_MASK = 0x5A


def diverged(data: bytes) -> bytes:
    """What a diverging node writes instead of ``data``: other bytes of the same length (one byte
    when ``data`` is empty), as if it had followed another master."""
    return bytes(b ^ DIVERGED_MASK for b in data) or bytes([DIVERGED_MASK])


def clock() -> float:
    return FIXED_CLOCK


class EnvWriter:
    """Logs one environment's entries and records what it wrote."""

    def __init__(self, request: GenerateRequest, index: int, role: str):
        self.disk = new_env_disk(request, index)
        # Each environment its own id, the same for the same seed (minidb.log.envid).
        self.log = LogManager(self.disk, file_max=request.file_max, clock=clock, env_seed=f"{request.seed}/env/{index}")
        self.report = EnvReport(env_name(index), os.path.abspath(self.disk.path), role)
        self.open_first: dict[int, LSN] = {}  # open transaction -> its first LSN here
        self.ckpt_id = 0
        self.ckpt_start: LSN | None = None

    def _append(self, entry_type, values, vlsn=None) -> LSN:
        lsn = self.log.append(entry_type, values, vlsn=vlsn)
        self.report.types[entry_type.name] += 1
        if vlsn is not None:
            self.report.vlsns.append(vlsn)
        return lsn

    def _txn_entry(self, entry_type, txn_id: int, values: dict, vlsn: int | None) -> LSN:
        txn = self.report.txns.get(txn_id)
        prev = txn.last_lsn if txn is not None else NULL_LSN
        lsn = self._append(entry_type, {"txn_id": txn_id, "txn_prev_lsn": prev, **values}, vlsn)
        if txn is None:
            txn = self.report.txns[txn_id] = TxnRecord(txn_id, lsn, lsn)
            self.open_first[txn_id] = lsn
        txn.last_lsn = lsn
        txn.entries += 1
        return lsn

    def update(self, txn_id: int, key: int, data: bytes, vlsn: int | None = None) -> LSN:
        return self._txn_entry(GEN_UPDATE, txn_id, {"key": key, "data": data}, vlsn)

    def finish(self, txn_id: int, commit: bool, vlsn: int | None = None) -> LSN:
        lsn = self._txn_entry(GEN_COMMIT if commit else GEN_ABORT, txn_id, {}, vlsn)
        self.report.txns[txn_id].outcome = "commit" if commit else "abort"
        self.open_first.pop(txn_id, None)
        return lsn

    def checkpoint_step(self) -> None:
        """Start a checkpoint, or end the one in progress."""
        if self.ckpt_start is None:
            self.ckpt_id += 1
            self.ckpt_start = self._append(GEN_CKPT_START, {"ckpt_id": self.ckpt_id})
            self.first_active = min(self.open_first.values(), default=self.ckpt_start)
            self.report.checkpoints.append(CheckpointRecord(self.ckpt_id, self.ckpt_start))
        else:
            end = self._append(GEN_CKPT_END, {"ckpt_id": self.ckpt_id, "ckpt_start_lsn": self.ckpt_start,
                                              "first_active_lsn": self.first_active})
            self.report.checkpoints[-1].end_lsn = end
            self.ckpt_start = None

    def note(self, text: str) -> None:
        self._append(TRACE, {"message": text})

    def close(self) -> EnvReport:
        self.log.close()
        return count_files(self.report, self.disk)


class CheckpointClock:
    """When the next checkpoint starts and ends, in operations."""

    def __init__(self, rng: random.Random, every: int):
        self.rng, self.every = rng, max(4, every)
        self.next_start = self._gap()
        self.end_at: int | None = None

    def _gap(self) -> int:
        return self.rng.randint(self.every // 2, self.every * 3 // 2)

    def due(self, op: int) -> bool:
        if self.end_at is not None:
            if op >= self.end_at:
                self.end_at = None
                self.next_start = op + self._gap()
                return True
            return False
        if op >= self.next_start:
            self.end_at = op + self.rng.randint(3, 12)
            return True
        return False


@dataclass
class RepOp:
    """One operation of the replicated master stream."""

    vlsn: int
    kind: str  # update | commit | abort
    txn_id: int
    key: int = 0
    data: bytes = b""


def transaction_mix(rng: random.Random, payload: tuple[int, int], next_txn: int, open_txns: list[int]):
    """One operation of the transaction mix: ``(kind, txn_id, key, data)`` with kind
    update | commit | abort; an update of ``next_txn`` begins it. ``open_txns``
    is updated in place."""
    r = rng.random()
    if not open_txns or (len(open_txns) < MAX_OPEN_TXNS and r < 0.25):
        open_txns.append(next_txn)
        return "update", next_txn, rng.randrange(1, 10_000), rng.randbytes(rng.randint(*payload))
    if r < 0.82:
        return "update", rng.choice(open_txns), rng.randrange(1, 10_000), rng.randbytes(rng.randint(*payload))
    txn = rng.choice(open_txns)
    open_txns.remove(txn)
    return ("commit" if rng.random() < COMMIT_SHARE else "abort"), txn, 0, b""


def standalone(request: GenerateRequest, index: int) -> EnvReport:
    rng = random.Random(f"{request.seed}/env/{index}")
    writer = EnvWriter(request, index, "standalone")
    ckpts = CheckpointClock(rng, request.ckpt_every)
    open_txns: list[int] = []
    next_txn = 1
    for op in range(request.ops):
        if ckpts.due(op):
            writer.checkpoint_step()
        elif rng.random() < NOTE_SHARE:
            writer.note(f"op {op}: a note from {writer.report.name}")
        else:
            kind, txn, key, data = transaction_mix(rng, request.payload, next_txn, open_txns)
            if kind == "update":
                if txn == next_txn:
                    next_txn += 1
                writer.update(txn, key, data)
            else:
                writer.finish(txn, kind == "commit")
    return writer.close()


def master_stream(request: GenerateRequest) -> list[RepOp]:
    rng = random.Random(f"{request.seed}/group")
    count = max(8, round(request.ops * REPLICATED_SHARE))
    open_txns: list[int] = []
    next_txn, stream = 1, []
    for vlsn in range(1, count + 1):
        kind, txn, key, data = transaction_mix(rng, request.payload, next_txn, open_txns)
        if txn == next_txn:
            next_txn += 1
        stream.append(RepOp(vlsn, kind, txn, key, data))
    return stream


def first_update(stream: list[RepOp], at_least: int, avoid: set[int] = frozenset()) -> int:
    for op in stream:
        if op.vlsn >= at_least and op.kind == "update" and op.vlsn not in avoid:
            return op.vlsn
    raise UserError("the replicated stream is too short for its faults; use more --ops")


def replication_group(request: GenerateRequest) -> tuple[list[EnvReport], GroupReport]:
    stream = master_stream(request)
    size = len(stream)
    diverge_at = first_update(stream, size // 2)
    gap = first_update(stream, size // 4, {diverge_at})
    duplicate = first_update(stream, size * 3 // 5, {diverge_at, gap})
    nodes = request.group
    faulty = 1 if nodes >= 3 else 0
    diverging = nodes - 1
    group = GroupReport([env_name(i) for i in range(nodes)], env_name(diverging), diverge_at,
                        {env_name(faulty): [gap]}, {env_name(faulty): [duplicate]}, size)
    reports = []
    for index in range(nodes):
        rng = random.Random(f"{request.seed}/node/{index}")
        writer = EnvWriter(request, index, "node")
        ckpts = CheckpointClock(rng, request.ckpt_every)
        op = 0
        for rep in stream:
            # local work between replicated entries: checkpoints and notes
            if ckpts.due(op):
                writer.checkpoint_step()
                op += 1
            while rng.random() > REPLICATED_SHARE:
                writer.note(f"op {op}: local note on {writer.report.name}")
                op += 1
            op += 1
            if index == faulty and rep.vlsn == gap:
                continue
            copies = 2 if index == faulty and rep.vlsn == duplicate else 1
            for _ in range(copies):
                if rep.kind == "update":
                    data = rep.data
                    if index == diverging and rep.vlsn >= diverge_at:
                        data = diverged(data)
                    writer.update(rep.txn_id, rep.key, data, vlsn=rep.vlsn)
                else:
                    writer.finish(rep.txn_id, rep.kind == "commit", vlsn=rep.vlsn)
        reports.append(writer.close())
    return reports, group


def run(request: GenerateRequest) -> GenerateReport:
    return write_environments("log", request, replication_group, standalone)


register_generator(Generator(
    "log",
    "the shared log alone: transactions, checkpoints and a replication group, with test entry types",
    run,
    supports_group=True,
))
