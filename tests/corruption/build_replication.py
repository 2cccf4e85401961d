"""Replication: the log store's workload in a replicated environment, with Matchpoints and a flushed VLSN index.

The workload of :mod:`tests.corruption.build_logstore` runs in a
:class:`~minidb.replication.env.ReplicatedEnvironment` whose VLSN index has
a small stride and small buckets; then a Matchpoint is logged and a
checkpoint taken, which flushes the index to its internal database, and
two more records are put (their VLSNs are not in the flushed index).

The committed data is the records (as for the log store) and the VLSN
stream as the index gives it back: for every VLSN of its range, the LSN
and type of the entry :meth:`~minidb.replication.index.VLSNIndex.find`
returns. For a prefix of the log, the stream is every replicated entry
before the cut (a replicated entry gets its VLSN when it is logged,
committed or not).
"""

from __future__ import annotations

import copy

from minidb.io import Disk, SimDisk
from minidb.log import LSN
from minidb.logstore.verify import records
from minidb.replication.config import VLSNIndexConfig
from minidb.replication.env import ReplicatedEnvironment
from minidb.replication.scanner import stream_vlsn

from tests.corruption.build_logstore import DATABASES, config, run_workload
from tests.corruption.state import History, State, image_of

STEPS = 8  # the index's own entries make a replicated log longer than the log store's


def index_config() -> VLSNIndexConfig:
    return VLSNIndexConfig(stride=3, max_mappings=4)


def open_env(disk: Disk) -> ReplicatedEnvironment:
    return ReplicatedEnvironment.open(disk, config(), index_config())


def read(disk: Disk) -> dict:
    env = open_env(disk)
    return {"records": records(env.env), "vlsns": vlsn_stream(env)}


def vlsn_stream(env: ReplicatedEnvironment) -> list[tuple[int, LSN, str]]:
    """(VLSN, LSN, type) of the entry the index finds for each VLSN of its range."""
    span = env.range
    found = [] if span.is_empty else [env.vlsn_index.find(vlsn) for vlsn in range(span.first, span.last + 1)]
    return [(e.vlsn, e.lsn, e.type_name) for e in found]


def build() -> State:
    disk = SimDisk("replication")
    history = History({name: {} for name in DATABASES})
    env = open_env(disk)
    data = run_workload(env, history, STEPS)
    env.log_matchpoint()
    env.checkpoint()  # step 6 flushes the VLSN index
    for i in range(2):  # VLSNs after the flush: recovery finds them by scanning from CkptStart
        key = b"after the flush %d" % i
        data[DATABASES[1]][key] = b"x" * 20
        history.commit(env.log.read(env.database(DATABASES[1]).put(key, b"x" * 20)).end, copy.deepcopy(data))
    env.sync()
    stream = [(vlsn, e.lsn, e.type_name) for e in env.log.scan() if (vlsn := stream_vlsn(e)) is not None]
    model = {"records": data, "vlsns": vlsn_stream(env)}
    assert model["vlsns"] == stream, (model["vlsns"][:3], stream[:3])

    def model_at(end: LSN) -> dict:
        return {"records": history.at(end), "vlsns": [entry for entry in stream if entry[1] < end]}

    return State("replication", image_of(disk), model, model_at, read)

