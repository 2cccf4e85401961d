"""Tests of exercise 11a: ``entry_verdict``, alone and plugged into the real cleaner.

``impl`` (exercises/conftest.py) is reference.py or student.py, depending on ``--exercise-impl``.
"""

from __future__ import annotations

import pytest

from minidb.io import SimDisk
from minidb.log import LSN
from minidb.logstore import Environment, EnvironmentConfig
from minidb.logstore.cleaner import cleaner as cleaner_module
from minidb.logstore.tools.verify import records

HERE, OLDER, OTHER_FILE = LSN(3, 0x120), LSN(3, 0x80), LSN(5, 0x120)


@pytest.mark.parametrize("kind", ["LN", "IN"])
def test_the_current_version_is_live(impl, kind):
    assert impl.entry_verdict(kind, HERE, HERE) == "live"


@pytest.mark.parametrize("kind", ["LN", "IN"])
@pytest.mark.parametrize("current", [OLDER, OTHER_FILE, LSN(3, 0x121), None], ids=str)
def test_any_other_version_is_obsolete(impl, kind, current):
    """A newer version elsewhere, the same offset in another file, no slot or node at all."""
    assert impl.entry_verdict(kind, HERE, current) == "obsolete"


def test_entries_that_are_not_tree_nodes_are_obsolete(impl):
    """A FileHeader, a Commit, a checkpoint entry, an erased entry: nothing points at them."""
    assert impl.entry_verdict("other", HERE, HERE) == "obsolete"
    assert impl.entry_verdict("other", HERE, None) == "obsolete"


@pytest.mark.parametrize("kind", ["LN", "IN"])
def test_the_trackers_count_is_trusted(impl, kind):
    assert impl.entry_verdict(kind, HERE, HERE, counted_obsolete=True) == "obsolete"
    assert impl.entry_verdict(kind, HERE, HERE, counted_obsolete=True, db_exists=False) == "obsolete"


@pytest.mark.parametrize("kind", ["LN", "IN"])
def test_entries_of_a_removed_database_are_dead(impl, kind):
    assert impl.entry_verdict(kind, HERE, None, db_exists=False) == "dead"


def test_the_current_version_of_a_deleted_record_is_dead(impl):
    assert impl.entry_verdict("LN", HERE, HERE, known_deleted=True) == "dead"


def test_an_older_version_of_a_deleted_record_is_obsolete(impl):
    assert impl.entry_verdict("LN", HERE, OLDER, known_deleted=True) == "obsolete"


def test_known_deletion_concerns_records_only(impl):
    assert impl.entry_verdict("IN", HERE, HERE, known_deleted=True) == "live"


def churned_env():
    config = EnvironmentConfig(file_max=4096, node_max_entries=16, checkpoint_bytes_interval=None,
                               clock=lambda: 1_700_000_000.0, trace=False)
    disk = SimDisk("exercise-11a")
    env = Environment.open(disk, config)
    db = env.database("accounts")
    for r in range(4):
        for i in range(40):
            db.put(f"k{i:03d}", f"value {r} {i} " * 3)
    for i in range(40):
        if i % 5:
            db.delete(f"k{i:03d}")
    env.checkpoint()
    env.checkpoint()
    return disk, env, config


def test_plugged_into_the_cleaner_every_record_survives_cleaning_deletion_and_reopening(impl, monkeypatch):
    disk, env, config = churned_env()
    want = records(env)
    monkeypatch.setattr(cleaner_module.VERDICT, "call", impl.entry_verdict)  # the cleaner's one call site
    done = env.clean_log()
    head = env.log.head
    env.checkpoint()
    assert done and env.log.head > head, "the cleaner cleaned and the checkpoint deleted files"
    migrated = sum(len(d.migrated) for d in done)
    assert migrated > 0, "some live LNs were migrated"
    env.close()
    assert records(Environment.open(disk, config)) == want


MUTANTS = {
    "ignores_the_tracker": {
        "entry_verdict": lambda kind, lsn, current, *, counted_obsolete=False, db_exists=True, known_deleted=False:
        "obsolete" if kind == "other" else "dead" if not db_exists else "obsolete" if current != lsn
        else "dead" if kind == "LN" and known_deleted else "live"},
    "same_file_means_live": {
        "entry_verdict": lambda kind, lsn, current, *, counted_obsolete=False, db_exists=True, known_deleted=False:
        "obsolete" if kind == "other" or counted_obsolete else "dead" if not db_exists
        else "obsolete" if current is None or current.file != lsn.file
        else "dead" if kind == "LN" and known_deleted else "live"},
    "deleted_before_current": {
        "entry_verdict": lambda kind, lsn, current, *, counted_obsolete=False, db_exists=True, known_deleted=False:
        "obsolete" if kind == "other" or counted_obsolete else "dead" if not db_exists
        else "dead" if kind == "LN" and known_deleted else "obsolete" if current != lsn else "live"},
    "known_deletion_is_live": {
        "entry_verdict": lambda kind, lsn, current, *, counted_obsolete=False, db_exists=True, known_deleted=False:
        "obsolete" if kind == "other" or counted_obsolete else "dead" if not db_exists
        else "obsolete" if current != lsn else "live"},
}


def random_cases(rng):
    """For ``minidb grade``: every kind, the tree pointing at the entry, elsewhere or nowhere, any facts."""
    for _ in range(300):
        lsn = LSN(rng.randrange(1, 4), rng.randrange(0, 500, 20))
        current = rng.choice([None, lsn, LSN(rng.randrange(1, 4), rng.randrange(0, 500, 20))])
        facts = {name: rng.random() < 0.3 for name in ("counted_obsolete", "known_deleted")}
        facts["db_exists"] = rng.random() < 0.8
        yield "entry_verdict", (rng.choice(["LN", "IN", "other"]), lsn, current), facts


# What student.py may import from the modules that implement this exercise (minidb grade refuses the rest).
STUDENT_MAY_IMPORT = {"minidb.log": ["LSN"]}
