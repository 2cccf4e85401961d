"""The environment: databases, bad requests (clear errors, nothing changed), closing, crashing."""

import pytest

from minidb.errors import LogError, UserError
from minidb.io import OSDisk
from minidb.logstore import DatabaseNotFoundError, Environment, EnvironmentClosedError, EnvironmentConfig

from tests.logstore.helpers import new_env, small_config


def test_database_lookup_and_names():
    _, env = new_env()
    with pytest.raises(DatabaseNotFoundError, match=r"no database named 'nope'.*user databases: none"):
        env.database("nope", create=False)
    env.database("accounts")
    with pytest.raises(DatabaseNotFoundError, match="user databases: accounts"):
        env.database("nope", create=False)
    assert env.database("accounts", create=False).name == "accounts"


@pytest.mark.parametrize("name, message", [
    ("", "non-empty"), ("_private", "only internal databases may start with '_'"), ("x" * 300, "longer than 255"),
])
def test_bad_database_names(name, message):
    _, env = new_env()
    end = env.log.end_lsn
    with pytest.raises(UserError, match=message):
        env.database(name)
    assert env.log.end_lsn == end


def test_internal_databases():
    _, env = new_env()
    vlsn = env.internal_database("_vlsn_index")
    vlsn.put("k", "v")
    assert env.db_tree.get("_vlsn_index").internal
    with pytest.raises(UserError, match="must start with '_'"):
        env.internal_database("plain")
    with pytest.raises(UserError, match="is an internal database"):
        env.database("_vlsn_index")
    assert env.database_names() == [] and "_vlsn_index" in env.database_names(internal=True)


def test_a_closed_environment_refuses_work():
    _, env = new_env()
    db = env.database("t")
    env.close()
    env.close()  # twice is fine
    for attempt in (lambda: db.put("k", "v"), lambda: db.get("k"), lambda: env.begin(), lambda: env.checkpoint(),
                    lambda: env.database("t")):
        with pytest.raises(EnvironmentClosedError, match="is closed"):
            attempt()


def test_close_refuses_while_transactions_are_open():
    _, env = new_env()
    txn = env.begin()
    with pytest.raises(UserError, match=rf"transactions {txn.id} are still open"):
        env.close()
    txn.abort()
    env.close()


def test_crash_needs_a_simulated_disk(tmp_path):
    env = Environment.open(tmp_path / "real", small_config())
    with pytest.raises(UserError, match="needs a simulated disk"):
        env.crash()
    env.close()


def test_opening_a_directory_that_is_not_a_log(tmp_path):
    (tmp_path / "00000001.jdb").write_bytes(b"this is not a log file at all")
    with pytest.raises(LogError, match="not a minidb log file"):
        Environment.open(OSDisk(str(tmp_path)), small_config())
    with pytest.raises(UserError):
        Environment.open(tmp_path / "missing", small_config(), create=False)


@pytest.mark.parametrize("setting, message", [
    (dict(node_max_entries=2), "too small"), (dict(node_budget=0), "must be positive"),
    (dict(checkpoint_bytes_interval=0), "must be positive"), (dict(durability="sync"), "must be a Durability"),
])
def test_bad_configuration(setting, message):
    with pytest.raises(UserError, match=message):
        EnvironmentConfig(**setting)
