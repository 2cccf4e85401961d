"""The log cleaner: file selection by utilization, live/obsolete decisions, migration, deletion at checkpoints."""

import pytest

from minidb.errors import UserError
from minidb.io import SimDisk
from minidb.log.files import file_name, log_file_numbers
from minidb.logstore import Environment, EnvironmentConfig, EnvironmentFailureError, LogFileNotFound
from minidb.logstore.cleaner import FileProtector, select_file, total_utilization
from minidb.logstore.cleaner.utilization import FileSummary, file_key
from minidb.logstore.tools.verify import live_but_obsolete, utilization_totals_problems, verify_tree

from tests.logstore.helpers import small_config


def summary(number, total, live):
    return FileSummary(number, total_count=2, total_size=total, obsolete={0: total - live} if total > live else {})


def pick(summaries, candidate=lambda n: True, minimum=50, file_minimum=5):
    return select_file(summaries, candidate, minimum, file_minimum).file_number


# -- file selection --------------------------------------------------------------------------------
def test_under_the_total_threshold_the_least_utilized_candidate_is_cleaned():
    files = [summary(1, 1000, 200), summary(2, 1000, 900), summary(3, 1000, 30)]
    assert round(total_utilization(files), 3) == 0.377
    assert pick(files) == 3
    assert pick(files, candidate=lambda n: n != 3) == 1  # never a file the caller excludes
    assert pick(files, minimum=37) == 3  # 3% < 5%: cleaned whatever the total
    assert pick(files, minimum=37, file_minimum=3) is None  # 37.7% >= 37% and no file under 3%


def test_over_the_total_threshold_only_a_nearly_empty_file_is_cleaned():
    files = [summary(1, 1000, 600), summary(2, 1000, 900), summary(3, 1000, 40)]  # total 51%
    assert pick(files) == 3  # 4% < 5%
    files[2] = summary(3, 1000, 60)  # 6%, total 52%
    assert pick(files) is None
    assert "no file under 5%" in select_file(files, lambda n: True, 50, 5).reason


@pytest.mark.parametrize("name", ["cleaner_min_utilization", "cleaner_min_file_utilization"])
def test_thresholds_are_percentages(name):
    with pytest.raises(UserError, match=f"{name} 101 must be a percentage"):
        EnvironmentConfig(**{name: 101})


def churn(env, rounds=4, count=40):
    """Every record rewritten ``rounds`` times, then four records in five deleted: most of the log is obsolete."""
    db = env.database("accounts")
    for r in range(rounds):
        for i in range(count):
            db.put(f"k{i:03d}", f"value {r} {i} " * 3)
    for i in range(count):
        if i % 5:
            db.delete(f"k{i:03d}")
    return db


def expected_records(count=40, rounds=4):
    return {f"k{i:03d}".encode(): (f"value {rounds - 1} {i} " * 3).encode() for i in range(0, count, 5)}


def files_on(disk):
    return sorted(n for n in disk.list() if n.endswith(".jdb"))


@pytest.fixture
def churned():
    disk = SimDisk("churn")
    env = Environment.open(disk, small_config(file_max=4096))
    churn(env)
    env.checkpoint()
    return disk, env


def test_never_the_file_being_written_a_protected_one_or_one_recovery_needs(churned):
    disk, env = churned
    current = env.log.end_lsn.file
    horizon = env.cleaner.recovery_horizon()
    assert horizon == env.checkpointer.last_ckpt_start
    protected = env.cleaner.protector.protect("backup", 2, 3)
    assert env.cleaner.protected_files() == {2, 3}
    cleaned = [c.file_number for c in env.clean_log()]
    assert cleaned and all(n < horizon.file for n in cleaned)
    assert current not in cleaned and 2 not in cleaned and 3 not in cleaned
    assert not env.cleaner.is_candidate(current) and not env.cleaner.is_candidate(2)
    env.cleaner.protector.release(protected)
    assert [c.file_number for c in env.clean_log()] == [2, 3]


# -- live or obsolete ---------------------------------------------------------------------------------
def test_lns_are_live_iff_their_slot_points_at_them_and_live_ones_are_migrated():
    disk = SimDisk("lns")
    env = Environment.open(disk, small_config(file_max=4096))
    db = env.database("accounts")
    db.put("keep", "kept value")
    db.put("drop", "first")
    db.put("drop", "second")
    lsns = {(e["key"], e["data"]): e.lsn for e in env.log.scan() if e.type_name == "LN"}
    while env.log.end_lsn.file == 1:  # fill file 1, then checkpoint so that it leaves the recovery interval
        db.put("filler", "x" * 200)
    env.checkpoint()
    env.utilization.files[1].obsolete.clear()  # the tree alone decides (the tracker knows nothing obsolete)
    result = env.cleaner.clean_file(1)
    keep, dropped = lsns[(b"keep", b"kept value")], lsns[(b"drop", b"first")]
    assert keep in result.live and dropped in result.obsolete
    assert lsns[(b"drop", b"second")] in result.live
    new = result.migrated[keep]
    assert new.file > 1 and env.log.read(new).values["data"] == b"kept value"
    leaf = db.impl.tree.search(b"keep")
    assert leaf.lsns[leaf.find(b"keep")[0]] == new and leaf.dirty
    assert env.utilization.is_obsolete(keep)
    stats = env.cleaner.stats
    assert stats["nLNsMigrated"] >= 2 and stats["nLNsObsolete"] >= 1 and stats["nCleanerRuns"] == 1
    assert live_but_obsolete(env) == [] and verify_tree(env) == []
    assert db.get("keep") == b"kept value" and db.get("drop") == b"second"


def test_an_in_is_live_iff_it_is_its_nodes_current_version_and_is_migrated_lazily():
    """A live IN is only made dirty (the checkpoint rules' lazy migration exception): the next checkpoint logs it."""
    disk = SimDisk("ins")
    env = Environment.open(disk, small_config(file_max=4096))
    db = env.database("accounts")
    for i in range(12):
        db.put(f"k{i:02d}", "v")
    env.checkpoint()  # the BINs' current versions, in file 1
    bins = {n.node_id: n for n in env.evictor.resident_nodes() if n.db_id == db.impl.id and n.is_bin}
    current = {n.last_logged_lsn: n for n in bins.values()}
    older = [e.lsn for e in env.log.scan() if e.type_name == "BIN" and e["db_id"] == db.impl.id
             and e.lsn not in current]
    assert all(lsn.file == 1 for lsn in current) and older
    while env.log.end_lsn.file == 1:
        env.database("other").put("filler", "x" * 200)
    env.checkpoint()
    root = db.impl.root
    assert root.last_logged_lsn.file == 1 and not root.dirty and not any(n.dirty for n in bins.values())
    env.utilization.files[1].obsolete.clear()  # the tree alone decides
    result = env.cleaner.clean_file(1)
    assert set(current) | {root.last_logged_lsn} <= set(result.live) and set(older) <= set(result.obsolete)
    assert root.dirty and all(node.dirty for node in bins.values())  # the next checkpoint logs them elsewhere
    assert {n.describe() for n in bins.values()} | {root.describe()} <= set(result.dirtied)
    env.checkpoint()
    assert all(node.last_logged_lsn.file > 1 for node in [root, *bins.values()])


def test_a_locked_record_leaves_the_file_for_later():
    disk = SimDisk("locked")
    env = Environment.open(disk, small_config(file_max=4096))
    db = env.database("accounts")
    db.put("k", "v1")
    while env.log.end_lsn.file == 1:
        db.put("filler", "x" * 200)
    env.checkpoint()
    txn = env.begin()
    db.put("k", "v2", txn=txn)
    result = env.cleaner.clean_file(1)
    assert not result.cleaned and "b'k' of accounts" in result.reason and 1 not in env.cleaner.cleaned
    assert env.cleaner.stats["nLNsLocked"] == 1
    txn.abort()
    assert db.get("k") == b"v1"
    assert env.cleaner.clean_file(1).cleaned


# -- deletion at checkpoints -----------------------------------------------------------------------------
def test_cleaned_files_are_deleted_only_after_the_next_ckpt_end(churned):
    disk, env = churned
    cleaned = [c.file_number for c in env.clean_log()]
    assert 1 in cleaned
    run = env.checkpointer.start()
    run.through(8)
    assert file_name(1) in files_on(disk)  # CkptEnd is logged and fsynced, the files are still there
    assert run.result.files_to_delete == sorted(cleaned)
    run.through(9)
    deleted = [file_name(n) for n in sorted(cleaned)]
    assert not set(deleted) & set(files_on(disk))
    assert env.log.head == max(cleaned) + 1 and env.cleaner.stats["nCleanerDeletions"] == len(cleaned)
    run.finish()
    assert dict(env.database("accounts").items()) == expected_records()
    assert utilization_totals_problems(env) == [] and live_but_obsolete(env) == [] and verify_tree(env) == []


def test_a_crash_before_step_9_keeps_the_files_and_recovery_reads_everything(churned):
    disk, env = churned
    env.clean_log()
    run = env.checkpointer.start()
    run.through(8)
    env.crash()
    env = Environment.open(disk, small_config(file_max=4096))
    assert file_name(1) in files_on(disk)
    assert dict(env.database("accounts").items()) == expected_records()
    env.clean_log()
    env.checkpoint()
    env.crash()
    env = Environment.open(disk, small_config(file_max=4096))
    assert file_name(1) not in files_on(disk)
    assert dict(env.database("accounts").items()) == expected_records()
    assert utilization_totals_problems(env) == [] and live_but_obsolete(env) == [] and verify_tree(env) == []


def test_a_protected_file_is_kept_until_released(churned):
    disk, env = churned
    env.clean_log()
    feeding = env.cleaner.protector.protect("feeder replica-2", 2)
    env.checkpoint()
    assert files_on(disk)[0] == file_name(2)  # file 1 went, file 2 and those above stay
    env.cleaner.protector.release(feeding)
    env.checkpoint()
    assert file_name(2) not in files_on(disk)


def test_a_deletion_listener_runs_first_and_may_keep_the_files(churned):
    disk, env = churned
    env.clean_log()
    seen = []
    answer = [False]

    def listener(last_file):
        seen.append((last_file, file_name(last_file) in files_on(disk)))
        return answer[0]

    env.cleaner.protector.add_deletion_listener(listener)
    env.checkpoint()
    last = seen[0][0]
    assert seen == [(last, True)] and file_name(1) in files_on(disk)  # refused: nothing deleted
    answer[0] = True
    env.checkpoint()
    assert seen[-1] == (last, True) and file_name(last) not in files_on(disk)


def test_protection_ranges_are_checked():
    protector = FileProtector()
    with pytest.raises(UserError, match=r"backup: cannot protect files 3..2"):
        protector.protect("backup", 3, 2)
    held = protector.protect("backup", 3, 4)
    assert protector.protected_by(4) == ["backup (files 3..4)"] and not protector.is_protected(5)
    protector.release(held)
    with pytest.raises(UserError, match="not protected"):
        protector.release(held)


def test_a_workload_that_deletes_most_records_ends_with_fewer_log_bytes_than_it_wrote():
    disk = SimDisk("shrink")
    env = Environment.open(disk, small_config(file_max=4096))
    churn(env)
    env.checkpoint()
    written = env.log.stats["nBytes"]
    env.clean_log()
    env.checkpoint()
    env.clean_log()
    env.checkpoint()
    on_disk = sum(disk.size(n) for n in files_on(disk))
    assert on_disk < written * 0.6, (on_disk, written)  # 4 of its 7 files were cleaned and deleted
    assert env.log.head == 5
    env.close()
    env = Environment.open(disk, small_config(file_max=4096))
    assert dict(env.database("accounts").items()) == expected_records()
    env.close()


def test_the_environment_id_survives_cleaning_and_the_log_head_moving():
    disk = SimDisk("shrink")
    env = Environment.open(disk, small_config(file_max=4096))
    env_id = env.log.env_id
    churn(env)
    env.checkpoint()
    env.clean_log()
    env.checkpoint()
    env.close()
    env = Environment.open(disk, small_config(file_max=4096))
    assert env.log.head > 1 and env.log.env_id == env_id  # the first kept file says it
    headers = [e.values for e in env.log.scan() if e.type_name == "FileHeader"]
    assert [h["file_number"] for h in headers] == list(log_file_numbers(disk)) and {h["env_id"] for h in headers} == {env_id}
    env.close()


# -- on demand and in the background ---------------------------------------------------------------------
def test_the_background_thread_cleans_when_woken_and_stops_at_close():
    disk = SimDisk("daemon")
    env = Environment.open(disk, small_config(file_max=4096, run_cleaner=True, cleaner_bytes_interval=10**9))
    thread = env.cleaner_thread
    assert thread is not None and thread.thread.is_alive() and thread.runs == 0
    churn(env)
    env.checkpoint()
    assert thread.runs == 0 and not env.cleaner.cleaned  # not woken: 10**9 bytes were not logged
    thread.wake()
    assert thread.ran.wait(timeout=60)  # an event, not a sleep
    assert thread.runs == 1 and thread.error is None and 1 in env.cleaner.cleaned
    env.checkpoint()
    assert file_name(1) not in files_on(disk)
    env.close()
    assert not thread.thread.is_alive()
    assert Environment.open(disk, small_config()).cleaner_thread is None  # off by default


def test_the_thread_is_woken_by_log_growth():
    disk = SimDisk("growth")
    env = Environment.open(disk, small_config(file_max=4096, run_cleaner=True, cleaner_bytes_interval=2000))
    thread = env.cleaner_thread
    env.database("accounts").put("k", "v" * 3000)  # more than 2000 bytes logged: the next operation wakes it
    assert thread.ran.wait(timeout=60) and thread.runs >= 1
    env.crash()
    assert not thread.thread.is_alive()


def test_a_cleaner_trusting_a_wrong_obsolete_count_leaves_a_clear_log_file_not_found(churned):
    disk, env = churned
    db = env.database("accounts")
    leaf = db.impl.tree.search(b"k000")
    lsn = leaf.lsns[leaf.find(b"k000")[0]]
    assert lsn.file == 4
    env.utilization.count_obsolete(lsn)  # wrong: k000's current version is in use
    env.clean_log()
    env.checkpoint()
    assert file_name(4) not in files_on(disk)
    env.close()
    env = Environment.open(disk, small_config(file_max=4096))
    with pytest.raises(LogFileNotFound, match=rf"record b'k000' .* refers to {lsn}, in log file 00000004.jdb, "
                                              r"which was deleted \(the log starts at 00000005.jdb\)"):
        env.database("accounts").get("k000")
    assert [p for p in verify_tree(env) if str(lsn) in p and "00000004.jdb" in p] != []
    with pytest.raises(EnvironmentFailureError, match="is invalid"):  # JE's LFNF invalidates the environment
        env.database("accounts").get("k005")


def first_record_of(tree, number):
    """The BIN, slot and key of file ``number``'s oldest record in ``_utilization`` (None if it has none)."""
    leaf = tree.search(file_key(number))
    index, _ = leaf.find(file_key(number))
    if index < len(leaf.keys) and leaf.keys[index][:4] == file_key(number):
        return leaf, index, leaf.keys[index]
    return None


def test_deleting_a_file_removes_its_summary_records(churned):
    disk, env = churned
    env.clean_log()
    env.checkpoint()
    assert env.log.head > 1
    assert all(first_record_of(env.db_tree.utilization.tree, n) is None for n in range(1, env.log.head))


def test_recovery_drops_the_summary_records_of_a_deleted_file(churned):
    disk, env = churned
    env.clean_log()
    env.checkpoint()
    head = env.log.head
    assert head > 1
    env.sync()
    env.crash()  # before a checkpoint logged the BIN without the deleted files' records: the recovered tree has them
    env = Environment.open(disk, small_config(file_max=4096))
    assert all(first_record_of(env.db_tree.utilization.tree, n) is None for n in range(1, head))
    assert verify_tree(env) == [] and live_but_obsolete(env) == [] and utilization_totals_problems(env) == []
    env.checkpoint()
    env.crash()
    env = Environment.open(disk, small_config(file_max=4096))
    assert verify_tree(env) == [] and utilization_totals_problems(env) == []
    assert dict(env.database("accounts").items()) == expected_records()


# -- lazy migration of LNs --------------------------------------------------------------------------
def lazily_cleaned(name):
    """A churned environment with lazy migration, its cleanable files cleaned (marked, nothing logged)."""
    disk = SimDisk(name)
    env = Environment.open(disk, small_config(file_max=4096, cleaner_lazy_migration=True))
    churn(env)
    env.checkpoint()
    end = env.log.end_lsn
    cleaned = [c.file_number for c in env.clean_log()]
    assert cleaned and env.cleaner.stats["nLNsMarked"] > 0
    assert not [e for e in env.log.scan(end) if e.type_name == "LN"]  # marking logs no user LN
    assert {lsn.file for lsn in env.cleaner.marked.values()} <= set(cleaned)
    return disk, env, cleaned


def test_lazily_migrated_lns_are_logged_before_their_bins_and_survive_the_deletion():
    disk, env, cleaned = lazily_cleaned("lazy")
    marked, eager = env.cleaner.stats["nLNsMarked"], env.cleaner.stats["nLNsMigrated"]  # eager: internal LNs
    result = env.checkpoint()
    assert env.cleaner.marked == {} and env.cleaner.stats["nLNsMigrated"] == eager + marked
    assert not set(map(file_name, cleaned)) & set(files_on(disk))  # deleted at step 9
    migrated = [e for e in env.log.scan(result.ckpt_start_lsn, result.ckpt_end_lsn) if e.type_name == "LN"]
    assert len(migrated) == marked  # logged by the checkpoint, between CkptStart and CkptEnd
    bins = [env.log.read(l.lsn) for l in result.logged if l.is_bin and l.db_name == "accounts"]
    for entry in migrated:  # each logged before the version of its BIN that points at it
        holder = next(b for b in bins if any(s["lsn"] == entry.lsn for s in b.values["entries"]))
        assert entry.lsn < holder.lsn
    env.close()
    again = Environment.open(disk, small_config(file_max=4096))
    assert dict(again.database("accounts").items()) == expected_records()
    assert verify_tree(again) == []


def test_a_crash_before_the_checkpoint_leaves_the_lazily_cleaned_file_and_its_records():
    disk, env, cleaned = lazily_cleaned("lazy-crash")
    env.sync()
    env.crash()
    again = Environment.open(disk, small_config(file_max=4096, cleaner_lazy_migration=True))
    assert set(map(file_name, cleaned)) <= set(files_on(disk))
    assert dict(again.database("accounts").items()) == expected_records()


def test_a_mark_a_transaction_holds_keeps_the_file_until_the_ln_is_logged():
    disk, env, cleaned = lazily_cleaned("lazy-txn")
    (db_id, key), lsn = next(iter(env.cleaner.marked.items()))
    txn = env.begin()
    env.database("accounts").put(key, "changed", txn=txn)  # its abort puts the marked version back
    env.checkpoint()
    assert lsn.file >= env.log.head and (db_id, key) in env.cleaner.marked
    txn.abort()
    env.checkpoint()
    assert env.cleaner.marked == {} and lsn.file < env.log.head
    env.close()
    again = Environment.open(disk, small_config(file_max=4096))
    assert dict(again.database("accounts").items()) == expected_records()
