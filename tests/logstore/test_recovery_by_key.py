"""Recovery's twin redoes by key (``minidb/fast/logstore/recovery/manager.py``): what it must get right.

The agreement scenarios (``tests/agreement/scn_logstore.py``) hold its trees to the reference's, which
redoes one LN at a time; these tests check that their workloads reach every case redo by key treats
apart, and what the twin promises beyond the slots: a BIN overfilled by redo is cut into pieces that fit,
in one pass, each piece logged once.
"""

import random

import pytest

from minidb import impl
from minidb.fast.logstore.recovery import manager as fast
from minidb.io import CrashMode
from minidb.logstore import Environment
from minidb.logstore.recovery import node_head
from minidb.logstore.tools.verify import records, verify_tree

from tests.agreement.scn_logstore import SPLIT_SEEDS
from tests.logstore.helpers import entries, new_env, redo_workload, small_config


def test_the_scenarios_redo_repeated_keys_deletions_losers_and_appended_keys(monkeypatch):
    """The seeds of ``recovery_that_splits`` exercise what redo by key must get right: keys with several LNs
    to redo, deletions of keys no slot holds, LNs not newer than their slot, losers, and keys appended
    column by column."""
    seen = {"chain of several": 0, "deletion, no slot": 0, "not newer": 0, "losers": 0, "appended": 0}
    redo_chain, append_slots = fast.RecoveryManager._redo_chain, fast.append_slots

    def spy_chain(self, slot_lsn, chain):
        seen["chain of several"] += len(chain) > 1
        seen["deletion, no slot"] += slot_lsn is None and chain[0][2].type_name.startswith("DEL_")
        return redo_chain(self, slot_lsn, chain)

    def spy_append(bin_node, keys, *columns):
        seen["appended"] += len(keys)
        return append_slots(bin_node, keys, *columns)

    monkeypatch.setattr(fast.RecoveryManager, "_redo_chain", spy_chain)
    monkeypatch.setattr(fast, "append_slots", spy_append)
    for seed in SPLIT_SEEDS:
        disk, budget = redo_workload(seed, "splits", fresh_keys=60 if seed % 2 else 0)
        with impl.using(impl.FAST):
            info = Environment.open(disk, small_config(node_budget=budget)).recovery_info
        seen["not newer"] += info.lns_not_newer
        seen["losers"] += len(info.losers)
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


def bins_logged_by_redo(disk, which: str) -> tuple[list[int], Environment]:
    """The node ids of the BINs the redo pass logged (splits), in log order; and the recovered environment."""
    marks = {}

    def listener(phase, env):
        marks[phase] = env.log.end_lsn

    with impl.using(which):
        env = Environment.open(disk.clone(), small_config(), phase_listener=listener)
    logged = env.log.scan(marks["transactions"], marks["redo LNs"])
    return [e.values["node_id"] for e in logged if e.type_name == "BIN"], env


def test_a_bin_the_redo_overfills_is_split_until_it_fits_each_piece_logged_once():
    """200 keys after a checkpoint, into 4-slot BINs: redo by key puts them all into the one BIN first,
    then cuts it into pieces that fit; each piece is logged once, where the reference, splitting at
    every insertion, logs both halves of every split."""
    disk, env = new_env("overfill")
    db = env.database("t")
    env.checkpoint()
    rng = random.Random(5)
    written = {f"k{rng.randrange(10**6):06d}": f"v{i}" for i in range(200)}
    for key, value in written.items():
        db.put(key, value)
    env.sync()
    env.crash(CrashMode.nothing())
    by_key, recovered = bins_logged_by_redo(disk, impl.FAST)
    by_ln, _ = bins_logged_by_redo(disk, impl.ENGINE)
    assert len(by_key) == len(set(by_key)) > 200 // 4
    assert len(by_ln) > len(set(by_ln))  # the reference logs some BINs more than once
    assert verify_tree(recovered) == []
    assert records(recovered)["t"] == {k.encode(): v.encode() for k, v in written.items()}
    assert all(n.n_entries <= 4 for n in recovered.evictor.resident_nodes())


def test_an_overfilled_bin_is_cut_in_one_pass_each_slot_moved_once(monkeypatch):
    """Redo by key fills one BIN with every new key, then cuts it into pieces that fit. Halving it, and each
    half, until they fit would move each slot once per halving (log n times), and each split would look its
    node up in a parent growing to as many slots as there are pieces (pieces² in all): the work grew faster
    than the log. Counted: each slot of an overfilled node moves once, and the parent slot each piece is
    looked up in, when it is logged, is one of at most ``node_max_entries``."""
    from minidb.logstore.tree.in_node import IN

    disk, env = new_env("cut")
    db = env.database("t")
    env.checkpoint()
    written = {f"k{i:05d}": "v" for i in range(2_000)}
    for key, value in written.items():
        db.put(key, value)
    env.sync()
    env.crash(CrashMode.nothing())
    moved, looked_up = [], []
    move_bin, move_in, index_of_child = fast.BIN.move_upper_half, IN.move_upper_half, IN.index_of_child

    def spy_move(move):
        def spy(self, sibling, mid):
            moved.append(len(self.keys) - mid)
            return move(self, sibling, mid)
        return spy

    def spy_index(self, node_id):
        looked_up.append(len(self.node_ids))
        return index_of_child(self, node_id)

    monkeypatch.setattr(fast.BIN, "move_upper_half", spy_move(move_bin))
    monkeypatch.setattr(IN, "move_upper_half", spy_move(move_in))
    monkeypatch.setattr(IN, "index_of_child", spy_index)
    with impl.using(impl.FAST):
        recovered = Environment.open(disk.clone(), small_config())
    user_bins = len(written) // 4
    assert user_bins <= len(moved) and sum(moved) < 2 * len(written)  # each slot once (and the INs' slots)
    assert max(looked_up) <= small_config().node_max_entries + 1
    assert verify_tree(recovered) == []
    assert records(recovered)["t"] == {k.encode(): v.encode() for k, v in written.items()}


def test_piece_starts_are_the_halving_pieces():
    assert fast.piece_starts(4, 4) == [0]
    assert fast.piece_starts(5, 4) == [0, 2]
    assert fast.piece_starts(17, 4) == [0, 2, 4, 6, 8, 10, 12, 14]  # 8 pieces: 4 would leave one of 5
    assert fast.piece_starts(16, 4) == [0, 4, 8, 12]


def test_append_slots_refuses_a_key_not_above_the_last_slot():
    from minidb.log import LSN
    from minidb.logstore.tree.bin import BIN

    node = BIN(1, 2)
    fast.append_slots(node, [b"a", b"c"], [LSN(1, 1), LSN(1, 2)], [False, False], [b"x", b"y"])
    fast.append_slots(node, [], [], [], [])
    assert (node.keys, node.version) == ([b"a", b"c"], 2)
    with pytest.raises(ValueError, match="not above the last slot"):
        fast.append_slots(node, [b"c"], [LSN(1, 3)], [False], [b"z"])


def test_last_of_each_takes_each_keys_last_ln_and_the_chains_of_repeated_keys():
    """Redo sorts a database's LNs by key, stably: :func:`last_of_each` then takes each key's last LN, and
    every LN (in log order) of the keys with more than one."""
    log = [(None, key, f"entry {n}", None, n) for n, key in enumerate([b"b", b"a", b"c", b"b", b"b", b"a"])]
    redos = sorted(log, key=lambda redo: redo[1])
    lasts, several = fast.last_of_each(redos)
    assert [(redo[1], redo[4]) for redo in lasts] == [(b"a", 5), (b"b", 4), (b"c", 2)]
    assert {key: [redo[4] for redo in chain] for key, chain in several.items()} == {b"a": [1, 5], b"b": [0, 3, 4]}
    assert fast.last_of_each([]) == ([], {})


def test_the_sizes_the_read_notes_are_those_of_every_node_entry_counted():
    """The twin counts utilization without noting node sizes again: the read noted those of the entries
    whose type is in SIZED_CODES, which must be every type ``UtilizationTracker._count`` notes a size for."""
    from minidb.logstore.recovery.reading import SIZED_CODES
    assert fast._NODE_TYPE_CODES == SIZED_CODES
