"""A BIN read back from the log is folded: a get decodes only the slots its search probes (tree/slots.py)."""

import pytest

from minidb.io import SimDisk
from minidb.log import lsn as lsn_module
from minidb.logstore import Environment, TreeError
from minidb.logstore.tree.slots import SlotBytes

from tests.logstore.helpers import small_config

SLOTS = 100


def one_full_bin(disk: SimDisk) -> Environment:
    """A database of 100 records in one BIN, checkpointed, opened again: nothing of its tree resident."""
    config = small_config(node_max_entries=128)
    env = Environment.open(disk, config)
    db = env.database("t")
    for i in range(SLOTS):
        db.put(f"k{i:03d}", f"value {i}")
    env.close()
    return Environment.open(disk, config)


def fetched_bin(db):
    root = db.impl.root
    return root.targets[0] if root is not None else None


def test_a_get_that_fetches_a_bin_decodes_the_slots_it_probes_not_all(monkeypatch):
    env = one_full_bin(SimDisk("get"))
    db = env.database("t")
    unpacked = []
    real = lsn_module.LSN.unpack.__func__
    monkeypatch.setattr(lsn_module.LSN, "unpack", classmethod(lambda cls, v: unpacked.append(v) or real(cls, v)))
    assert db.get("k042") == b"value 42"
    # LSNs made: the found slot's, the BIN's own prev_lsn, the LN's (before: one per slot, 100 more)
    assert len(unpacked) < 10
    bin_node = fetched_bin(db)
    assert bin_node.slot_bytes is not None and bin_node.n_entries == SLOTS  # still folded
    # the search probed at most 7 keys of 100 (a bisection), then one key, one LSN, one flag of the found slot
    assert bin_node.slot_bytes.decoded <= 7 + 3
    env.close()


def test_unfolding_gives_the_slots_the_entry_holds():
    env = one_full_bin(SimDisk("unfold"))
    db = env.database("t")
    db.get("k007")
    bin_node = fetched_bin(db)
    logged = env.log.read(bin_node.last_logged_lsn).values["entries"]
    assert bin_node.keys == [e["key"] for e in logged]  # asking for the lists unfolds it
    assert bin_node.slot_bytes is None
    assert bin_node.lsns == [e["lsn"] for e in logged]
    assert bin_node.known_deleted == [e["known_deleted"] for e in logged]
    db.put("k007", "changed")  # a folded BIN's first change works on the lists
    assert db.get("k007") == b"changed" and len(db.keys()) == SLOTS
    env.close()


def test_a_search_checks_the_keys_it_probes_and_a_miss_checks_them_all():
    keys = [b"k10", b"k20", b"k30", b"k40", b"k50", b"k60", b"k70", b"k80", b"k90"]
    item = len(keys).to_bytes(4, "little") + b"".join(
        len(k).to_bytes(4, "little") + k + (0x100000000 + 0x40 * i).to_bytes(8, "little") + b"\0"
        for i, k in enumerate(keys))
    slots = SlotBytes(item, 0)
    assert slots.search(b"k70", b"", None) == (6, True, True)  # the module's worked example
    assert slots.decoded == 4
    assert slots.search(b"k65", b"", None) == (6, False, True)
    swapped = SlotBytes(item.replace(b"k60", b"k4X"), 0)  # slot 5 below slot 4 (k50): out of order
    assert swapped.search(b"k55", b"", None)[2] is False
    assert swapped.search(b"k90", b"", None) == (8, True, True)  # the damage lies off this search's path


def test_a_damaged_fetched_bin_never_answers_no_record_without_checking_every_key(monkeypatch):
    disk = SimDisk("damaged")
    env = one_full_bin(disk)
    db = env.database("t")
    assert db.get("k099") == b"value 99"
    bin_node = fetched_bin(db)
    slots = bin_node.slot_bytes
    pos = slots.starts[1] + 4  # slot 1's key k001 becomes k000: equal to slot 0's, off the path to k099
    slots.item = slots.item[:pos] + b"k000" + slots.item[pos + 4:]
    assert db.get("k099") == b"value 99"  # a hit reads its own record (its LN's key is checked)
    with pytest.raises(TreeError, match=r"slot 1 key b'k000' is not above slot 0 key b'k000'"):
        db.get("k0995")  # a miss: every key is checked first
    env.close()


def test_a_fetched_bin_searched_again_and_again_unfolds():
    from minidb.logstore.tree.bin import UNFOLD_AFTER_SEARCHES

    env = one_full_bin(SimDisk("again"))
    db = env.database("t")
    for i in range(UNFOLD_AFTER_SEARCHES):
        assert db.get(f"k{i:03d}") == f"value {i}".encode()
    bin_node = fetched_bin(db)
    assert bin_node.slot_bytes is not None
    assert db.get("k050") == b"value 50"  # one search more: a tree in memory, searched over plain lists
    assert bin_node.slot_bytes is None and bin_node.keys[50] == b"k050"
    env.close()
