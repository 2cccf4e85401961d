"""The utilization tracker: totals per file, obsolete versions, FileSummaryLNs, recovery."""

from minidb.io import CrashMode
from minidb.log import Provisional
from minidb.logstore.cleaner.utilization import FILE_HEADER_ENTRY_SIZE, summary_key
from minidb.logstore.tools.verify import live_but_obsolete, utilization_totals_problems

from tests.logstore.helpers import entries, fill, new_env, reopen


def test_totals_match_the_log_and_non_nodes_are_obsolete_at_once():
    _, env = new_env()
    db = env.database("t")
    fill(db, 10)
    env.checkpoint()
    assert utilization_totals_problems(env) == []
    summary = env.utilization.summary(1)
    assert summary.obsolete[0] == FILE_HEADER_ENTRY_SIZE
    for entry in entries(env, "CkptStart", "CkptEnd"):
        assert env.utilization.is_obsolete(entry.lsn)


def test_a_new_version_makes_the_old_one_obsolete():
    _, env = new_env()
    db = env.database("t")
    first = db.put("k", "1")
    assert not env.utilization.is_obsolete(first)
    second = db.put("k", "2")
    assert env.utilization.is_obsolete(first) and not env.utilization.is_obsolete(second)
    deleted = db.delete("k")
    assert env.utilization.is_obsolete(second) and env.utilization.is_obsolete(deleted)


def test_transactions_count_at_commit_and_abort():
    _, env = new_env()
    db = env.database("t")
    before = db.put("k", "before")
    txn = env.begin()
    one = db.put("k", "one", txn=txn)
    two = db.put("k", "two", txn=txn)
    assert env.utilization.is_obsolete(one)  # overwritten by the same txn: no abort returns to it
    assert not env.utilization.is_obsolete(before)  # an abort could return to it
    txn.commit()
    assert env.utilization.is_obsolete(before) and not env.utilization.is_obsolete(two)
    txn = env.begin()
    three = db.put("k", "three", txn=txn)
    txn.abort()
    assert env.utilization.is_obsolete(three) and not env.utilization.is_obsolete(two)


def test_provisional_logging_defers_the_count_to_the_parent():
    _, env = new_env()
    db = env.database("t")
    fill(db, 4)
    env.checkpoint()
    bin_node = env.db_tree.get("t").tree.search(b"key001")
    old = bin_node.last_logged_lsn
    db.put("key009", "splits the BIN")  # the split logs both halves with Provisional.YES
    assert env.log.read(bin_node.last_logged_lsn).provisional is Provisional.YES
    assert not env.utilization.is_obsolete(old)
    assert old in bin_node.parent.provisional_obsolete
    result = env.checkpoint()  # the parent (the root) is logged non-provisionally
    assert env.utilization.is_obsolete(old)
    root_entry = env.log.read(next(l.lsn for l in result.logged if l.db_name == "t" and l.is_root))
    assert {"lsn": old} in root_entry["obsolete"]


def test_file_summaries_are_records_of_the_utilization_database():
    _, env = new_env(file_max=2000)
    db = env.database("t")
    fill(db, 40)
    result = env.checkpoint()
    util = env.db_tree.utilization
    for number, lsn in result.summaries:
        key = summary_key(number, env.log.read(lsn)["sequence"])
        bin_node = util.tree.search(key)
        index, exact = bin_node.find(key)
        assert exact and bin_node.lsns[index] == lsn


def test_recovery_rebuilds_the_counts():
    disk, env = new_env(file_max=2000, node_budget=6)
    db = env.database("t")
    fill(db, 30)
    env.checkpoint()
    for i in range(0, 30, 3):
        db.put(f"key{i:03d}", "new")
    old_versions = [e.lsn for e in entries(env, "LN") if e["data"].startswith(b"v-key0")]
    env.sync()
    env.crash(CrashMode.nothing())
    again = reopen(disk, file_max=2000, node_budget=6)
    assert utilization_totals_problems(again) == [] and live_but_obsolete(again) == []
    replaced = [lsn for lsn in old_versions if int(again.log.read(lsn)["key"][3:]) % 3 == 0]
    assert replaced and all(again.utilization.is_obsolete(lsn) for lsn in replaced)
    assert len(again.utilization.report()) >= 3
    assert "utilization" in str(again.utilization.report()[0])
