"""The log store: two databases of a few levels, committed puts and deletes, a checkpoint, several files.

:func:`run_workload` drives an environment (plain or replicated: the same
calls) with a seeded workload on tiny nodes and small log files: records
put without a transaction, transactions that commit (durably) or abort,
deletes, a checkpoint in the middle, more committed work after it, and a
last transaction still open when the image is taken (recovery must undo
it). A dict follows along as the model; after each commit the LSN just
past its Commit entry (or past the LN of a put without a transaction) and
the model at that point go into a :class:`~tests.corruption.state.History`.

The committed data is :func:`minidb.logstore.tools.verify.records`: every user
database's records, {database: {key: value}}.

The sibling (``variant=1``) puts the same keys with the values in capitals,
with another environment seed; snapshots are taken after every step.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable

from minidb.io import Disk, SimDisk
from minidb.log import LSN
from minidb.logstore import Environment, EnvironmentConfig
from minidb.logstore.tools.verify import records

from tests.corruption.state import History, Snapshots, State, fixed_clock, image_of

DATABASES = ("a", "b")
SEED = 5
STEPS = 12


def config(variant: int = 0) -> EnvironmentConfig:
    return EnvironmentConfig(file_max=2048, buffer_size=512, node_max_entries=4,
                             checkpoint_bytes_interval=None, clock=fixed_clock, trace=False, env_seed=variant)


def read(disk: Disk) -> dict:
    return records(Environment.open(disk, config()))


def run_workload(env, history: History, steps: int = STEPS, variant: int = 0,
                 snapshot: Callable[[], None] = lambda: None) -> dict:
    """Run the seeded workload of ``steps`` steps on ``env``; return the committed data (the model).
    ``variant`` 1 writes the sibling's values (capitals); ``snapshot`` is called after each step."""
    rng = random.Random(SEED)
    model: dict[str, dict[bytes, bytes]] = {name: {} for name in DATABASES}
    dbs = {name: env.database(name) for name in DATABASES}

    def committed(lsn: LSN) -> None:
        history.commit(env.log.read(lsn).end, copy.deepcopy(model))

    def txn_writes(count: int) -> tuple:
        txn = env.begin()
        changes = {name: {} for name in DATABASES}
        for _ in range(count):
            name = rng.choice(DATABASES)
            key = b"k%02d" % rng.randrange(30)
            if key in model[name] and rng.random() < 0.3:
                dbs[name].delete(key, txn=txn)
                changes[name][key] = None
            else:
                value = b"v%d-" % rng.randrange(1000) + b"x" * rng.randrange(20)
                value = value.upper() if variant else value
                dbs[name].put(key, value, txn=txn)
                changes[name][key] = value
        return txn, changes

    def apply(changes: dict) -> None:
        for name, writes in changes.items():
            for key, value in writes.items():
                if value is None:
                    model[name].pop(key, None)
                else:
                    model[name][key] = value

    for step in range(steps):
        if step == steps // 2:
            env.checkpoint()
        if step % 3 == 0:
            name, key = rng.choice(DATABASES), b"k%02d" % rng.randrange(30)
            value = b"auto-%d" % step if not variant else b"AUTO-%d" % step
            lsn = dbs[name].put(key, value)
            model[name][key] = value
            committed(lsn)
            snapshot()
            continue
        txn, changes = txn_writes(rng.randrange(1, 5))
        if step % 7 == 5:
            txn.abort()
            continue
        lsn = txn.commit()
        apply(changes)
        committed(lsn)
        snapshot()
    assert records(getattr(env, "env", env)) == model  # a replicated environment wraps the plain one
    loser, _ = txn_writes(3)  # stays open: recovery must undo it
    name, key = DATABASES[0], b"last"
    model[name][key] = b"after the open transaction"
    committed(dbs[name].put(key, model[name][key]))  # its sync makes the loser's entries durable too
    env.sync()
    return model


def build(variant: int = 0) -> State:
    disk = SimDisk("logstore")
    history = History({name: {} for name in DATABASES})
    snapshots = Snapshots(disk)
    model = run_workload(Environment.open(disk, config(variant)), history, variant=variant, snapshot=snapshots.take)
    files = image_of(disk)
    sibling = build(variant + 1).files if variant == 0 else {}
    return State("logstore", files, model, history.at, read, sibling=sibling, older=snapshots.older(files))
