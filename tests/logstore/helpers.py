"""Shared set-up for the log store tests: small deterministic environments."""

from __future__ import annotations

import gc

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


def collections_during(work):
    """``work()``'s result, and the generations of the cyclic collector's collections while it ran (after one
    collection first, so that none is owed to what came before)."""
    collections = []

    def count(phase, info):
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()
    gc.callbacks.append(count)
    try:
        result = work()
    finally:
        gc.callbacks.remove(count)
    return result, collections


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


def redo_workload(seed: int, name: str = "redo", fresh_keys: int = 0, **overrides):
    """A crashed disk after a random workload that recovery's redo and undo must get right, and a node budget
    for recovering it (None or 8): two databases, repeated keys, deletions, committed, aborted and unfinished
    transactions, one open across checkpoints (firstActiveLSN moves back: redo then replays LNs the
    checkpoint's BINs already hold, deletions among them whose slots were compressed away). ``fresh_keys``:
    that many keys above the one slot of a third database's BIN, written once each after a last checkpoint;
    ``overrides``: of the environment's configuration."""
    import random

    from minidb.io import CrashMode

    rng = random.Random(seed)
    disk, env = new_env(f"{name}-{seed}", **overrides)
    dbs = [env.database("a"), env.database("b")]
    pool = [f"k{i:03d}" for i in range(rng.randint(10, 60))]
    steps, long_txn = rng.randint(40, 160), None
    begin_long = rng.randrange(steps // 2) if rng.random() < 0.6 else None
    for step in range(steps):
        if step == begin_long:
            long_txn = env.begin()
            dbs[0].put("long", "x", txn=long_txn)
        elif long_txn is not None and step == steps - 10:
            long_txn.commit()
            long_txn = None
        db, key = rng.choice(dbs), rng.choice(pool)
        roll = rng.random()
        if roll < 0.45:
            db.put(key, f"v{step}")
        elif roll < 0.6:
            db.delete(key)
        elif roll < 0.9:
            txn = env.begin()
            for _ in range(rng.randint(1, 4)):
                db, key = rng.choice(dbs), rng.choice(pool)
                if rng.random() < 0.7:
                    db.put(key, f"t{step}", txn=txn)
                else:
                    db.delete(key, txn=txn)
            txn.commit() if rng.random() < 0.7 else txn.abort()
        else:
            env.checkpoint()
    if rng.random() < 0.7:
        loser = env.begin()  # still active at the crash: undone
        for _ in range(rng.randint(1, 4)):
            db, key = rng.choice(dbs), rng.choice(pool)
            db.put(key, "loser", txn=loser)
    if fresh_keys:
        fresh = env.database("u")
        fresh.put("a", "before the checkpoint")
        env.checkpoint()
        for i in range(fresh_keys):
            fresh.put(f"z{i:03d}", f"w{i}")
    env.sync()
    env.crash(CrashMode.nothing())
    return disk, rng.choice([None, 8])


def slots(env: Environment) -> dict[str, list[tuple]]:
    """Every slot of every tree, in key order: (key, LSN, known deleted, the data its LN holds)."""
    from minidb.logstore.tree.ln import record_of

    out = {}
    for impl in list(env.db_tree.by_id.values()):
        rows: list[tuple] = []
        tree = impl.tree
        stack = [tree.root_node()]
        while stack:
            node = stack.pop()
            if node.is_bin:
                slots = zip(node.keys, node.lsns, node.known_deleted, node.records, strict=True)
                for key, lsn, deleted, cached in slots:
                    held = record_of(env.log.read(lsn))
                    assert cached is None or cached == held, f"{impl.name} {key!r}: cached data is not its LN's"
                    rows.append((key, lsn, deleted, held))
            else:
                stack.extend(tree.fetch_child(node, i) for i in reversed(range(node.n_entries)))
        out[impl.name] = rows
    return out


def utilization_of(env: Environment):
    """The utilization tracker's counts: per file, the sizes it knows, the files changed, entries counted."""
    tracker = env.utilization
    files = {n: (s.total_count, s.total_size, s.node_count, s.node_size, dict(s.obsolete))
             for n, s in tracker.files.items()}
    return files, dict(tracker.sizes), set(tracker.dirty), tracker.stats["nEntriesCounted"]
