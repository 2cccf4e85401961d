"""The log store's twins: gets and puts (the tree's search, the handle's checks, the lock table, the utilization
tracker's count), recovery and the cleaner.

Four workloads, each seeded:

- :func:`gets_and_puts`: puts, deletes, transactions (some writing a record twice) and gets on a small node
  budget with checkpoints by log growth, then a clean close and a reopen (whose recovery replays the closing
  checkpoint). The answers, the evictions in order, the counters, the utilization counts and every byte on
  the disk are the reference's.
- :func:`replicated_puts`: a replicated environment, whose open puts into its VLSN index in a transaction while
  recovery runs, then transactions putting into a replicated database (the reference's path) and an internal
  one; closed and opened again. The records, the counters and every byte on the disk are the reference's.
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
- :func:`cleaning`: a log churned in small files, cleaned whole (with lazy migration on some seeds), a
  checkpoint deleting the files cleaned, more churn, a second run stopped by a record a transaction holds
  and run again once it commits. Every file's verdicts (the entries live and obsolete, the LNs migrated and
  where to, the INs made dirty), the choices' reasons, the counters and every byte on the disk are the
  reference's, and the collector is on again after each run.
"""

from __future__ import annotations

import gc
import random

from minidb import impl
from minidb.io import CrashMode, SimDisk
from minidb.logstore import Environment, LockConflictError
from minidb.logstore.tools.verify import records, verify_tree
from minidb.replication import ReplicatedEnvironment

from tests.agreement.scenarios import disk_state, scenario
from tests.logstore.helpers import new_env, redo_workload, slots, small_config, utilization_of

TREE, DATABASE, LOCKS = "logstore.tree.tree.Tree", "logstore.database.Database", "logstore.txn.locks.LockTable"
RECOVERY = "logstore.recovery.manager.RecoveryManager"
CLEANER = "logstore.cleaner.cleaner.Cleaner"
UTILIZATION = "logstore.cleaner.utilization.UtilizationTracker"
SPLIT_SEEDS = range(1, 17)  # recovery_that_splits: enough seeds to reach every case redo by key treats apart


@scenario(TREE, DATABASE, LOCKS, UTILIZATION)
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
                if rng.random() < 0.3:
                    db.put(key, value + b"+", txn=txn)  # its own version replaced: obsolete at once
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
    evictions, counters, utilization = list(env.evictor.history), env.stats.as_dict(), utilization_of(env)
    env.close()
    env = Environment.open(disk, small_config())
    items = list(env.database("t").items())
    env.close()
    return answers, evictions, counters, utilization, items, disk_state(disk)


@scenario(DATABASE, LOCKS, UTILIZATION)
def replicated_puts(seed: int):
    disk = SimDisk(f"rep{seed}")
    rep = ReplicatedEnvironment.open(disk, small_config())
    replicated, internal = rep.database("t"), rep.internal_database("_local")
    rng = random.Random(seed)
    for _ in range(20):
        with rep.begin() as txn:
            for _ in range(rng.randint(1, 5)):
                key = f"k{rng.randrange(40):03d}".encode()
                replicated.put(key, rng.randbytes(8), txn=txn)
                internal.put(key, rng.randbytes(8), txn=txn)
    counters = rep.env.stats.as_dict(), utilization_of(rep.env)
    rep.close()
    rep = ReplicatedEnvironment.open(disk, small_config())
    items = list(rep.database("t").items()), list(rep.internal_database("_local").items())
    rep.close()
    return items, counters, disk_state(disk)


def recovery_answers(env: Environment):
    info = env.recovery_info
    return (info.summary(), [(p.name, p.lines) for p in info.phases], slots(env), records(env),
            utilization_of(env), verify_tree(env))


@scenario(RECOVERY, TREE, DATABASE, LOCKS, UTILIZATION)
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


def cleaning_answers(env: Environment, done) -> list:
    """Each file cleaned, as the cleaner sorted its entries; its last choice; whether the collector is on."""
    return [(c.file_number, c.cleaned, c.live, c.obsolete, c.migrated, c.dirtied, c.reason) for c in done] + [
        env.cleaner.last_selection, gc.isenabled()]


@scenario(CLEANER, TREE, DATABASE, LOCKS, UTILIZATION)
def cleaning(seed: int):
    disk, env = new_env(f"clean{seed}", file_max=2048, node_max_entries=16, cleaner_lazy_migration=seed % 2 == 0)
    db, rng = env.database("t"), random.Random(seed)
    for _ in range(700):
        db.put(f"k{rng.randrange(100):03d}".encode(), rng.randbytes(8 + rng.randrange(24)))
    env.checkpoint()
    answers = cleaning_answers(env, env.clean_log())
    env.checkpoint()  # deletes the files cleaned
    for _ in range(300):
        db.put(f"k{rng.randrange(50):03d}".encode(), rng.randbytes(20))  # k050 to k099 keep their older versions
    env.checkpoint()
    txn = env.begin()
    for i in range(50, 100):
        db.put(f"k{i:03d}".encode(), b"held", txn=txn)
    answers.append(cleaning_answers(env, env.clean_log()))  # stopped by a record the transaction holds
    txn.commit()
    env.checkpoint()
    answers.append(cleaning_answers(env, env.clean_log()))
    env.checkpoint()
    counters = env.stats.as_dict(), env.cleaner.stats.as_dict(), utilization_of(env)
    env.close()
    return answers, counters, disk_state(disk)
