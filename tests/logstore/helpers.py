"""Shared set-up for the log store tests: small deterministic environments."""

from __future__ import annotations

from minidb.io import SimDisk
from minidb.log import LogEntry
from minidb.logstore import Environment, EnvironmentConfig


def fixed_clock() -> float:
    return 1_700_000_000.0


def small_config(**overrides) -> EnvironmentConfig:
    """4-slot nodes, no checkpoints by log growth, a fixed clock."""
    settings = dict(node_max_entries=4, checkpoint_bytes_interval=None, clock=fixed_clock)
    settings.update(overrides)
    return EnvironmentConfig(**settings)


def new_env(name: str = "test", **overrides) -> tuple[SimDisk, Environment]:
    disk = SimDisk(name)
    return disk, Environment.open(disk, small_config(**overrides))


def reopen(disk: SimDisk, **overrides) -> Environment:
    return Environment.open(disk, small_config(**overrides))


def entries(env: Environment, *type_names: str) -> list[LogEntry]:
    """The log's entries (of the given types), read back from the log."""
    return [e for e in env.log.scan() if not type_names or e.type_name in type_names]


def keys(count: int, step: int = 1) -> list[str]:
    return [f"key{i:03d}" for i in range(0, count * step, step)]


def fill(db, count: int, value: str = "v") -> list[str]:
    written = keys(count)
    for key in written:
        db.put(key, f"{value}-{key}")
    return written


def node_by_id(env: Environment, node_id: int):
    return next(n for n in env.evictor.resident_nodes() if n.node_id == node_id)


def resident_of_level(env: Environment, db_name: str, level: int):
    db_id = env.db_tree.get(db_name).id
    return sorted((n for n in env.evictor.resident_nodes() if n.db_id == db_id and n.level == level),
                  key=lambda n: n.node_id)
