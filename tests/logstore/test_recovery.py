"""Recovery from the last CkptEnd: INs from CkptStart, LNs from firstActiveLSN, losers undone."""

from minidb.errors import SimulatedCrash
from minidb.io import CrashMode
from minidb.log import NULL_LSN, Provisional
from minidb.logstore import Environment, EnvironmentHooks
from minidb.logstore.tools.verify import live_but_obsolete, records, utilization_totals_problems, verify_tree

from tests.logstore.helpers import entries, fill, keys, new_env, reopen, small_config


def test_a_new_environment_recovers_from_nothing():
    _, env = new_env()
    info = env.recovery_info
    assert info.last_ckpt_end == NULL_LSN
    assert [p.name for p in info.phases] == [
        "find the end of the log", "find the last checkpoint", "read the log", "mapping tree INs", "MapLNs",
        "INs", "transactions", "redo LNs", "undo losers", "utilization", "checkpoint",
    ]
    assert env.checkpointer.last_ckpt_end != NULL_LSN  # recovery ends with a checkpoint
    assert env.database_names(internal=True) == ["_utilization"]


def test_a_clean_close_leaves_little_to_do():
    disk, env = new_env()
    fill(env.database("t"), 20)
    env.close()
    again = reopen(disk)
    info = again.recovery_info
    assert info.last_ckpt_end != NULL_LSN and info.losers == set() and info.lns_undone == 0
    assert records(again) == {"t": {k.encode(): f"v-{k}".encode() for k in keys(20)}}


def test_committed_state_after_a_crash():
    disk, env = new_env()
    db = env.database("t")
    fill(db, 10)
    env.checkpoint()
    db.put("key001", "after the checkpoint")  # not synced yet
    with env.begin() as txn:  # the commit's fsync makes everything before it durable
        db.put("key002", "committed", txn=txn)
        db.delete("key003", txn=txn)
    loser = env.begin()
    db.put("key004", "never committed", txn=loser)
    db.delete("key005", txn=loser)
    db.put("key999", "never committed", txn=loser)
    env.sync()  # the loser's LNs are on disk
    db.put("key006", "lost: not synced")
    env.crash(CrashMode.nothing())
    again = reopen(disk)
    info = again.recovery_info
    assert info.losers == {loser.id}
    got = records(again)["t"]
    assert got[b"key001"] == b"after the checkpoint"
    assert got[b"key002"] == b"committed" and b"key003" not in got
    assert got[b"key004"] == b"v-key004" and got[b"key005"] == b"v-key005" and b"key999" not in got
    assert got[b"key006"] == b"v-key006"
    assert info.lns_undone == 0  # no BIN on disk ever held the loser's versions
    assert verify_tree(again) == [] and live_but_obsolete(again) == [] and utilization_totals_problems(again) == []


def test_a_transaction_spanning_a_checkpoint_is_replayed_from_first_active_lsn():
    disk, env = new_env()
    db = env.database("t")
    fill(db, 10)
    txn = env.begin()
    first = db.put("key001", "long", txn=txn)
    result = env.checkpoint()
    assert result.first_active_lsn == first < result.ckpt_start_lsn
    db.put("key002", "long too", txn=txn)
    txn.commit()
    env.crash(CrashMode.nothing())
    again = reopen(disk)
    assert again.recovery_info.first_active_lsn == first
    assert again.recovery_info.committed >= {txn.id}
    got = records(again)["t"]
    assert got[b"key001"] == b"long" and got[b"key002"] == b"long too"


def test_a_loser_that_started_before_the_checkpoint_is_undone():
    disk, env = new_env()
    db = env.database("t")
    fill(db, 10)
    loser = env.begin()
    db.put("key001", "uncommitted", txn=loser)
    env.checkpoint(minimize_recovery_time=True)  # its BIN is logged with the uncommitted slot
    db.put("key002", "uncommitted", txn=loser)
    env.sync()
    env.crash(CrashMode.nothing())
    again = reopen(disk)
    got = records(again)["t"]
    assert got[b"key001"] == b"v-key001" and got[b"key002"] == b"v-key002"
    # The checkpoint's BIN held key001's uncommitted version: undone. key002's never reached a BIN.
    assert again.recovery_info.lns_undone == 1


def test_non_provisional_ins_after_ckpt_start_are_replayed_provisional_ones_are_not():
    disk, env = new_env()
    db = env.database("t")
    fill(db, 20)
    env.checkpoint(minimize_recovery_time=True)
    db.put("key001", "changed")
    evicted = env.evictor.evict(env.db_tree.get("t").tree.search(b"key001"))  # NO: no checkpoint running
    assert env.log.read(evicted).provisional is Provisional.NO
    db.put("key019", "changed too")
    env.sync()
    env.crash(CrashMode.nothing())
    again = reopen(disk)
    info = again.recovery_info
    assert info.ins_replayed >= 1 and info.ins_provisional >= 1
    assert any(f"at {evicted} replaces its slot" in line for p in info.phases for line in p.lines)
    got = records(again)["t"]
    assert got[b"key001"] == b"changed" and got[b"key019"] == b"changed too"


def test_recovery_listeners_see_every_entry_from_ckpt_start():
    disk, env = new_env()
    db = env.database("t")
    fill(db, 5)
    result = env.checkpoint()
    db.put("after", "x")
    env.sync()
    env.crash(CrashMode.nothing())
    seen = []
    again = Environment.open(disk, small_config(), EnvironmentHooks(recovery_listeners=[seen.append]))
    assert seen[0].lsn == result.ckpt_start_lsn
    assert [e.lsn for e in seen] == sorted(e.lsn for e in seen)
    assert seen[-1].lsn < again.recovery_info.end_of_log
    assert any(e.type_name == "LN" and e["key"] == b"after" for e in seen)


def test_a_crash_during_recovery_then_recovery_again():
    disk, env = new_env(node_budget=6, buffer_size=256)
    db = env.database("t")
    fill(db, 30)
    env.checkpoint()
    loser = env.begin()
    db.put("key003", "loser", txn=loser)
    with env.begin() as txn:
        db.put("key004", "winner", txn=txn)
    env.crash(CrashMode.nothing())
    expected = {k.encode(): f"v-{k}".encode() for k in keys(30)}
    expected[b"key004"] = b"winner"
    # Count recovery's writes and fsyncs on a copy, then crash a fresh copy at each one of them.
    probe = disk.clone()
    reopen(probe, node_budget=6, buffer_size=256)
    io = [e for e in probe.events if e.kind in ("write", "truncate", "fsync")]
    assert len(io) >= 6
    for after_ops in range(1, len(io) + 1):
        image = disk.clone()
        image.schedule_crash(after_ops)
        try:
            reopen(image, node_budget=6, buffer_size=256)
            raise AssertionError("recovery did not reach the scheduled crash")
        except SimulatedCrash:
            pass
        assert records(reopen(image, node_budget=6, buffer_size=256))["t"] == expected, f"crash after recovery op {after_ops}"
    again = reopen(disk, node_budget=6, buffer_size=256)
    assert records(again)["t"] == expected
    assert verify_tree(again) == [] and live_but_obsolete(again) == []


def test_a_torn_tail_is_cut_and_the_rest_recovered():
    disk, env = new_env()
    db = env.database("t")
    fill(db, 10)
    env.checkpoint()
    with env.begin() as txn:
        db.put("key001", "committed", txn=txn)
    db.put("key002", "being written")
    env.log.flush()
    disk.crash(CrashMode.torn(5))
    again = reopen(disk)
    assert again.recovery_info.tail_cut is not None
    got = records(again)["t"]
    assert got[b"key001"] == b"committed" and got[b"key002"] == b"v-key002"


def test_no_checkpoint_starts_in_the_middle_of_recovery():
    """Recovery with a tiny node budget logs a lot (evictions); only its final checkpoint may run."""
    disk, env = new_env(node_budget=4, checkpoint_bytes_interval=3000, file_max=2000)
    db = env.database("t")
    fill(db, 60)
    env.checkpoint()
    txn = env.begin()
    for key in keys(60):
        db.put(key, "in a long transaction", txn=txn)
    txn.commit()
    env.crash(CrashMode.nothing())
    again = reopen(disk, node_budget=4, checkpoint_bytes_interval=3000, file_max=2000)
    assert again.log.stats["nBytes"] > 3000  # recovery appended more than the interval
    assert [r.invoker for r in again.checkpointer.history] == ["recovery"]
    assert records(again)["t"] == {k.encode(): b"in a long transaction" for k in keys(60)}
    assert utilization_totals_problems(again) == [] and live_but_obsolete(again) == []


def test_regression_seed_1015_an_unplaced_in_makes_nothing_obsolete():
    """A BEFORE_CKPT_END IN of an unfinished checkpoint that recovery cannot place named an old BIN
    version that the recovered tree still uses (found by the crash sweep, seed 1015, 40 operations)."""
    from minidb.crashtest.logstore import crash_sweep

    assert crash_sweep(1015, 40, torn_variants=0, random_variants=0).violations == []


def _three_checkpoints():
    disk, env = new_env()
    db = env.database("t")
    starts = []
    for round_ in range(3):
        fill(db, 8, value=f"round{round_}")
        starts.append(env.checkpoint())
        db.put(f"after{round_}", "x")
    env.sync()
    env.crash(CrashMode.nothing())
    return disk, starts


def test_recovery_passes_over_a_checkpoint_a_hook_says_not_to_use():
    disk, checkpoints = _three_checkpoints()
    last, before = checkpoints[-1], checkpoints[-2]
    asked, seen = [], []

    def not_the_last(log, ckpt_start, read):
        asked.append((ckpt_start, read[0].lsn))
        return "it lies in a rollback period" if ckpt_start == last.ckpt_start_lsn else None

    again = Environment.open(disk, small_config(),
                             EnvironmentHooks(checkpoint_not_usable=[not_the_last], recovery_listeners=[seen.append]))
    info = again.recovery_info
    assert [start for start, _ in asked] == [last.ckpt_start_lsn, before.ckpt_start_lsn]
    assert asked[1][1] <= before.ckpt_start_lsn  # asked again with the log read from the earlier checkpoint on
    assert info.last_ckpt_end == before.ckpt_end_lsn and info.last_ckpt_start == before.ckpt_start_lsn
    assert info.checkpoints_not_used == [last.ckpt_end_lsn]
    assert seen[0].lsn == before.ckpt_start_lsn  # the listeners see the log from the checkpoint used
    lines = next(p.lines for p in info.phases if p.name == "read the log")
    assert any("not used: it lies in a rollback period; recovery starts from CkptEnd" in line for line in lines)
    assert records(again)["t"][b"after2"] == b"x" and records(again)["t"][b"key000"] == b"round2-key000"
    assert verify_tree(again) == []


def test_with_no_usable_checkpoint_recovery_reads_the_log_from_its_start():
    disk, checkpoints = _three_checkpoints()
    again = Environment.open(disk, small_config(),
                             EnvironmentHooks(checkpoint_not_usable=[lambda log, start, read: "never"]))
    info = again.recovery_info
    assert info.last_ckpt_end == NULL_LSN and info.scan_start == again.log.scan().__next__().lsn
    assert len(info.checkpoints_not_used) == 4  # the three and the one the first open ended with
    assert "no checkpoint: from the start of the log (not used: CkptEnd" in info.summary()
    assert records(again)["t"][b"after2"] == b"x" and records(again)["t"][b"key007"] == b"round2-key007"
    assert verify_tree(again) == []


def test_recovery_decodes_no_provisional_bin(monkeypatch):
    """Reading the log, recovery asks every entry for its transaction (to continue the ids after the largest);
    only a transactional entry's item is decoded for that. The INs and BINs that splits logged provisionally
    after the checkpoint are never replayed, so their slots are never decoded: the items decoded are counted."""
    from minidb.log.types import EntryType

    disk, env = new_env()
    db = env.database("t")
    fill(db, 60)  # 4-slot nodes: splits log BINs and INs provisionally
    env.sync()
    provisional = {e.item for e in entries(env, "IN", "BIN") if e.provisional is Provisional.YES}
    env.crash(CrashMode.nothing())
    decoded = []
    decode = EntryType.decode
    monkeypatch.setattr(EntryType, "decode", lambda self, item: decoded.append(bytes(item)) or decode(self, item))
    again = reopen(disk)
    assert again.recovery_info.ins_provisional > 10
    assert provisional.isdisjoint(decoded)
    assert sorted(records(again)["t"]) == [k.encode() for k in keys(60)]
