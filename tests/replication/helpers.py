"""Shared set-up for the replication tests: small replicated environments, logs of replicated entries."""

from __future__ import annotations

from minidb.io import SimDisk
from minidb.log import LSN, TRACE, LogManager
from minidb.logstore import EnvironmentConfig
from minidb.replication import ReplicatedEnvironment, VLSNIndexConfig
from minidb.replication.vlsn.scanner import stream_vlsn


def fixed_clock() -> float:
    return 1_700_000_000.0


def small_config(**overrides) -> EnvironmentConfig:
    settings = dict(node_max_entries=4, checkpoint_bytes_interval=None, clock=fixed_clock, file_max=2048,
                    buffer_size=1024)
    settings.update(overrides)
    return EnvironmentConfig(**settings)


def open_env(disk: SimDisk, stride: int = 4, max_mappings: int = 1000, **overrides) -> ReplicatedEnvironment:
    return ReplicatedEnvironment.open(disk, small_config(**overrides),
                                      VLSNIndexConfig(stride=stride, max_mappings=max_mappings))


def stream(log) -> list[tuple[int, LSN, str]]:
    """(VLSN, LSN, type) of the log's visible replicated entries, read from the log."""
    return [(v, e.lsn, e.type_name) for e in log.scan() if (v := stream_vlsn(e)) is not None]


def trace_log(vlsns: int, file_max: int = 400, every: int = 1) -> tuple[LogManager, list[tuple[int, LSN]]]:
    """A log of Trace entries on a simulated disk; every ``every``-th one replicated, VLSNs 1..``vlsns``."""
    log = LogManager(SimDisk("trace-log"), file_max=file_max, clock=fixed_clock)
    mappings = []
    i = 0
    while len(mappings) < vlsns:
        i += 1
        if i % every == 0:
            v = len(mappings) + 1
            mappings.append((v, log.append(TRACE, {"message": f"replicated {v}"}, vlsn=v)))
        else:
            log.append(TRACE, {"message": f"local {i}"})
    return log, mappings


def workload(env: ReplicatedEnvironment, rounds: int = 6) -> None:
    """Records, transactions that commit and abort, Matchpoints, checkpoints: replicated entries of every kind."""
    db = env.database("accounts")
    for r in range(rounds):
        for i in range(4):
            db.put(f"acct{r}{i}", f"{r * 10 + i}")
        with env.begin() as txn:
            db.put(f"acct{r}0", "moved", txn=txn)
            db.delete(f"acct{r}1", txn=txn)
        txn = env.begin()
        db.put(f"acct{r}2", "lost", txn=txn)
        txn.abort()
        if r % 2:
            env.log_matchpoint()
        if r % 3 == 2:
            env.checkpoint()


def churn(env: ReplicatedEnvironment) -> None:
    """Overwrite and delete records until the first log files are mostly obsolete, then checkpoint."""
    db = env.database("accounts")
    for r in range(4):
        for i in range(40):
            db.put(f"k{i:03d}", f"value {r} {i} " * 3)
    for i in range(40):
        if i % 5:
            db.delete(f"k{i:03d}")
    env.checkpoint()
