"""Replication: the log store's workload in a replicated environment, with Matchpoints and a flushed VLSN index.

The workload of :mod:`tests.corruption.build_logstore` runs in a
:class:`~minidb.replication.env.ReplicatedEnvironment` whose VLSN index has
a small stride and small buckets; then a Matchpoint is logged and a
checkpoint taken, which flushes the index to its internal database, and
two more records are put (their VLSNs are not in the flushed index).

The committed data is the records (as for the log store) and the VLSN
stream as the index gives it back: for every VLSN of its range, the LSN
and type of the entry :meth:`~minidb.replication.vlsn.index.VLSNIndex.find`
returns. For a prefix of the log, the stream is every replicated entry
before the cut (a replicated entry gets its VLSN when it is logged,
committed or not).

The sibling (``variant=1``) runs the workload with its values in capitals,
with another environment seed; snapshots are taken after every step.
"""

from __future__ import annotations

import copy

from minidb.io import Disk, SimDisk
from minidb.log import LSN
from minidb.logstore.tools.verify import records
from minidb.replication.env import ReplicatedEnvironment
from minidb.replication.vlsn.config import VLSNIndexConfig
from minidb.replication.vlsn.scanner import stream_vlsn

from tests.corruption.build_logstore import DATABASES, config, run_workload
from tests.corruption.state import History, Snapshots, State, image_of

STEPS = 8  # the index's own entries make a replicated log longer than the log store's


def index_config() -> VLSNIndexConfig:
    return VLSNIndexConfig(stride=3, max_mappings=4)


def open_env(disk: Disk, variant: int = 0) -> ReplicatedEnvironment:
    return ReplicatedEnvironment.open(disk, config(variant), index_config())


def read(disk: Disk) -> dict:
    env = open_env(disk)
    return {"records": records(env.env), "vlsns": vlsn_stream(env)}


def vlsn_stream(env: ReplicatedEnvironment) -> list[tuple[int, LSN, str]]:
    """(VLSN, LSN, type) of the entry the index finds for each VLSN of its range."""
    span = env.range
    found = [] if span.is_empty else [env.vlsn_index.find(vlsn) for vlsn in range(span.first, span.last + 1)]
    return [(e.vlsn, e.lsn, e.type_name) for e in found]


def build(variant: int = 0) -> State:
    disk = SimDisk("replication")
    history = History({name: {} for name in DATABASES})
    env = open_env(disk, variant)
    snapshots = Snapshots(disk)
    data = run_workload(env, history, STEPS, variant, snapshots.take)
    env.log_matchpoint()
    env.checkpoint()  # step 6 flushes the VLSN index
    for i in range(2):  # VLSNs after the flush: recovery finds them by scanning from CkptStart
        key = b"after the flush %d" % i
        value = b"xX"[variant:variant + 1] * 20
        data[DATABASES[1]][key] = value
        history.commit(env.log.read(env.database(DATABASES[1]).put(key, value)).end, copy.deepcopy(data))
        snapshots.take()
    env.sync()
    stream = [(vlsn, e.lsn, e.type_name) for e in env.log.scan() if (vlsn := stream_vlsn(e)) is not None]
    model = {"records": data, "vlsns": vlsn_stream(env)}
    assert model["vlsns"] == stream, (model["vlsns"][:3], stream[:3])

    def model_at(end: LSN) -> dict:
        return {"records": history.at(end), "vlsns": [entry for entry in stream if entry[1] < end]}

    files = image_of(disk)
    sibling = build(variant + 1).files if variant == 0 else {}
    return State("replication", files, model, model_at, read, sibling=sibling, older=snapshots.older(files))

