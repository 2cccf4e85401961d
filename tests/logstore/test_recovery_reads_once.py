"""Recovery's twin reads the log since the checkpoint once, with the collector paused.

Opening the log checks its last file entry by entry to find where it ends; the twin
(``minidb/fast/logstore/recovery/manager.py``) opens the log keeping those checked entries and takes
them (``LogManager.take_opening_scan``) for its search of the last CkptEnd and its forward read,
instead of reading and checking the file again. The reference reads the file again; the agreement
scenarios (``tests/agreement/scn_logstore.py``) hold the two to the same recovery.
"""

import gc

import pytest

from minidb import impl
from minidb.errors import LogError
from minidb.log.manager import LogManager
from minidb.logstore import Environment

from tests.logstore.helpers import collections_during, new_env, small_config


def test_recovery_takes_the_opening_scan_before_anything_is_written():
    """The environment opens its log keeping the last file's checked entries, and recovery takes them
    first thing: none is left afterwards, and one left untaken would make the first write fail."""
    disk, env = new_env("taken")
    db = env.database("t")
    for i in range(30):
        db.put(f"k{i:02d}", "v")
    env.close()
    with impl.using(impl.FAST):
        env = Environment.open(disk, small_config())
        assert env.log.take_opening_scan() is None
        env.close()
        with pytest.MonkeyPatch.context() as monkeypatch:
            monkeypatch.setattr(LogManager, "take_opening_scan", lambda self: None)  # left with the log
            with pytest.raises(LogError, match="take_opening_scan"):
                Environment.open(disk, small_config())


def test_the_checked_entries_are_what_recovery_reads():
    """Recovery of a log whose last file holds everything since the checkpoint reads no byte of it again."""
    disk, env = new_env("read-once")
    db = env.database("t")
    env.checkpoint()
    for i in range(60):
        db.put(f"k{i:02d}", "v")
    env.sync()
    env.log.close()
    reads = []
    with pytest.MonkeyPatch.context() as monkeypatch, impl.using(impl.FAST):
        monkeypatch.setattr("minidb.log.reader.LogReader.file_bytes", lambda self, n: reads.append(n))
        env = Environment.open(disk, small_config())
    assert reads == []
    assert sorted(env.database("t").keys()) == [f"k{i:02d}".encode() for i in range(60)]


def test_the_collector_is_paused_while_recovery_runs_and_back_after():
    disk, env = new_env("collector")
    env.database("t").put("k", "v")
    env.close()
    during = []
    with impl.using(impl.FAST):
        env = Environment.open(disk, small_config(), phase_listener=lambda phase, env: during.append(gc.isenabled()))
    assert during and not any(during)
    assert gc.isenabled()
    env.close()


def test_the_collector_runs_once_after_opening_and_recovery():
    """Opening the log keeps an (offset, header) pair per entry of its last file, and recovery an entry per
    entry read: with the collector on, its collections would walk all of them again and again, more often
    the longer the log. It is off from the opening scan to the end of recovery, one block
    (``RecoveryManager.opening``): with the collector back between the two, its first collection walked
    every pair before recovery had taken them. So the only collection is the one that follows the pause
    (the first allocation after the collector comes back on)."""
    disk, env = new_env("opening-collections")
    db = env.database("t")
    for i in range(3_000):
        db.put(f"k{i:05d}", "v")
    env.close()
    with impl.using(impl.FAST):
        Environment.open(disk, small_config(read_only=True)).close()  # the twins imported
    with impl.using(impl.FAST):
        env, collections = collections_during(lambda: Environment.open(disk, small_config()))
    assert len(collections) <= 1
    assert len(env.database("t").keys()) == 3_000
    env.close()
