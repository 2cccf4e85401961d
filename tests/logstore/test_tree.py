"""The B+tree: get, put, delete, splits that propagate up, cursors, eviction and fetching."""

import random

import pytest

from minidb.errors import UserError
from minidb.fast.logstore.recovery.manager import insert_slots
from minidb.io import SimDisk
from minidb.log import LSN, NULL_LSN
from minidb.logstore import Environment
from minidb.logstore.tools.inspect import tree_view
from minidb.logstore.tools.verify import verify_tree
from minidb.logstore.tree.bin import BIN

from tests.logstore.helpers import entries, fill, keys, new_env, small_config


def test_put_get_update_delete():
    _, env = new_env()
    db = env.database("t")
    first = db.put("alice", "100")
    assert db.get("alice") == b"100"
    second = db.put(b"alice", b"90")
    assert second > first and db.get("alice") == b"90"
    assert db.get("nobody") is None
    gone = db.delete("alice")
    assert gone is not None and db.get("alice") is None
    assert db.delete("alice") is None  # nothing left to delete: nothing logged
    assert db.delete("nobody") is None
    kinds = [(e.type_name, e["key"]) for e in entries(env, "LN", "DEL_LN")]
    assert kinds == [("LN", b"alice"), ("LN", b"alice"), ("DEL_LN", b"alice")]
    ln1, ln2, deleted = entries(env, "LN", "DEL_LN")
    assert ln1["prev_lsn"] == NULL_LSN and ln2["prev_lsn"] == first and deleted["prev_lsn"] == second


def test_nothing_is_updated_in_place():
    disk, env = new_env()
    db = env.database("t")
    db.put("k", "one")
    env.checkpoint()
    image = {name: disk.open(name).read_all() for name in disk.list()}
    db.put("k", "two")
    env.checkpoint()
    for name, old in image.items():
        now = disk.open(name).read_all()
        assert now[: len(old)] == old, f"{name} was changed before its end"


def test_splits_propagate_up_and_the_root_changes():
    _, env = new_env()
    db = env.database("t")
    roots = set()
    for i, key in enumerate(keys(40)):
        db.put(key, "v")
        roots.add(env.db_tree.get("t").root.node_id)
        assert verify_tree(env) == [], f"after {i + 1} puts"
    view = tree_view(env, "t")
    assert view.height() == 4 and len(roots) == 3  # the root split twice
    assert env.stats["nRootSplits"] == 2 and env.stats["nSplits"] > 10
    assert all(n.n_entries <= 4 for n in env.evictor.resident_nodes())
    assert db.keys() == [k.encode() for k in keys(40)]
    # Split halves are logged provisionally at once.
    assert entries(env, "BIN") and all(e.provisional.name == "YES" for e in entries(env, "BIN"))


def test_random_order_inserts_and_deletes_keep_a_valid_tree():
    import random

    rng = random.Random(7)
    _, env = new_env()
    db = env.database("t")
    model = {}
    for _ in range(300):
        key = f"k{rng.randrange(80):03d}"
        if rng.random() < 0.3:
            db.delete(key)
            model.pop(key.encode(), None)
        else:
            value = f"v{rng.randrange(1000)}"
            db.put(key, value)
            model[key.encode()] = value.encode()
    assert dict(db.items()) == model
    assert verify_tree(env) == []


def test_cursor_scans_in_key_order_with_start_and_stop():
    _, env = new_env()
    db = env.database("t")
    fill(db, 30)
    db.delete("key005")
    db.delete("key006")
    all_keys = [k.encode() for k in keys(30) if k not in ("key005", "key006")]
    assert db.keys() == all_keys
    assert [k for k, _ in db.items(start="key010", stop="key020")] == [k.encode() for k in keys(20)[10:]]
    cursor = db.cursor()
    assert cursor.seek("key004a") == (b"key007", b"v-key007")
    assert cursor.next()[0] == b"key008"
    assert cursor.seek("zzz") is None and cursor.next() is None


def test_a_cursor_survives_eviction_and_changes_between_steps():
    _, env = new_env(node_budget=4)
    db = env.database("t")
    fill(db, 30)
    cursor = db.cursor()
    seen = [cursor.first()[0]]
    while (item := cursor.next()) is not None:
        seen.append(item[0])
        if item[0] == b"key010":
            db.put("key010a", "inserted behind the cursor")
            db.delete("key012")
    assert seen == sorted(seen) and b"key010a" in seen and b"key012" not in seen
    assert len(seen) == 30


def test_a_small_node_budget_evicts_and_fetches_back():
    _, env = new_env(node_budget=5)
    db = env.database("t")
    fill(db, 60)
    assert env.evictor.resident_count() <= 5 + 3  # the roots of the three trees are never evicted
    assert env.evictor.stats["nNodesEvicted"] > 10 and env.evictor.stats["nDirtyNodesEvicted"] > 0
    fetched = env.stats["nINsFetched"]
    assert all(db.get(k) == f"v-{k}".encode() for k in keys(60))
    assert env.stats["nINsFetched"] > fetched
    assert verify_tree(env) == []


def test_an_evicted_bin_is_read_back_from_the_log():
    _, env = new_env()
    db = env.database("t")
    fill(db, 10)
    env.checkpoint()
    db.put("key003", "v-key003")  # dirty: eviction logs it
    bin_node = env.db_tree.get("t").tree.search(b"key003")
    lsn = env.evictor.evict(bin_node)
    assert not bin_node.resident and lsn is not None
    assert env.evictor.evict(env.db_tree.get("t").tree.search(b"key009")) is None  # clean: just dropped
    assert db.get("key003") == b"v-key003"
    again = env.db_tree.get("t").tree.search(b"key003")
    assert again is not bin_node and again.last_logged_lsn == lsn


def test_roots_and_nodes_with_resident_children_are_not_evicted():
    _, env = new_env()
    db = env.database("t")
    fill(db, 10)
    root = env.db_tree.get("t").root
    with pytest.raises(ValueError, match="cannot be evicted"):
        env.evictor.evict(root)


def test_deleted_slots_are_compressed_when_the_bin_is_logged():
    _, env = new_env()
    db = env.database("t")
    fill(db, 3)
    db.delete("key001")
    bin_node = env.db_tree.get("t").tree.search(b"key001")
    assert b"key001" in bin_node.keys  # known deleted, still in the slot
    env.checkpoint()
    assert b"key001" not in bin_node.keys
    assert env.stats["nSlotsCompressed"] == 1


def test_keys_and_data_must_be_bytes_or_str():
    _, env = new_env()
    db = env.database("t")
    with pytest.raises(UserError, match="key must be bytes or str"):
        db.put(3, "x")
    with pytest.raises(UserError, match="data must be bytes or str"):
        db.put("k", None)
    assert db.keys() == []


def test_real_files_round_trip(tmp_path):
    env = Environment.open(tmp_path / "env", small_config())
    db = env.database("t")
    fill(db, 25)
    env.close()
    again = Environment.open(tmp_path / "env", small_config())
    assert again.database("t", create=False).keys() == [k.encode() for k in keys(25)]
    again.close()


def test_two_databases_are_separate_trees():
    _, env = new_env()
    a, b = env.database("a"), env.database("b")
    a.put("k", "in a")
    b.put("k", "in b")
    assert a.get("k") == b"in a" and b.get("k") == b"in b"
    assert env.database_names() == ["a", "b"]
    assert env.database_names(internal=True) == ["_utilization", "a", "b"]
    disk = SimDisk("x")
    assert disk.list() == []


@pytest.mark.parametrize("seed", range(20))
def test_insert_slots_leaves_what_inserting_one_by_one_leaves(seed):
    """Redo by key's ``insert_slots`` (the recovery twin's): new keys placed against a BIN as it was, then inserted together (few into many: one by one from
    the last; many into few: one merge), give the slots of inserting each in key order, found again."""
    rng = random.Random(seed)
    pool = rng.sample(range(10_000), rng.randint(0, 60))
    present, new = sorted(pool[: rng.randint(0, len(pool))]), pool
    new = sorted(set(new) - set(present))

    def filled():
        node = BIN(1, 1)
        for i, k in enumerate(present):
            node.insert_slot(i, b"%05d" % k, LSN(1, k), k % 3 == 0, b"old")
        return node

    one_by_one, together = filled(), filled()
    slots = [(b"%05d" % k, LSN(2, k), k % 5 == 0, b"new%d" % k) for k in new]
    for key, lsn, deleted, record in slots:
        one_by_one.insert_slot(one_by_one.find(key)[0], key, lsn, deleted, record)
    insert_slots(together, [(together.find(key)[0], key, lsn, deleted, record) for key, lsn, deleted, record in slots])
    assert (together.keys, together.lsns, together.known_deleted, together.records) == (
        one_by_one.keys, one_by_one.lsns, one_by_one.known_deleted, one_by_one.records)
    assert together.version == one_by_one.version
