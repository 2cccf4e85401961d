"""The log store's twins: gets and puts (the tree's search, the handle's checks, the lock table) and recovery.

Three workloads, each seeded:

- :func:`gets_and_puts`: puts, deletes, transactions and gets on a small node budget with checkpoints by
  log growth, then a clean close and a reopen (whose recovery replays the closing checkpoint). The
  answers, the evictions in order, the counters and every byte on the disk are the reference's.
- :func:`recovery_in_place`: a workload over at most 60 keys in 128-slot nodes, crashed at seeded points and
  recovered without a node budget. Redo by key then splits nothing and evicts nothing, so the twin must
  leave exactly the reference's trees, utilization counts and recovery counts, and write the same bytes
  (recovery's own checkpoint, then a clean close).
- :func:`recovery_that_splits`: many keys into 4-slot nodes, sometimes with a node budget of 8, crashed
  and recovered. Redo by key fills a BIN before it splits it, and evicts after each BIN instead of each
  LN, so the trees' shapes differ, and with them the BINs logged (and so the log's bytes and its
  utilization) and which known-deleted slots a BIN logged meanwhile compressed away. What is promised,
  and compared: every live slot of the user databases after redo and after undo (key, LSN, data; the
  internal trees record node versions: the mapping tree's roots, the FileSummaryLNs), the counts of LNs
  redone, not newer and undone, the committed and loser transactions, the records, and trees that verify.
"""

from __future__ import annotations

import random

from minidb import impl
from minidb.io import CrashMode
from minidb.logstore import Environment, LockConflictError
from minidb.logstore.tools.verify import records, verify_tree

from tests.agreement.scenarios import disk_state, scenario
from tests.logstore.helpers import new_env, redo_workload, slots, small_config, utilization_of

TREE, DATABASE, LOCKS = "logstore.tree.tree.Tree", "logstore.database.Database", "logstore.txn.locks.LockTable"
RECOVERY = "logstore.recovery.manager.RecoveryManager"
SPLIT_SEEDS = range(1, 17)  # recovery_that_splits: enough seeds to reach every case redo by key treats apart


@scenario(TREE, DATABASE, LOCKS)
def gets_and_puts(seed: int):
    disk, env = new_env(f"paths{seed}", node_budget=14, checkpoint_bytes_interval=6_000)
    db = env.database("t")
    rng = random.Random(seed)
    answers: list = []
    for step in range(400):
        key = f"k{rng.randrange(120):04d}".encode()
        value = f"v{step}".encode() * rng.randint(1, 4)
        roll = rng.random()
        if roll < 0.45:
            db.put(key, value if rng.random() < 0.9 else value.decode())
        elif roll < 0.55:
            db.delete(key)
        elif roll < 0.65:
            with env.begin() as txn:
                db.put(key, value, txn=txn)
                db.delete(f"k{rng.randrange(120):04d}".encode(), txn=txn)
        elif roll < 0.7:
            txn = env.begin()
            db.put(key, value, txn=txn)
            try:
                db.get(key)  # locked by txn
            except LockConflictError as conflict:
                answers.append(str(conflict))
            answers.append(db.get(key, txn=txn))
            txn.abort()
        else:
            answers.append(db.get(key if rng.random() < 0.9 else key.decode()))
        if step % 25 == 0:
            answers.append([db.impl.tree.search(p).node_id for p in (b"", b"a", b"k0000", key, b"k0060x", b"z")])
    evictions, counters = list(env.evictor.history), env.stats.as_dict()
    env.close()
    env = Environment.open(disk, small_config())
    items = list(env.database("t").items())
    env.close()
    return answers, evictions, counters, items, disk_state(disk)


def recovery_answers(env: Environment):
    info = env.recovery_info
    return (info.summary(), [(p.name, p.lines) for p in info.phases], slots(env), records(env),
            utilization_of(env), verify_tree(env))


@scenario(RECOVERY, TREE, DATABASE, LOCKS)
def recovery_in_place(seed: int):
    disk, _ = redo_workload(seed, "in-place", node_max_entries=128)
    rng = random.Random(seed)
    events = len(disk.events)
    out = []
    for point in sorted(rng.sample(range(events // 2, events), 3)) + [events - 1]:
        image = disk.crash_image(point, CrashMode.nothing())
        recovered = Environment.open(image, small_config(node_max_entries=128))
        answers = recovery_answers(recovered)
        recovered.close()
        out.append((point, answers, disk_state(image)))
    return out


@scenario(RECOVERY, seeds=SPLIT_SEEDS)
def recovery_that_splits(seed: int):
    # Odd seeds add keys above the one slot of a database's BIN, written once each: appended by column.
    with impl.using(impl.ENGINE):  # the same crashed disk for both
        disk, budget = redo_workload(seed, "splits", fresh_keys=60 if seed % 2 else 0)
    seen: dict = {}

    def listener(phase, env):
        if phase in ("redo LNs", "undo losers"):
            seen[phase] = slots(env)

    env = Environment.open(disk.clone(), small_config(node_budget=budget), phase_listener=listener)
    info = env.recovery_info
    user = {phase: {db: rows for db, rows in trees.items() if not db.startswith("_")} for phase, trees in seen.items()}
    live = {phase: {db: [row for row in rows if not row[2]] for db, rows in trees.items()} for phase, trees in user.items()}
    return live, (info.lns_redone, info.lns_not_newer, info.lns_undone, info.committed, info.losers), \
        records(env), verify_tree(env)
