"""Incremental FileSummaryLNs: each record holds the offsets tracked since the file's previous one.

A file's records are keyed by file number and sequence; reading the profile merges them (the union
of the offsets, the newest's counts); recovery does the same, crashes between the records of one
checkpoint included; the cleaner removes all of a deleted file's records; an environment written
when each file had one record holding its whole list still opens. With
``cleaner_whole_summary_offsets``, a file whose list is short has one record, rewritten whole in its slot.
"""

import shutil
from pathlib import Path

from minidb.io import CrashMode, SimDisk, crash_points
from minidb.log import LSN, log_file_numbers
from minidb.log.files import file_name
from minidb.logstore import Environment
from minidb.logstore.cleaner.utilization import file_key, merge_records, summary_key
from minidb.logstore.tools.verify import live_but_obsolete, utilization_totals_problems, verify_tree
from minidb.logstore.tree.cursor import Cursor

from tests.logstore.helpers import entries, fill, new_env, small_config

OLD_ENV = Path(__file__).parent / "data" / "old_file_summaries"


def utilization_records(env) -> list[tuple[bytes, dict]]:
    """``_utilization``'s records (key, values), in key order, through a cursor."""
    cursor = Cursor(env.core, env.records, env.locks, env.db_tree.utilization, None)
    found, item = [], cursor.seek(b"")
    while item is not None:
        found.append(item)
        item = cursor.next()
    return found


def utilization_keys(env) -> list[bytes]:
    return [key for key, _ in utilization_records(env)]


def records_of(env, number: int) -> list[dict]:
    """The values of file ``number``'s records, in key order (oldest first)."""
    return [dict(values) for key, values in utilization_records(env) if key[:4] == file_key(number)]


def counts(env) -> dict[int, tuple]:
    return {s.file_number: (s.total_count, s.total_size, s.node_count, s.node_size, s.obsolete_count, s.obsolete_size)
            for s in env.utilization.report()}


def puts_and_deletes(keys: int = 3000, deletes: int = 2900):
    disk = SimDisk("churn")
    env = Environment.open(disk)
    db = env.database("accounts")
    for i in range(keys):
        db.put(f"k{i:05d}", "v" * 20)
    for i in range(deletes):
        db.delete(f"k{i:05d}")
    return disk, env


def idle_checkpoint_bytes(env) -> int:
    env.checkpoint()
    before = env.log.end_lsn
    env.checkpoint()
    after = env.log.end_lsn
    return sum(e.size for e in env.log.scan(before, after))


def test_an_idle_checkpoint_after_3000_puts_and_2900_deletes_writes_under_1_kb():
    _, env = puts_and_deletes()
    assert idle_checkpoint_bytes(env) < 1024  # the whole list was a 47 KB FileSummaryLN every time


def half_deleted(**overrides):
    """20 records, a checkpoint, 20 more of which every other one is deleted, two checkpoints: file 1 changes
    at each of the three."""
    disk, env = new_env(file_max=3000, **overrides)
    db = env.database("t")
    fill(db, 20)
    env.checkpoint()
    for key in fill(db, 20, "second")[::2]:
        db.delete(key)
    env.checkpoint()
    env.checkpoint()
    return disk, env


def test_each_record_holds_only_the_offsets_since_the_previous_one():
    _, env = half_deleted()
    number = 1
    records = records_of(env, number)
    assert [r["sequence"] for r in records] == list(range(len(records))) and len(records) >= 3
    offsets = [{o["offset"] for o in r["obsolete"]} for r in records]
    for i, later in enumerate(offsets):
        assert all(not (later & earlier) for earlier in offsets[:i])  # no offset is logged twice
    merged = merge_records(records)
    summary = env.utilization.summary(number)
    assert merged.obsolete == summary.obsolete and merged.sequence == summary.sequence
    assert (merged.total_count, merged.total_size) == (summary.total_count, summary.total_size)
    for record in records:  # each one a record of _utilization, under its file and sequence
        key = summary_key(number, record["sequence"])
        bin_node = env.db_tree.utilization.tree.search(key)
        assert bin_node.find(key)[1]


def test_recovery_merges_the_records_of_each_file():
    disk, env = new_env(file_max=4000)
    db = env.database("t")
    for round_ in range(6):
        fill(db, 12, f"round {round_}")
        for key in fill(db, 12)[round_::4]:
            db.delete(key)
        env.checkpoint()
    for _ in range(3):
        env.checkpoint()  # the current file has two records: recovery counts what follows the newest only
    current = env.log.end_lsn.file
    assert len(records_of(env, current)) >= 2
    fill(db, 5, "after the last checkpoint")
    env.sync()
    before = counts(env)
    waiting = {n: env.utilization.summary(n).upkeep_size for n in env.utilization.waiting}
    assert waiting  # a file whose record waits for the upkeep of the utilization tree (see below)
    env.crash(CrashMode.everything())
    seen = {}

    def listen(phase, recovering):
        if phase == "utilization":
            seen.update(counts(recovering))

    again = Environment.open(disk, small_config(file_max=4000), phase_listener=listen)
    assert any(len(records_of(again, n)) > 1 for n in before)
    last = max(before)  # recovery appends to the last file before it counts (the entries of its own writes)
    assert ({n: c for n, c in seen.items() if n < last and n not in waiting}
            == {n: c for n, c in before.items() if n < last and n not in waiting})
    for n, upkeep in waiting.items():  # the crash forgot the upkeep that waited, at most: never more obsolete
        assert seen[n][:4] == before[n][:4] and before[n][5] - upkeep <= seen[n][5] <= before[n][5]
    assert seen[last][4:] == before[last][4:]
    assert utilization_totals_problems(again) == [] and live_but_obsolete(again) == []


def image_end(disk: SimDisk) -> LSN:
    """Where a crashed disk's log ends, before recovery writes to it."""
    last = max(log_file_numbers(disk))
    return LSN(last, disk.size(file_name(last)))


def test_a_crash_between_the_records_of_one_checkpoint_recovers_the_counts():
    config = dict(file_max=1500, buffer_size=200)
    disk, env = new_env("partial", **config)
    db = env.database("t")
    fill(db, 40)
    env.checkpoint()
    for key in fill(db, 40, "second")[::3]:
        db.delete(key)  # every file changes: the next checkpoint logs a record for each
    start = len(disk.events)
    written = env.checkpoint().summaries
    end = len(disk.events)
    assert len(written) >= 4
    env.close()
    between = 0
    for point in crash_points(disk, start=start, torn_variants=0):
        if point.event.index >= end:
            break
        crashed_end = image_end(point.disk)
        kept = sum(lsn < crashed_end for _, lsn in written)
        between += 0 < kept < len(written)
        recovered = Environment.open(point.disk, small_config(**config))
        assert utilization_totals_problems(recovered) == [], point
        assert live_but_obsolete(recovered) == [], point
        durable: dict[int, set[int]] = {}  # file -> the offsets its records on the crashed disk hold
        for entry in entries(recovered, "FileSummaryLN"):
            if entry.lsn < crashed_end and entry["file_number"] >= recovered.log.head:
                durable.setdefault(entry["file_number"], set()).update(o["offset"] for o in entry["obsolete"])
        for number, offsets in durable.items():
            assert offsets <= set(recovered.utilization.summary(number).obsolete), (point, number)
        recovered.close()
    assert between > 0  # some crashes fell between two records of the checkpoint


def test_the_cleaner_deletes_every_record_of_a_file_it_deletes():
    _, env = new_env(file_max=1500, cleaner_min_utilization=100)  # 100: clean the least used file, whatever the total
    db = env.database("t")
    for round_ in range(3):
        fill(db, 30, f"round {round_}")
        env.checkpoint()
    for key in fill(db, 30, "last"):
        db.delete(key)
    env.checkpoint()
    env.checkpoint()
    assert any(len(records_of(env, n)) > 1 for n in range(1, 4))
    env.clean_log()
    env.checkpoint()
    head = env.log.head
    assert head > 3
    left = [key for key in utilization_keys(env) if key[:4] < file_key(head)]
    assert left == []  # the records of the deleted files went with them
    assert verify_tree(env) == [] and live_but_obsolete(env) == []


# What the code that wrote OLD_ENV recovered from it (its counts when recovery's utilization pass ended):
# file -> (total count, total bytes, node count, node bytes, obsolete count, obsolete bytes).
OLD_ENV_RECOVERED = {1: (24, 1464, 21, 1290, 22, 1374), 2: (19, 1417, 18, 1371, 16, 1283),
                     3: (18, 1476, 17, 1430, 16, 1386), 4: (17, 1479, 15, 1398, 14, 1200),
                     5: (17, 1494, 15, 1365, 12, 1001), 6: (26, 1451, 24, 1370, 12, 437),
                     7: (14, 1486, 13, 1440, 1, 46), 8: (13, 1401, 11, 1272, 3, 162), 9: (2, 155, 1, 109, 1, 46)}
OLD_ENV_CONFIG = dict(file_max=1500, cleaner_min_utilization=100)


def test_an_environment_with_one_whole_record_per_file_opens(tmp_path):
    for path in OLD_ENV.glob("*.jdb"):
        shutil.copy(path, tmp_path / path.name)
    seen = {}

    def listen(phase, recovering):
        if phase == "utilization":
            seen.update(counts(recovering))

    env = Environment.open(str(tmp_path), small_config(**OLD_ENV_CONFIG), phase_listener=listen)
    assert seen == OLD_ENV_RECOVERED  # the old records read as sequence 0: the counts their writer recovered
    accounts = dict(env.database("accounts").items())
    assert accounts[b"k01"] == b"after the last checkpoint" and b"k04" not in accounts and len(accounts) == 15
    assert utilization_totals_problems(env) == [] and live_but_obsolete(env) == []
    old = {e["file_number"]: e for e in entries(env, "OldFileSummaryLN")}
    for number in sorted(old):  # recovery's checkpoint logged the files it changed as sequence 1
        records = records_of(env, number)
        assert records[0] == {**old[number].values}
        later = [r for r in records if "sequence" in r]
        assert [r["sequence"] for r in later] == list(range(1, len(later) + 1))
        old_offsets = {o["offset"] for o in old[number]["obsolete"]}
        assert all(not old_offsets & {o["offset"] for o in r["obsolete"]} for r in later)
    assert any(records_of(env, n)[1:] for n in old)
    assert file_key(1) in utilization_keys(env) and summary_key(1, 0) not in utilization_keys(env)
    before = {s.file_number: set(s.obsolete) for s in env.utilization.report()}
    env.close()  # old and new records together
    again = Environment.open(str(tmp_path), small_config(**OLD_ENV_CONFIG))
    assert all(offsets <= set(again.utilization.summary(n).obsolete) for n, offsets in before.items())
    assert utilization_totals_problems(again) == [] and live_but_obsolete(again) == []
    again.database("accounts").put("k99", "x" * 200)
    for number in range(1, 4):
        again.database("accounts").put(f"filler{number}", "y" * 600)
        again.checkpoint()
    again.clean_log()
    again.checkpoint()
    assert again.log.head > 1
    assert [k for k in utilization_keys(again) if k[:4] < file_key(again.log.head)] == []
    again.close()


# -- a file's own summaries -------------------------------------------------------------------------------------------
def own_summaries(env) -> list[LSN]:
    """The LSNs of the FileSummaryLNs that describe the file they lie in."""
    return [e.lsn for e in entries(env, "FileSummaryLN") if e.values["file_number"] == e.lsn.file]


def test_a_files_own_summary_is_not_counted_live_but_is_not_obsolete():
    _, env = new_env()
    env.database("t").put("k", "v")
    env.checkpoint()
    own = own_summaries(env)
    assert own  # the environment's first checkpoint summarises file 1 inside file 1
    assert all(env.utilization.is_own_summary(lsn) and not env.utilization.is_obsolete(lsn) for lsn in own)
    one = env.utilization.summary(1)
    assert one.live_size == one.total_size - one.obsolete_size - sum(env.log.read(lsn).size for lsn in own
                                                                    if lsn.file == 1)


def three_rounds_of_deletes(env) -> None:
    db = env.database("t")
    for round_ in range(3):
        for key in fill(db, 30, f"round {round_}"):
            db.delete(key)
        env.checkpoint()


def test_the_cleaner_does_not_migrate_a_files_own_summary_and_deletes_the_file():
    _, env = new_env(file_max=1500, cleaner_min_utilization=100)
    three_rounds_of_deletes(env)
    own = {env.log.read(lsn).values["sequence"] for lsn in own_summaries(env) if lsn.file == 1}
    assert own
    env.clean_log()
    env.checkpoint()
    assert env.log.head > 1  # file 1 went, its own summaries with it, never logged again elsewhere
    migrated = [e for e in entries(env, "FileSummaryLN") if e.values["file_number"] == 1 and e.lsn.file > 1
                and e.values["sequence"] in own]
    assert migrated == []
    assert verify_tree(env) == [] and live_but_obsolete(env) == []


def test_recovery_drops_the_records_of_deleted_files_without_reading_them():
    disk, env = new_env(file_max=1500, cleaner_min_utilization=100)
    three_rounds_of_deletes(env)
    env.clean_log()
    env.checkpoint()  # deletes the cleaned files; the BIN without their records is logged only next time
    head = env.log.head
    assert head > 1
    disk.crash(CrashMode.nothing())
    recovered = Environment.open(disk, small_config(file_max=1500, cleaner_min_utilization=100))
    assert [key for key in utilization_keys(recovered) if key[:4] < file_key(head)] == []
    assert verify_tree(recovered) == []
    recovered.close()


def put_and_checkpoint(env, rounds: int) -> list[int]:
    """``rounds`` times a put of one of ten keys and a checkpoint; the records each checkpoint wrote."""
    db = env.database("t")
    return [len((db.put(f"k{i % 10}".encode(), b"v" * 20), env.checkpoint())[1].summaries) for i in range(rounds)]


def test_the_records_a_checkpoint_writes_do_not_grow_with_the_files_of_the_log():
    _, env = new_env(file_max=1500)
    written = put_and_checkpoint(env, 60)
    assert env.log.end_lsn.file > 100  # many small files, most of them holding old versions of nodes
    # The files of the puts' nodes, and those whose counts the profile's upkeep changed by half a file or more:
    # without the wait, every file holding an old version of a _utilization node, 30 a checkpoint by the end.
    assert sum(written[-20:]) <= 20 * 10


def test_a_record_that_waits_for_the_profile_s_upkeep_is_written_by_close():
    disk, env = new_env(file_max=1500)
    put_and_checkpoint(env, 20)
    tracker = env.utilization
    waiting = set(tracker.waiting)
    assert waiting and not waiting & tracker.dirty
    for number in waiting:  # counted in memory: what the selector ranks by
        summary = tracker.summary(number)
        assert 0 < summary.upkeep_size and summary.upkeep_size * 2 < summary.total_size
        assert summary.unlogged
    assert not {number for number, _ in env.checkpoint().summaries} & waiting
    waiting = set(tracker.waiting)
    closing = {number for number, _ in (env.close(), env.checkpointer.history[-1])[1].summaries}
    assert waiting <= closing
    seen = {}

    def listen(phase, recovering):
        if phase == "utilization":  # the profile as recovery rebuilt it, before its own checkpoint
            seen.update({n: recovering.utilization.summary(n).obsolete_size for n in waiting})

    Environment.open(disk, small_config(file_max=1500), phase_listener=listen).close()
    assert seen == {n: tracker.summary(n).obsolete_size for n in waiting}  # nothing lost


# -- small files: one record, rewritten whole ---------------------------------------------------------------------------
def assert_reopened_with_the_same_counts(disk, env) -> None:
    """Closed and opened again, every file but the last has the same totals and at least its obsolete offsets
    (closing appends to the last file, and its checkpoint makes older versions obsolete)."""
    before, last = env.utilization.report(), env.log.end_lsn.file
    env.close()
    again = Environment.open(disk, small_config(file_max=3000, cleaner_whole_summary_offsets=64))
    for old in before:
        if old.file_number < last:
            new = again.utilization.summary(old.file_number)
            assert (new.total_count, new.total_size, new.node_count, new.node_size) == (
                old.total_count, old.total_size, old.node_count, old.node_size)
            assert set(old.obsolete) <= set(new.obsolete)
    assert utilization_totals_problems(again) == [] and live_but_obsolete(again) == [] and verify_tree(again) == []


def test_a_short_lists_record_is_rewritten_whole_in_its_one_slot_and_recovers():
    disk, env = half_deleted(cleaner_whole_summary_offsets=64)
    versions = [e for e in entries(env, "FileSummaryLN") if e.values["file_number"] == 1]
    assert len(versions) >= 3  # one per checkpoint that changed file 1 ...
    records = records_of(env, 1)
    summary = env.utilization.summary(1)
    assert len(records) == 1 and records[0]["sequence"] == 0  # ... all in one slot, the newest holding every offset
    assert {o["offset"] for o in records[0]["obsolete"]} == set(summary.obsolete)
    assert len(summary.obsolete) <= 64
    assert all(env.utilization.is_obsolete(e.lsn) for e in versions[:-1])  # the versions it replaced
    assert len(utilization_keys(env)) == len(env.utilization.files)  # the profile: one record per file
    assert_reopened_with_the_same_counts(disk, env)


def test_past_the_whole_record_size_a_files_records_become_incremental():
    disk, env = new_env(file_max=3000, cleaner_whole_summary_offsets=8)
    db = env.database("t")
    fill(db, 20)
    env.checkpoint()
    for round_ in range(3):
        for key in fill(db, 20, f"round {round_}")[round_::3]:
            db.delete(key)
        env.checkpoint()
    records = records_of(env, 1)
    assert [r["sequence"] for r in records] == list(range(len(records))) and len(records) >= 2
    assert len(records[0]["obsolete"]) <= 8  # the last whole record, then the offsets since each one before
    offsets = [{o["offset"] for o in r["obsolete"]} for r in records]
    assert all(not (later & earlier) for i, later in enumerate(offsets) for earlier in offsets[:i])
    assert merge_records(records).obsolete == env.utilization.summary(1).obsolete
    assert_reopened_with_the_same_counts(disk, env)
