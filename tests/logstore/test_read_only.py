"""A log store on a full disk: reads write nothing, and a read-only open writes not a byte."""

from __future__ import annotations

import pytest

from minidb.errors import UserError
from minidb.io import CrashMode, OSDisk, SimDisk
from minidb.logstore import DataEraser, Environment, ReadOnlyEnvironmentError
from minidb.replication import ReplicatedEnvironment

from tests.logstore.helpers import fill, small_config

BUDGET = {"node_budget": 12, "buffer_size": 512}  # eviction after every operation; a small log buffer
KEEP_EVERYTHING = CrashMode.everything()


def full(disk: SimDisk) -> None:
    """No byte more fits on the disk."""
    disk.capacity = sum(disk.size(name) for name in disk.list())
    assert disk.free_space() == 0


def written_env(name: str, crash: CrashMode | None = KEEP_EVERYTHING) -> tuple[SimDisk, list[str]]:
    """An environment with 120 records in ``t``, 40 of them rewritten after the last checkpoint (dirty nodes
    recovery must rebuild and split), crashed (or closed with ``crash=None``)."""
    disk = SimDisk(name)
    env = Environment.open(disk, small_config(**BUDGET))
    db = env.database("t")
    written = fill(db, 120)
    env.checkpoint()
    for key in written[:40]:
        db.put(key, "again")
    env.sync()
    if crash is None:
        env.close()
    else:
        env.crash(crash)
    return disk, written


def read_only(disk, **overrides) -> Environment:
    return Environment.open(disk, small_config(**{**BUDGET, "read_only": True, **overrides}))


def test_gets_on_a_full_disk_succeed_and_lose_nothing():
    disk = SimDisk("gets")
    env = Environment.open(disk, small_config(**BUDGET))
    db = env.database("t")
    written = fill(db, 120)
    for key in written[:40]:
        db.put(key, "again")  # dirty BINs, which an eviction has to log
    env.sync()
    full(disk)
    events = len(disk.events)
    assert [db.get(key) for key in written[:40]] == [b"again"] * 40
    assert all(db.get(key) == f"v-{key}".encode() for key in written[40:])
    assert len(dict(db.items())) == 120
    assert len(disk.events) == events  # the disk took nothing: the log buffer could not be written out
    assert env.evictor.stats["nEvictionsDeferred"] > 0
    disk.capacity = None  # space freed: writes go on, and nothing the reads kept resident is lost
    db.put("after", "x")
    env.close()
    again = Environment.open(disk, small_config(**BUDGET))
    assert len(dict(again.database("t").items())) == 121


def test_a_read_only_open_on_a_full_disk_reads_everything_and_changes_no_byte():
    disk, written = written_env("ro")
    full(disk)
    digest, events = disk.content_digest(), len(disk.events)
    env = read_only(disk)
    db = env.database("t", create=False)
    assert [db.get(key) for key in written[:40]] == [b"again"] * 40
    assert dict(db.items()) == {k.encode(): b"again" if i < 40 else f"v-{k}".encode() for i, k in enumerate(written)}
    with env.begin() as txn:  # a transaction that only reads commits, logging nothing
        assert db.get(written[50], txn=txn) == f"v-{written[50]}".encode()
    env.sync()
    env.close()
    assert disk.content_digest() == digest and len(disk.events) == events


@pytest.mark.parametrize("write", ["put", "delete", "new database", "checkpoint", "clean", "eraser"])
def test_a_read_only_environment_refuses_every_write_and_changes_nothing(write):
    disk, written = written_env("refuse", crash=None)
    digest, events = disk.content_digest(), len(disk.events)
    env = read_only(disk)
    db = env.database("t", create=False)
    refused = {
        "put": lambda: db.put("k", "v"),
        "delete": lambda: db.delete(written[0]),
        "new database": lambda: env.database("new"),
        "checkpoint": env.checkpoint,
        "clean": env.clean_log,
        "eraser": lambda: DataEraser(env),
    }[write]
    with pytest.raises(ReadOnlyEnvironmentError, match="open read-only: cannot") as caught:
        refused()
    assert isinstance(caught.value, UserError)
    assert db.get(written[0]) == b"again" and "new" not in env.database_names()
    env.close()
    assert disk.content_digest() == digest and len(disk.events) == events


def test_a_torn_tail_is_ignored_read_only_and_cut_only_by_a_writable_open():
    disk, written = written_env("torn", crash=None)
    env = Environment.open(disk, small_config(**BUDGET))
    env.database("t").put("late", "x" * 300)
    env.log.flush()
    env.crash(CrashMode.torn(40))
    size = disk.size("00000001.jdb")
    ro = read_only(disk)
    assert ro.recovery_info.tail_cut is not None and ro.database("t").get(written[0]) == b"again"
    ro.close()
    assert disk.size("00000001.jdb") == size  # ignored, not cut
    events = len(disk.events)
    again = Environment.open(disk, small_config(**BUDGET))
    assert [e.size for e in disk.events[events:] if e.kind == "truncate"] == [size - 40]
    assert again.database("t").get(written[0]) == b"again"
    again.close()


def test_a_read_only_open_of_a_directory_uses_a_read_only_disk_and_creates_nothing(tmp_path):
    with pytest.raises(UserError, match="no such directory"):
        Environment.open(tmp_path / "missing", small_config(read_only=True))
    assert not (tmp_path / "missing").exists()
    env = Environment.open(tmp_path / "env", small_config())
    env.database("t").put("k", "v")
    env.close()
    before = sorted((p.name, p.read_bytes()) for p in (tmp_path / "env").iterdir())
    ro = Environment.open(tmp_path / "env", small_config(read_only=True))
    assert isinstance(ro.disk, OSDisk) and ro.disk.readonly and ro.database("t").get("k") == b"v"
    ro.close()
    assert sorted((p.name, p.read_bytes()) for p in (tmp_path / "env").iterdir()) == before


def test_an_environment_that_does_not_exist_is_not_opened_read_only():
    disk = SimDisk("empty")
    with pytest.raises(ReadOnlyEnvironmentError, match="no environment to open read-only"):
        read_only(disk)
    assert disk.list() == [] and disk.events == []


def test_the_cleaner_thread_cannot_run_read_only():
    with pytest.raises(UserError, match="run_cleaner cannot be on in a read-only environment"):
        small_config(read_only=True, run_cleaner=True)


def test_a_replicated_environment_is_refused_read_only_before_anything_is_read():
    disk = SimDisk("rep")
    ReplicatedEnvironment.open(disk, small_config()).close()
    events = len(disk.events)
    with pytest.raises(UserError, match="a replicated environment cannot be opened read-only"):
        ReplicatedEnvironment.open(disk, small_config(read_only=True))
    assert len(disk.events) == events
