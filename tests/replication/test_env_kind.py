"""A replicated environment and a plain one each refuse the other, having written nothing (item 6)."""

import pytest

from minidb.errors import UserError
from minidb.io import SimDisk
from minidb.log import NULL_LSN
from minidb.logstore import Environment, EnvironmentKindError
from minidb.logstore.mapping_tree import DbTree
from minidb.replication import ReplicatedEnvironment

from tests.replication.helpers import small_config, stream


def dir_bytes(path):
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def open_plain(where):
    return Environment.open(where, small_config())


def open_replicated(where):
    return ReplicatedEnvironment.open(where, small_config())


def fill(env, count, prefix="k"):
    db = env.database("accounts")
    for i in range(count):
        db.put(f"{prefix}{i:03d}", "v" * 40)


def test_item6_a_plain_open_of_a_replicated_environment_is_refused_and_writes_nothing(tmp_path):
    path = tmp_path / "node"
    env = open_replicated(path)
    fill(env, 60)  # several files and checkpoints: the kind is read from the checkpoint's mapping tree
    env.checkpoint()
    env.close()
    before = dir_bytes(path)
    with pytest.raises(EnvironmentKindError) as caught:
        open_plain(path)
    assert str(caught.value).startswith(f"{path} is a replicated environment (the mapping tree's own MapLN at 0x1/0x")
    assert str(caught.value).endswith("open it with ReplicatedEnvironment.open, not Environment.open; "
                                      "nothing was written")
    assert dir_bytes(path) == before
    env = open_replicated(path)  # still whole: the VLSNs go on from where they were, each used once
    last = env.range.last
    env.database("accounts").put("after", "x")
    vlsns = [v for v, _, _ in stream(env.log)]
    assert vlsns == list(range(1, last + 2))
    env.close()


def test_item6_a_replicated_open_of_a_plain_environment_is_refused_and_writes_nothing(tmp_path):
    path = tmp_path / "plain"
    env = open_plain(path)
    fill(env, 60)
    env.close()
    before = dir_bytes(path)
    with pytest.raises(EnvironmentKindError) as caught:
        open_replicated(path)
    assert str(caught.value).startswith(f"{path} is a plain (not replicated) environment (the mapping tree's own "
                                        "MapLN at 0x1/0x")
    assert "open it with Environment.open, not ReplicatedEnvironment.open" in str(caught.value)
    assert dir_bytes(path) == before
    env = open_plain(path)
    assert len(env.database("accounts").keys()) == 60
    env.close()


def test_item6_the_kind_is_recorded_once_by_the_first_open_even_if_it_crashes_before_a_checkpoint():
    disk = SimDisk("young")
    env = open_replicated(disk)
    env.database("accounts").put("k", "v")
    env.crash()  # the kind is in file 1, before any user write
    with pytest.raises(EnvironmentKindError, match="sim:young is a replicated environment"):
        open_plain(disk)
    env = open_replicated(disk)
    kinds = [e for e in env.log.scan() if e.type_name == "MapLN" and e["db_id"] == 0]
    assert [e["replicated"] for e in kinds] == [True]
    env.close()


def test_item6_the_mapping_trees_name_is_reserved():
    env = open_plain(SimDisk("reserved"))
    with pytest.raises(UserError, match="database name '_mapping' is reserved"):
        env.internal_database("_mapping")
    assert env.db_tree.replicated is False
    env.close()


@pytest.fixture
def before_the_kind_was_recorded(monkeypatch):
    """Environments written as before the change: no record of their kind, and (as then) a replicated
    database's creation logged as a local MapLN, without a VLSN."""
    write_map_ln = DbTree.write_map_ln
    monkeypatch.setattr(DbTree, "record_kind", lambda self, replicated: NULL_LSN)
    monkeypatch.setattr(DbTree, "write_map_ln", lambda self, impl, replicated=False, vlsn=None: write_map_ln(self, impl))
    yield
    monkeypatch.undo()


@pytest.mark.parametrize("replicated, write, evidence", [
    (True, lambda env: fill(env, 5), "its database 'accounts' is replicated (MapLN at 0x1/0x"),
    (True, lambda env: env.log_matchpoint(), "its log holds VLSNs: Matchpoint at 0x1/0x"),
    (False, lambda env: fill(env, 5), "its database 'accounts' is not replicated (MapLN at 0x1/0x"),
])
def test_item6_an_older_environment_is_told_by_what_it_logged(before_the_kind_was_recorded, monkeypatch,
                                                               replicated, write, evidence):
    disk = SimDisk("older")
    env = open_replicated(disk) if replicated else open_plain(disk)
    write(env)
    env.close()
    assert not [e for e in env.log.scan() if e.type_name == "MapLN" and (e["db_id"] == 0 or e.vlsn is not None)]
    monkeypatch.undo()
    before = disk.durable_bytes("00000001.jdb")
    with pytest.raises(EnvironmentKindError) as caught:
        open_plain(disk) if replicated else open_replicated(disk)
    assert evidence in str(caught.value)
    assert disk.durable_bytes("00000001.jdb") == before
    env = open_replicated(disk) if replicated else open_plain(disk)  # opens as what it is, and records it
    assert (env.env if replicated else env).db_tree.replicated is replicated
    env.close()
    with pytest.raises(EnvironmentKindError, match="the mapping tree's own MapLN"):
        open_plain(disk) if replicated else open_replicated(disk)


def test_item6_an_older_environment_that_does_not_tell_opens_as_asked(before_the_kind_was_recorded, monkeypatch):
    disk = SimDisk("untold")
    open_plain(disk).close()  # no user database, no VLSN: nothing tells the kind
    monkeypatch.undo()
    env = open_replicated(disk)
    assert "an environment whose log does not tell its kind: it opens as a replicated environment" in \
        env.recovery_info.phases[2].lines
    env.close()
    with pytest.raises(EnvironmentKindError):
        open_plain(disk)
