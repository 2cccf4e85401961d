"""Redo in key order (one descent per BIN) leaves exactly what the reference redo, one LN at a time, leaves.

Each seed writes a random workload (two databases, repeated keys, deletions, committed, aborted
and unfinished transactions, one open across checkpoints, a node budget now and then), crashes, and recovers two
copies of the crashed disk: one with the reference redo (``redo_in_key_order = False``), one with
the fast one. After the redo pass and after the undo pass, every slot of every tree (key, LSN,
known-deleted flag, and the data it caches or its LN holds) is the same, and so are the counts of
LNs redone, not newer and undone; the shape of the trees may differ. One thing may: logging a BIN
(a split, an eviction) compresses its known-deleted slots away (those no transaction holds), and
the two redos split and evict at other moments, so a known-deleted slot may be missing from one.
"""

import random

import pytest

from minidb.io import CrashMode
from minidb.logstore import Environment
from minidb.logstore.recovery import RecoveryManager, node_head
from minidb.logstore.tree.ln import record_of
from minidb.logstore.verify import records, verify_tree

from tests.logstore.helpers import entries, new_env, small_config

SEEDS = range(40)


def run_workload(seed: int):
    rng = random.Random(seed)
    disk, env = new_env(f"redo-order-{seed}")
    dbs = [env.database("a"), env.database("b")]
    pool = [f"k{i:03d}" for i in range(rng.randint(10, 60))]
    # A transaction open across checkpoints moves firstActiveLSN back: redo then replays LNs that
    # the checkpoint's BINs already hold, deletions among them whose slots were compressed away.
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
    env.sync()
    env.crash(CrashMode.nothing())
    return disk, rng.choice([None, 8])


def slots(env) -> dict[str, list[tuple]]:
    """Every slot of every tree, in key order: (key, LSN, known deleted, data)."""
    out = {}
    for impl in list(env.db_tree.by_id.values()):
        rows: list[tuple] = []
        tree = impl.tree
        stack = [tree.root_node()]
        while stack:
            node = stack.pop()
            if node.is_bin:
                for key, lsn, deleted, cached in zip(node.keys, node.lsns, node.known_deleted, node.records):
                    held = record_of(env.log.read(lsn))
                    assert cached is None or cached == held, f"{impl.name} {key!r}: cached data is not its LN's"
                    rows.append((key, lsn, deleted, held))
            else:
                stack.extend(tree.fetch_child(node, i) for i in reversed(range(node.n_entries)))
        out[impl.name] = rows
    return out


def live(seen: dict) -> dict:
    return {phase: {db: [row for row in rows if not row[2]] for db, rows in trees.items()} for phase, trees in seen.items()}


def agree_where_both_hold(one: dict, other: dict) -> bool:
    """Every key both hold has the same slot (a known-deleted slot may be missing from one of them)."""
    for phase, trees in one.items():
        for db, rows in trees.items():
            theirs = {row[0]: row for row in other[phase][db]}
            if any(row[0] in theirs and theirs[row[0]] != row for row in rows):
                return False
    return True


def recovered(disk, budget, in_key_order: bool, monkeypatch):
    seen = {}

    def listener(phase, env):
        if phase in ("redo LNs", "undo losers"):
            seen[phase] = slots(env)

    monkeypatch.setattr(RecoveryManager, "redo_in_key_order", in_key_order)
    env = Environment.open(disk.clone(), small_config(node_budget=budget), phase_listener=listener)
    info = env.recovery_info
    return env, seen, (info.lns_redone, info.lns_not_newer, info.lns_undone, info.committed, info.losers)


@pytest.mark.parametrize("seed", SEEDS)
def test_redo_in_key_order_gives_the_reference_redos_slots(seed, monkeypatch):
    disk, budget = run_workload(seed)
    careful, careful_seen, careful_counts = recovered(disk, budget, False, monkeypatch)
    fast, fast_seen, fast_counts = recovered(disk, budget, True, monkeypatch)
    assert live(fast_seen) == live(careful_seen)
    assert agree_where_both_hold(fast_seen, careful_seen)
    assert fast_counts == careful_counts
    assert records(fast) == records(careful)
    assert verify_tree(fast) == []


def test_the_workloads_redo_repeated_keys_deletions_and_losers(monkeypatch):
    """The seeds above exercise what redo in key order must get right: keys with several LNs to redo,
    deletions of keys no slot holds, LNs not newer than their slot, and losers."""
    seen = {"chain of several": 0, "deletion, no slot": 0, "not newer": 0, "losers": 0}
    redo_chain = RecoveryManager._redo_chain

    def spy(self, slot_lsn, chain):
        seen["chain of several"] += len(chain) > 1
        seen["deletion, no slot"] += slot_lsn is None and chain[0][2].type_name.startswith("DEL_")
        return redo_chain(self, slot_lsn, chain)

    monkeypatch.setattr(RecoveryManager, "_redo_chain", spy)
    for seed in SEEDS:
        disk, budget = run_workload(seed)
        _, _, (_, not_newer, _, _, losers) = recovered(disk, budget, True, monkeypatch)
        seen["not newer"] += not_newer
        seen["losers"] += len(losers)
    assert all(seen.values()), seen


def test_node_head_reads_the_ids_the_item_holds():
    """Recovery learns node ids from the first bytes of IN and BIN items, without decoding the slots."""
    _, env = new_env()
    db = env.database("t")
    for i in range(40):
        db.put(f"key{i:03d}", "v")
    env.checkpoint()
    nodes = entries(env, "IN", "BIN")
    assert {e.type_name for e in nodes} == {"IN", "BIN"}
    for entry in nodes:
        assert node_head(entry) == (entry.values["db_id"], entry.values["node_id"])


def bins_logged_by_redo(disk, in_key_order: bool, monkeypatch) -> tuple[list[int], "Environment"]:
    """The node ids of the BINs the redo pass logged (splits), in log order; and the recovered environment."""
    marks = {}

    def listener(phase, env):
        marks[phase] = env.log.end_lsn

    monkeypatch.setattr(RecoveryManager, "redo_in_key_order", in_key_order)
    env = Environment.open(disk.clone(), small_config(), phase_listener=listener)
    logged = env.log.scan(marks["transactions"], marks["redo LNs"])
    return [e.values["node_id"] for e in logged if e.type_name == "BIN"], env


def test_a_bin_the_redo_overfills_is_split_until_it_fits_each_piece_logged_once(monkeypatch):
    """200 keys after a checkpoint, into 4-slot BINs: redo in key order puts them all into the one
    BIN first, then halves it down to pieces that fit; each piece is logged once, where splitting at
    every insertion logs both halves of every split."""
    disk, env = new_env("overfill")
    db = env.database("t")
    env.checkpoint()
    rng = random.Random(5)
    written = {f"k{rng.randrange(10**6):06d}": f"v{i}" for i in range(200)}
    for key, value in written.items():
        db.put(key, value)
    env.sync()
    env.crash(CrashMode.nothing())
    fast, recovered_fast = bins_logged_by_redo(disk, True, monkeypatch)
    careful, _ = bins_logged_by_redo(disk, False, monkeypatch)
    assert len(fast) == len(set(fast)) > 200 // 4
    assert len(careful) > len(set(careful))  # the reference logs some BINs more than once
    assert verify_tree(recovered_fast) == []
    assert records(recovered_fast)["t"] == {k.encode(): v.encode() for k, v in written.items()}
    assert all(n.n_entries <= 4 for n in recovered_fast.evictor.resident_nodes())


def test_new_keys_appended_in_bulk_give_the_slots_of_the_per_key_loop(monkeypatch):
    """Keys above every slot of their BIN, each with one LN that is not a deletion, are appended column
    by column (``append_new_keys``); the per-key loop of ``_redo_into_bin`` is the reference: both leave
    the same slots, the same counts and the same BINs logged. Keys deleted, rewritten, or below a slot
    take the loop (a BIN takes one way for all its keys)."""
    from minidb.logstore.tree.bin import BIN

    disk, env = new_env("append-new-keys")
    db, fresh = env.database("t"), env.database("u")
    for i in range(0, 40, 4):  # the checkpoint's BINs hold k000, k004 ...
        db.put(f"k{i:03d}", "old")
    fresh.put("a", "before the checkpoint")
    env.checkpoint()
    rng = random.Random(11)
    for i in range(300):
        key = f"k{rng.randrange(400):03d}"
        db.put(key, f"v{i}") if rng.random() < 0.8 else db.delete(key)
    for i in range(100):  # keys above the one slot of this database's BIN, written once each
        fresh.put(f"z{i:03d}", f"w{i}")
    env.sync()
    env.crash(CrashMode.nothing())

    appended = []
    append_slots = BIN.append_slots

    def spy(self, keys, *columns):
        appended.append(len(keys))
        return append_slots(self, keys, *columns)

    monkeypatch.setattr(BIN, "append_slots", spy)
    results = {}
    for bulk in (True, False):
        monkeypatch.setattr(RecoveryManager, "append_new_keys", bulk)
        appended.clear()
        logged, recovered_env = bins_logged_by_redo(disk, True, monkeypatch)
        seen = slots(recovered_env)
        info = recovered_env.recovery_info
        results[bulk] = (seen, logged, info.lns_redone, info.lns_not_newer, records(recovered_env))
        assert verify_tree(recovered_env) == []
        assert bool(appended) == bulk
    assert results[True] == results[False]


def test_append_slots_refuses_a_key_not_above_the_last_slot():
    from minidb.log import LSN
    from minidb.logstore.tree.bin import BIN

    node = BIN(1, 2)
    node.append_slots([b"a", b"c"], [LSN(1, 1), LSN(1, 2)], [False, False], [b"x", b"y"])
    node.append_slots([], [], [], [])
    assert (node.keys, node.version) == ([b"a", b"c"], 2)
    with pytest.raises(ValueError, match="not above the last slot"):
        node.append_slots([b"c"], [LSN(1, 3)], [False], [b"z"])
