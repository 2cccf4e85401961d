"""Crafted nodes with a valid checksum: verify names the node, its LSN and its keys; reads never return
another record's data (item 8)."""

import pytest

from minidb.cli import main
from minidb.io import OSDisk, SimDisk, crash_points
from minidb.log.header import pack_entry
from minidb.logstore import Environment, TreeError
from minidb.logstore.logdef import BIN_ENTRY
from minidb.logstore.tools.verify import utilization_totals_problems, verify_log_trees, verify_tree

from tests.logstore.helpers import new_env, small_config


def dir_bytes(path):
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


@pytest.fixture
def env_dir(tmp_path):
    """accounts: BIN [alice bob] and BIN [carol dave erin] under one root, all checkpointed."""
    path = tmp_path / "env"
    env = Environment.open(path, small_config())
    db = env.database("accounts")
    for name in ("alice", "bob", "carol", "dave", "erin"):
        db.put(name, f"{name}'s money")
    env.close()
    return path


def last_bins(path):
    """The last logged version of each BIN of accounts, by node id."""
    env = Environment.open(path, small_config())
    bins = {e["node_id"]: e for e in env.log.scan() if e.type_name == "BIN" and e["db_id"] == 2}
    env.close()
    return bins


def rewrite(path, entry, change):
    """Rewrite the BIN entry with ``change`` applied to its entries and range: same size, valid checksum."""
    values = dict(entry.values)
    values["entries"] = [dict(e) for e in values["entries"]]
    change(values)
    item = BIN_ENTRY.encode(values)
    assert len(item) == entry.header.item_size
    raw = pack_entry(entry.header.type_code, entry.header.flags, entry.header.prev_offset, item, entry.header.vlsn)
    file = path / f"{entry.lsn.file:08d}.jdb"
    data = bytearray(file.read_bytes())
    data[entry.lsn.offset:entry.lsn.offset + len(raw)] = raw
    file.write_bytes(bytes(data))


def swap_first_two_keys(values):
    first, second = values["entries"][0], values["entries"][1]
    first["key"], second["key"] = second["key"], first["key"]


def test_item8_verify_reports_two_swapped_keys_of_a_bin(env_dir, capsys):
    left = min(last_bins(env_dir).values(), key=lambda e: e["node_id"])
    assert [e["key"] for e in left["entries"]] == [b"alice", b"bob"]
    rewrite(env_dir, left, swap_first_two_keys)
    before = dir_bytes(env_dir)
    expected = (f"accounts: BIN {left['node_id']} (db 2, level 1) at {left.lsn}: slot 1 key b'alice' is not above "
                f"slot 0 key b'bob'; keys [b'bob', b'alice']")
    assert main(["verify", str(env_dir)]) == 1  # the log itself is fine: every checksum is valid
    assert capsys.readouterr().out == f"problem: {expected}\n"
    assert verify_log_trees(OSDisk(env_dir)) == [expected]
    assert dir_bytes(env_dir) == before  # verify reads only
    env = Environment.open(env_dir, small_config())
    assert verify_tree(env) == [expected]
    db = env.database("accounts")
    for key in ("alice", "bob"):  # never the other record's money
        with pytest.raises(TreeError, match=rf"BIN {left['node_id']} \(db 2, level 1\) at {left.lsn}: slot 1 key"):
            db.get(key)
    env.close()


def test_item8_verify_reports_a_child_whose_keys_leave_its_parents_bounds(env_dir, capsys):
    right = max(last_bins(env_dir).values(), key=lambda e: e["node_id"])
    assert right["id_key"] == b"carol"

    def move_below_the_separator(values):  # in order within itself, but the parent gives it [carol, +inf)
        values["id_key"] = values["entries"][0]["key"] = b"aaaaa"

    rewrite(env_dir, right, move_below_the_separator)
    assert main(["verify", str(env_dir)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"problem: accounts BIN {right['node_id']} at {right.lsn}: low bound b'aaaaa', but its "
                          "parent slot starts at b'carol' (and 1 more)")
    problems = verify_log_trees(OSDisk(env_dir))
    assert problems[1] == (f"accounts BIN {right['node_id']} at {right.lsn}: slot 0 key b'aaaaa' lies outside the "
                           "node's range [b'carol', None); keys [b'aaaaa', b'dave', b'erin']")


def test_item8_a_resident_node_is_checked_too():
    env = Environment.open(SimDisk("resident"), small_config())
    db = env.database("accounts")
    for name in ("alice", "bob", "carol"):
        db.put(name, "1")
    assert verify_tree(env) == []
    leaf = db.impl.root.targets[0]
    leaf.keys[0], leaf.keys[1] = leaf.keys[1], leaf.keys[0]
    assert verify_tree(env) == [f"accounts BIN {leaf.node_id} at {leaf.last_logged_lsn}: slot 1 key b'alice' is not "
                                "above slot 0 key b'bob'; keys [b'bob', b'alice', b'carol']"]


def test_a_healthy_environment_verifies(env_dir, capsys):
    assert verify_log_trees(OSDisk(env_dir)) == []
    assert main(["verify", str(env_dir)]) == 0
    assert capsys.readouterr().out.startswith("ok: ")


def test_item8_a_slot_pointing_at_another_keys_record_is_an_error_not_its_data(env_dir):
    left = min(last_bins(env_dir).values(), key=lambda e: e["node_id"])

    def swap_first_two_lsns(values):  # the keys stay in order: only the records they point at are swapped
        first, second = values["entries"][0], values["entries"][1]
        first["lsn"], second["lsn"] = second["lsn"], first["lsn"]

    rewrite(env_dir, left, swap_first_two_lsns)
    env = Environment.open(env_dir, small_config())
    with pytest.raises(TreeError, match=rf"BIN {left['node_id']} \(db 2, level 1\) slot 0 holds key b'alice', but its "
                                        rf"LN at 0x1/0x[0-9a-f]+ is the record of key b'bob'"):
        env.database("accounts").get("alice")
    env.close()


def test_the_read_only_check_places_a_checkpoints_ins_as_recovery_does():
    """A checkpoint whose highest flush level is below the root deletes files only the old root's slots name."""
    from tests.logstore.test_cleaner import churn

    disk, env = new_env("verify-after-clean", file_max=4096)
    churn(env)
    env.checkpoint()
    for number in range(env.log.head, env.cleaner.recovery_horizon().file):
        env.cleaner.clean_file(number)
    result = env.checkpoint()
    assert "step 4: highest flush level of accounts: 2" in result.trace
    assert env.db_tree.get("accounts").root.level == 4
    assert "step 9: cleaner: deleted files: 1, 2, 3, 4" in result.trace
    assert verify_log_trees(disk) == []


def test_the_utilization_totals_kept_by_file_bytes_find_what_a_scan_of_the_log_finds(monkeypatch):
    """Given what earlier checks scanned, the check scans a file only for bytes it has not seen (the crash
    images of one history share most files) and finds what scanning the whole log finds, wrong totals too."""
    disk, env = new_env(file_max=1500)
    db = env.database("t")
    for i in range(60):
        db.put(f"k{i:02d}", "v" * (i % 7 * 10))
        if i % 20 == 19:
            env.checkpoint()
    env.close()
    scanned: dict = {}
    images = [point.disk for point in crash_points(disk, start=len(disk.events) - 30, torn_variants=0)]
    for image in images:
        recovered = Environment.open(image, small_config(file_max=1500))
        assert utilization_totals_problems(recovered, scanned) == utilization_totals_problems(recovered) == []
        summary = recovered.utilization.summary(1)
        summary.total_size += 1
        assert utilization_totals_problems(recovered, scanned) == utilization_totals_problems(recovered) != []
    reads = []
    scan = type(recovered.log).scan
    monkeypatch.setattr(type(recovered.log), "scan", lambda log, *a, **k: reads.append(a) or scan(log, *a, **k))
    assert utilization_totals_problems(recovered, scanned) != [] and reads == []  # every file's bytes seen before
    assert len({number for number, _ in scanned}) < len(scanned) < len(images) * len({n for n, _ in scanned})
