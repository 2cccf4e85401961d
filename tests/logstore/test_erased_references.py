"""References to erased entries and to entries of the wrong type fail clearly, on every read and in verify."""

import pytest

from minidb.cli import main
from minidb.io import OSDisk
from minidb.log import LogManager
from minidb.logstore import Environment, EnvironmentFailureError, TreeError
from minidb.logstore.eraser import ERASER_STATS, erase_file, locate
from minidb.logstore.tools.verify import verify_log_trees, verify_tree
from minidb.stats import Stats

from tests.logstore.helpers import small_config
from tests.logstore.test_verify import last_bins, rewrite


@pytest.fixture
def env_dir(tmp_path):
    """accounts: alice, bob, carol; a committed transaction on dave; all checkpointed."""
    path = tmp_path / "env"
    env = Environment.open(path, small_config())
    db = env.database("accounts")
    for name in ("alice", "bob", "carol"):
        db.put(name, f"{name}'s money")
    with env.begin() as txn:
        db.put("dave", "dave's money", txn=txn)
    env.checkpoint()
    env.log.force_flip()  # so the records above lie in a file the data eraser may erase: not the last one
    env.close()
    return path


def logged(path, type_name, **match):
    """The entries of that type (and those field values) in the log, read only."""
    log = LogManager(OSDisk(path), readonly=True)
    found = [e for e in log.scan() if e.type_name == type_name and all(e.values[k] == v for k, v in match.items())]
    log.close()
    return found


def lsn_of(path, type_name, **match):
    return logged(path, type_name, **match)[-1].lsn


def erase(path, lsn):
    """What the data eraser does to an entry, through its own write protocol: the erased form."""
    disk = OSDisk(path)
    with disk.open(f"{lsn.file:08x}.jdb") as f:
        buf = f.read_all()
    erase_file(disk, lsn.file, locate(buf, [lsn.offset]), Stats("Eraser", ERASER_STATS))


def test_reading_an_erased_record_fails_naming_the_lsn_and_verify_reports_it(env_dir, capsys):
    lsn = lsn_of(env_dir, "LN", key=b"alice")
    erase(env_dir, lsn)
    env = Environment.open(env_dir, small_config())
    db = env.database("accounts")
    assert env.is_entry_erased(lsn)
    assert not env.is_entry_erased(lsn_of(env_dir, "LN", key=b"bob"))
    with pytest.raises(EnvironmentFailureError, 
                       match=rf"record b'alice' \(BIN \d+ \(db 2, level 1\) slot 0\) refers to the erased entry at {lsn}"):
        db.get("alice")
    assert env.is_entry_erased(lsn)
    with pytest.raises(EnvironmentFailureError, match=r"is invalid \(record b'alice' .*\); close it and open it again"):
        db.get("bob")  # JE invalidates the environment: nothing more until it is opened again
    leaf = next(b for b in last_bins(env_dir).values() if b["entries"][0]["key"] == b"alice")
    expected = f"accounts BIN {leaf['node_id']} slot 0 refers to the erased entry at {lsn}: its data is gone"
    assert verify_tree(env) == [expected]
    before = {p.name: p.read_bytes() for p in env_dir.iterdir()}
    env.close()  # no checkpoint: nothing is written
    assert {p.name: p.read_bytes() for p in env_dir.iterdir()} == before
    env = Environment.open(env_dir, small_config())
    assert env.database("accounts").get("bob") == b"bob's money"
    with pytest.raises(EnvironmentFailureError, match=str(lsn)):
        dict(env.database("accounts").items())  # a cursor reads through the same fetch
    env.close()
    assert verify_log_trees(OSDisk(env_dir)) == [expected]
    assert main(["verify", str(env_dir)]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == f"problem: {expected}"


def test_a_slot_pointing_at_a_commit_is_never_returned_as_data(env_dir, capsys):
    commit = lsn_of(env_dir, "Commit")
    leaf = next(b for b in last_bins(env_dir).values() if b["entries"][0]["key"] == b"alice")

    def point_bob_at_the_commit(values):
        values["entries"][1]["lsn"] = commit

    rewrite(env_dir, leaf, point_bob_at_the_commit)
    expected = (f"accounts BIN {leaf['node_id']} slot 1 refers to a Commit entry at {commit}, not a DEL_LN or "
                "DEL_LN_TX or LN or LN_TX")
    assert verify_log_trees(OSDisk(env_dir)) == [expected]
    assert main(["verify", str(env_dir)]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == f"problem: {expected}"
    env = Environment.open(env_dir, small_config())
    with pytest.raises(TreeError, match=rf"slot 1\) refers to a Commit entry at {commit}"):
        env.database("accounts").get("bob")
    assert env.database("accounts").get("alice") == b"alice's money"
    env.close()


def test_a_mapping_tree_slot_pointing_at_a_user_ln_is_reported(env_dir):
    user_ln = lsn_of(env_dir, "LN", key=b"alice")
    leaf = logged(env_dir, "BIN", db_id=0)[-1]
    index = [e["key"] for e in leaf["entries"]].index(b"accounts")

    def point_at_a_user_ln(values):
        values["entries"][index]["lsn"] = user_ln

    rewrite(env_dir, leaf, point_at_a_user_ln)
    assert verify_log_trees(OSDisk(env_dir)) == [
        f"_mapping BIN {leaf['node_id']} slot {index} refers to a LN entry at {user_ln}, not a MapLN"]
