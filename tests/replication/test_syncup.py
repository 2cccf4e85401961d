"""Syncup and rollback: the matchpoint search between a replica and its feeder, and the rollback after it.

JE's rollback example (VLSNIndex documentation) in real environments; matchpoints when the logs agree, diverge by one entry,
diverge past a checkpoint (the rollback limit) and share nothing (a network restore); a committed
transaction rolled back; invisible entries skipped by every reader; recovery finishing a rollback a crash
cut short; the same syncup over TCP.
"""

import threading

import pytest

from minidb.crashtest.replication import check_index
from minidb.errors import UserError
from minidb.io import CrashMode, SimDisk
from minidb.log import LSN
from minidb.log.files import file_name
from minidb.logstore.errors import DatabaseNotFoundError
from minidb.logstore.logdef import LN_TX
from minidb.replication import ReplicatedEnvironment, ReplicationConfig, VLSNIndexConfig, wire
from minidb.replication.errors import (
    FeederError,
    NetworkRestoreRequiredError,
    RollbackLimitError,
    SyncupError,
    VLSNRangeError,
)
from minidb.replication.group.membership import NodeState, RepGroup, RepNode
from minidb.replication.stream.feeder import Feeder
from minidb.replication.stream.network import HandshakeAcceptor, HandshakeInitiator, InMemoryNetwork, TcpNetwork
from minidb.replication.stream.replica import Replica
from minidb.replication.syncup.syncup import item_checksum
from minidb.replication.vlsn.scanner import stream_vlsn

from tests.replication.helpers import small_config

GROUP = RepGroup("bank", [RepNode("n1", "n1", 2), RepNode("n2", "n2"), RepNode("n3", "n3")])


def later_clock() -> float:
    return 1_800_000_000.0


def open_node(name, disk=None, **config):
    return ReplicatedEnvironment.open(disk or SimDisk(name), small_config(**config), VLSNIndexConfig(stride=3),
                                      group=GROUP, node_name=name)


def link(net, master, env, syncup=True, **options):
    """A handshaken connection from ``env`` to ``master``: (the master's feeder, the replica)."""
    listener = net._listeners.get(master.node_name) or net.listen(master.node_name)
    initiator = HandshakeInitiator(net.connect(master.node_name, env.node_name), "bank", GROUP.node(env.node_name))
    acceptor = HandshakeAcceptor(listener.accept(), GROUP, master.node_name)
    net.deliver()
    acceptor.poll()
    net.deliver()
    initiator.poll()
    return Feeder(master, acceptor.channel, env.node_name), Replica(env, initiator.channel, master.node_name,
                                                                    syncup=syncup, **options)


def settle(net, *pairs):
    while True:
        moved = net.deliver()
        for feeder, replica in pairs:
            moved += feeder.pump() + replica.pump()
        if not moved and not net.in_flight:
            return


def records(env):
    db = env.env.db_tree.get("accounts")
    return {} if db is None else dict(env.database("accounts", create=False).items())


def visible_stream(env):
    return [(stream_vlsn(e), e.type_name, e.values.get("key")) for e in env.log.scan() if stream_vlsn(e)]


def replicated_entries(env):
    """(VLSN, type, invisible) of every entry with a VLSN, and the rollback entries, in log order."""
    return [(e.vlsn, e.type_name, e.header.invisible) for e in env.log.scan()
            if e.vlsn is not None or e.type_name.startswith("Rollback")]


def failover(shared_writes, old_master_tail, new_master_tail):
    """n1 (master) replicates ``shared_writes`` to n2, then logs ``old_master_tail`` that n2 never gets; n2
    takes over and logs ``new_master_tail``. Returns (n1, n2) with n1 no longer master. n2's clock is
    later, so its Commits differ from n1's (their time). The first write to "accounts" creates it: its
    MapLN takes the next VLSN (VLSN 1 when the shared writes begin with a record)."""
    n1, n2 = open_node("n1"), open_node("n2", clock=later_clock)
    n1.become_master()
    shared_writes(n1)
    net = InMemoryNetwork()
    settle(net, link(net, n1, n2, syncup=False))
    old_master_tail(n1)
    n1.become_unknown()
    n2.become_master()
    new_master_tail(n2)
    return n1, n2


def rejoin(n1, n2, **options):
    net = InMemoryNetwork()
    feeder, replica = link(net, n2, n1, **options)
    settle(net, (feeder, replica))
    return feeder, replica


def puts(*pairs):
    def write(env):
        db = env.database("accounts")
        for key, value in pairs:
            db.put(key, value)
    return write


def matchpoint(env):
    env.log_matchpoint()


# -- JE's rollback example ----------------------------------------------------------------------------------------
def test_je_rollback_example_in_real_environments():
    """JE's example with its VLSNs: the Matchpoint both nodes hold is VLSN 1; each master then creates
    "accounts" (its MapLN, VLSN 2) and writes one record (VLSN 3), so n1's VLSNs 2 and 3 are rolled back,
    its database with them, and n2's 2 and 3 replay: n2's "accounts" takes the place of n1's own."""
    n1, n2 = failover(matchpoint, puts(("b", "old3")), puts(("c", "new3")))
    own = n1.env.db_tree.get("accounts")
    feeder, replica = rejoin(n1, n2)
    result = replica.syncup.rollback
    assert replica.syncup.result.matchpoint_vlsn == 1 and replica.syncup.result.examined == 1
    assert [(v, t) for v, _, t in result.rolled_back] == [(3, "LN"), (2, "MapLN")]
    # LSN 100 VLSN 1; 200 VLSN 2 and 300 VLSN 3 overmarked; rollback to VLSN 1, restart at VLSN 2; 400 VLSN 2; 500 VLSN 3
    assert replicated_entries(n1) == [(1, "Matchpoint", False), (2, "MapLN", True), (3, "LN", True),
                                      (None, "RollbackStart", False), (None, "RollbackEnd", False),
                                      (2, "MapLN", False), (3, "LN", False)]
    assert records(n1) == records(n2) == {b"c": b"new3"}
    assert own.removed and n1.env.db_tree.get("accounts") is not own
    assert check_index(n1) is None and n1.range.last == 3
    start = n1.log.read(result.start_lsn).values
    assert start["matchpoint_vlsn"] == 1 and start["matchpoint_lsn"] == result.matchpoint_lsn
    assert start["last_vlsn"] == 3 and feeder.syncup_requests == 1
    n1.sync()
    n1.crash(CrashMode.nothing())  # every reader after a restart skips the overmarked entries
    again = open_node("n1", n1.disk)
    assert records(again) == {b"c": b"new3"} and check_index(again) is None
    assert again.recovered_rollback is None


# -- the matchpoint search ---------------------------------------------------------------------------------------
def committed_txn(key, value):
    def write(env):
        db = env.database("accounts")
        with env.begin() as txn:
            db.put(key, value, txn=txn)
    return write


def test_logs_that_agree_roll_back_nothing():
    n1, n2 = failover(committed_txn("a", "1"), lambda env: None, lambda env: None)
    feeder, replica = rejoin(n1, n2)
    assert replica.syncup.result.matchpoint_vlsn == 3  # the Commit (after the creation and the LN_TX), the last sync point
    assert replica.syncup.rollback is None and replica.start_vlsn == 4
    assert not any(t.startswith("Rollback") for _, t, _ in replicated_entries(n1))


def test_logs_that_diverge_by_one_entry():
    n1, n2 = failover(committed_txn("a", "1"), puts(("b", "mine")), committed_txn("c", "theirs"))
    feeder, replica = rejoin(n1, n2)
    assert replica.syncup.result.matchpoint_vlsn == 3 and replica.syncup.result.examined == 1
    assert [(v, t) for v, _, t in replica.syncup.rollback.rolled_back] == [(4, "LN")]
    assert records(n1) == records(n2) == {b"a": b"1", b"c": b"theirs"}
    assert visible_stream(n1) == visible_stream(n2)


def test_same_vlsn_different_content_is_not_a_matchpoint():
    """Both logs hold a Commit at VLSN 5, with different records: the checksums differ, the search goes on to
    the shared Commit at VLSN 3 (VLSN 1 is the creation of "accounts")."""
    n1, n2 = failover(committed_txn("a", "1"), committed_txn("b", "mine"), committed_txn("b", "theirs"))
    feeder, replica = rejoin(n1, n2)
    assert replica.syncup.result.matchpoint_vlsn == 3 and replica.syncup.result.examined == 2
    assert replica.syncup.rollback.txn_ids and records(n1) == {b"a": b"1", b"b": b"theirs"}


def test_a_committed_transaction_is_rolled_back_within_the_limit():
    n1, n2 = failover(committed_txn("a", "1"), committed_txn("a", "mine"), puts(("z", "theirs")))
    txn_id = next(e.txn_id for e in n1.log.scan() if e.type_name == "Commit" and e.vlsn == 5)
    feeder, replica = rejoin(n1, n2)
    result = replica.syncup.rollback
    assert result.txn_ids == (txn_id,) and [t for _, _, t in result.rolled_back] == ["Commit", "LN_TX"]
    assert n1.log.read(result.start_lsn).values["txn_ids"] == [{"txn_id": txn_id}]
    assert records(n1) == {b"a": b"1", b"z": b"theirs"}


def test_a_rolled_back_creation_removes_the_database_on_the_old_master():
    """n1 creates "fresh" (VLSN 4) and commits a record into it (VLSNs 5, 6); none of it reaches n2, which
    takes over. n1's syncup rolls the creation back with the record: n1 has no "fresh" any more, the handle
    its application holds is refused, and no restart brings the database back."""
    handles = []

    def create_fresh(env):
        handles.append(env.database("fresh"))
        with env.begin() as txn:
            handles[0].put("k", "v", txn=txn)

    n1, n2 = failover(committed_txn("a", "1"), create_fresh, puts(("z", "theirs")))
    assert [(v, t) for v, t, _ in visible_stream(n1)][3:] == [(4, "MapLN"), (5, "LN_TX"), (6, "Commit")]
    rejoin(n1, n2)
    fresh = handles[0]
    assert n1.env.database_names() == n2.env.database_names() == ["accounts"]
    assert records(n1) == records(n2) == {b"a": b"1", b"z": b"theirs"}
    for use in (lambda: fresh.get("k"), lambda: fresh.keys(), lambda: n1.database("fresh", create=False)):
        with pytest.raises(DatabaseNotFoundError, match="'fresh'"):
            use()
    after_syncup = len(n1.disk.events) - 1  # the rollback is durable; n2's record replayed after it is not yet
    n1.sync()
    for image, kept in [(n1.disk.crash_image(after_syncup, CrashMode.nothing()), {b"a": b"1"}),
                        (n1.disk.crash_image(len(n1.disk.events) - 1, CrashMode.nothing()), records(n2))]:
        for _ in range(2):  # recovery, then a restart after the checkpoint that recovery ended with
            again = open_node("n1", image)
            assert again.env.database_names() == ["accounts"]
            assert records(again) == kept and check_index(again) is None
            again.close()


def commit_then_checkpoint(env):
    committed_txn("a", "mine")(env)
    env.checkpoint()


def test_a_rollback_across_a_checkpoint_completes_by_hard_recovery():
    """n1 commits a=mine and checkpoints; none of it reaches n2. The rollback crosses that checkpoint: the
    marks are made durable, then the environment is recovered again in place, from the checkpoint before
    the matchpoint (the one inside the rollback period is not used), and n1 goes on as n2's replica."""
    n1, n2 = failover(committed_txn("a", "1"), commit_then_checkpoint, puts(("z", "theirs")))
    crossed = n1.env.checkpointer.last_ckpt_end
    inner = n1.env
    feeder, replica = rejoin(n1, n2)
    result = replica.syncup.rollback
    assert result.hard_recovery is not None and "the tree rebuilt by hard recovery from" in result.describe()
    assert inner.closed and n1.env is not inner and not n1.closed  # the same node, its environment opened again
    info = n1.recovery_info
    assert crossed in info.checkpoints_not_used and info.last_ckpt_start < result.matchpoint_lsn
    assert [(v, t, i) for v, t, i in replicated_entries(n1) if t in ("Commit", "RollbackStart", "RollbackEnd")] == [
        (3, "Commit", False), (5, "Commit", True), (None, "RollbackStart", False), (None, "RollbackEnd", False)]
    assert records(n1) == records(n2) == {b"a": b"1", b"z": b"theirs"}
    assert n1.state is NodeState.REPLICA and n1.master_name == "n2" and check_index(n1) is None
    n1.sync()
    n1.crash(CrashMode.nothing())
    again = open_node("n1", n1.disk)  # the checkpoint hard recovery ended with is after the RollbackEnd: used
    assert again.recovery_info.checkpoints_not_used == [] and records(again) == records(n2)


def test_recovery_does_not_use_a_checkpoint_inside_a_rollback_period():
    """A crash right after the RollbackEnd, before hard recovery's own checkpoint: the next open does not
    start from the checkpoint n1 wrote after the matchpoint, but from one before it."""
    n1, n2 = failover(committed_txn("a", "1"), commit_then_checkpoint, puts(("z", "theirs")))
    crossed = n1.env.checkpointer.last_ckpt_end
    events = len(n1.disk.events)
    rejoin(n1, n2)
    end = next(e.lsn for e in n1.log.scan() if e.type_name == "RollbackEnd")
    history = n1.disk.events
    written = next(e.index for e in history[events:] if e.kind == "write" and e.name == file_name(end.file)
                   and e.offset + len(e.data) > end.offset)
    synced = next(e.index for e in history[written:] if e.kind == "fsync")  # the RollbackEnd is durable here
    again = open_node("n1", n1.disk.crash_image(synced, CrashMode.nothing()))
    info = again.recovery_info
    assert info.checkpoints_not_used == [crossed]
    lines = next(p.lines for p in info.phases if p.name == "read the log")
    assert any("not used: its CkptStart lies inside the rollback period from matchpoint" in line for line in lines)
    assert records(again) == {b"a": b"1"} and check_index(again) is None


def test_the_txn_rollback_limit_counts_committed_transactions_and_refuses_past_it():
    n1, n2 = failover(committed_txn("a", "1"), puts(*[(f"k{i}", "v") for i in range(11)]), puts(("z", "theirs")))
    before = (n1.log.end_lsn, replicated_entries(n1), records(n1), n1.range)
    assert n1.rep_config.txn_rollback_limit == 10  # JE's default
    with pytest.raises(RollbackLimitError, match="would undo 11 committed transactions .* more than "
                                                 "txn_rollback_limit 10: a network restore is needed"):
        rejoin(n1, n2)
    assert (n1.log.end_lsn, replicated_entries(n1), records(n1), n1.range) == before


def test_a_transaction_counts_once_against_the_limit():
    def one_txn_three_records(env):
        db = env.database("accounts")
        with env.begin() as txn:
            for key in ("b", "c", "d"):
                db.put(key, "mine", txn=txn)

    n1, n2 = failover(committed_txn("a", "1"), one_txn_three_records, puts(("z", "theirs")))
    n1.rep_config = ReplicationConfig(txn_rollback_limit=1)
    feeder, replica = rejoin(n1, n2)
    assert len(replica.syncup.rollback.rolled_back) == 4 and records(n1) == records(n2)
    n1, n2 = failover(committed_txn("a", "1"), puts(("b", "1"), ("c", "2")), puts(("z", "theirs")))
    with pytest.raises(RollbackLimitError, match="2 committed transactions .* more than txn_rollback_limit 1"):
        rejoin(n1, n2, rollback_limit=1)
    with pytest.raises(UserError, match="txn_rollback_limit must be"):
        ReplicationConfig(txn_rollback_limit=-1)


def test_logs_that_share_nothing_need_a_network_restore():
    n1, n2 = open_node("n1"), open_node("n2", clock=later_clock)
    n1.become_master()
    committed_txn("a", "1")(n1)
    n2.become_master()
    committed_txn("a", "2")(n2)
    n1.become_unknown()
    before = (n1.log.end_lsn, records(n1))
    net = InMemoryNetwork()
    feeder, replica = link(net, n2, n1)
    with pytest.raises(NetworkRestoreRequiredError, match="share no sync point.*network restore"):
        settle(net, (feeder, replica))
    assert (n1.log.end_lsn, records(n1)) == before
    net.deliver()
    feeder.pump()
    assert "share no sync point" in feeder.restore_requested


def test_without_syncup_the_feeder_still_refuses_a_replica_that_is_ahead():
    n1, n2 = failover(committed_txn("a", "1"), puts(("b", "mine")), lambda env: None)
    net = InMemoryNetwork()
    feeder, replica = link(net, n2, n1, syncup=False)
    net.deliver()
    with pytest.raises(FeederError, match="must sync up first"):
        feeder.pump()


def test_a_rollback_needs_a_quiescent_node():
    n1, n2 = failover(committed_txn("a", "1"), puts(("b", "mine")), lambda env: None)
    n1.become_master()
    txn = n1.begin()
    n1.database("accounts").put("c", "open", txn=txn)
    with pytest.raises(SyncupError, match="quiescent"):
        n1.roll_back(2, n1.vlsn_index.find(2).lsn)


def test_the_checksum_leaves_lsns_out_but_not_the_content():
    values = {"txn_id": 7, "txn_prev_lsn": LSN(1, 0x40), "db_id": 3, "key": b"a", "data": b"1",
              "prev_lsn": LSN(1, 0x80), "abort_lsn": LSN(1, 0x80), "abort_known_deleted": False}
    here = LN_TX.encode(values)
    there = LN_TX.encode(dict(values, txn_prev_lsn=LSN(2, 0x10), prev_lsn=LSN(3, 0x99), abort_lsn=LSN(3, 0x99)))
    assert here != there  # the same entry on two nodes: LSNs are node-local
    assert item_checksum(LN_TX.code, 5, here) == item_checksum(LN_TX.code, 5, there)
    assert item_checksum(LN_TX.code, 6, here) != item_checksum(LN_TX.code, 5, here)
    assert item_checksum(LN_TX.code, 5, LN_TX.encode(dict(values, data=b"2"))) != item_checksum(LN_TX.code, 5, here)
    assert item_checksum(LN_TX.code, 5, LN_TX.encode(dict(values, txn_id=8))) != item_checksum(LN_TX.code, 5, here)


def test_syncup_messages_are_explicit_bytes():
    frame = wire.encode("g", "EntryInfo", vlsn=3, type_code=0x50, checksum=0x1234ABCD, lsn=LSN(1, 0x2A0).packed)
    assert frame[13:-4].hex(" ") == "03 00 00 00 00 00 00 00 50 cd ab 34 12 a0 02 00 00 01 00 00 00"
    for name, values in [("EntryRequest", {"vlsn": 7}), ("EntryNotFound", {"vlsn": 7, "first": 1, "last": 5}),
                         ("RestoreRequest", {"replica_vlsn": 9, "reason": "no sync point"})]:
        assert wire.decode(wire.encode("g", name, **values)).values == values


# -- invisible entries, and recovery ---------------------------------------------------------------------------
def test_invisible_entries_are_skipped_by_every_reader():
    n1, n2 = failover(committed_txn("a", "1"), committed_txn("b", "mine"), lambda env: None)
    rejoin(n1, n2)
    invisible = [e for e in n1.log.scan() if e.header.invisible]
    assert [e.vlsn for e in invisible] == [4, 5]
    assert n1.range.last == 3 and n1.vlsn_index.backward_scanner().find(3).lsn < invisible[0].lsn
    with pytest.raises(VLSNRangeError):
        n1.vlsn_index.find(4)  # the forward scanner does not return a rolled-back entry
    n1.crash(CrashMode.nothing())
    again = open_node("n1", n1.disk)  # recovery: the tree, the VLSN tracker
    assert records(again) == {b"a": b"1"} and again.range.last == 3 and check_index(again) is None
    n3 = open_node("n3")  # a feeder: the old master now feeds a new node
    n2.become_unknown()
    again.become_master()
    net = InMemoryNetwork()
    settle(net, link(net, again, n3))
    assert visible_stream(n3) == visible_stream(again) and records(n3) == {b"a": b"1"}


def rollback_with_crash_points():
    n1, n2 = failover(committed_txn("a", "1"), lambda env: (puts(("b", "x"))(env), committed_txn("a", "2")(env)),
                      lambda env: None)
    n1.sync()
    start = len(n1.disk.events)
    rejoin(n1, n2)
    return n1, start


def test_recovery_finishes_a_rollback_that_a_crash_cut_short():
    n1, start = rollback_with_crash_points()
    end = len(n1.disk.events)
    outcomes = set()
    for index in range(start, end):
        image = n1.disk.crash_image(index, CrashMode.nothing())
        env = open_node("n1", image)
        types = [e.type_name for e in env.log.scan()]
        finished = "RollbackStart" in types
        if finished:
            assert "RollbackEnd" in types and env.range.last == 3, index
            assert records(env) == {b"a": b"1"}, index
        else:
            assert env.range.last == 6 and records(env) == {b"a": b"2", b"b": b"x"}, index
        assert check_index(env) is None, index
        outcomes.add((finished, env.recovered_rollback is not None))
    assert outcomes == {(False, False), (True, True), (True, False)}  # not started, redone at open, done


# -- over TCP ------------------------------------------------------------------------------------------------------
def test_syncup_over_tcp():
    n1, n2 = failover(matchpoint, puts(("a", "old2")), puts(("a", "new2")))
    net = TcpNetwork()
    listener = net.listen()
    initiator = HandshakeInitiator(net.connect(listener.address, "n1"), "bank", GROUP.node("n1"))
    acceptor = HandshakeAcceptor(listener.accept(timeout=10), GROUP, "n2")
    assert acceptor.poll(timeout=10).name == "n1" and initiator.poll(timeout=10) == "n2"
    feeder = Feeder(n2, acceptor.channel, "n1")
    stop = threading.Event()
    errors = []

    def feed():
        try:
            while not stop.is_set():
                feeder.pump(timeout=0.05)
        except Exception as e:  # reported below
            errors.append(e)

    thread = threading.Thread(target=feed)
    thread.start()
    try:
        replica = Replica(n1, initiator.channel, "n2", syncup=True)
        replayed = 0
        while replayed < 2:  # n2's creation of "accounts" (VLSN 2) and its record (VLSN 3), maybe in two pumps
            replayed += replica.pump(timeout=10)
    finally:
        stop.set()
        thread.join()
        initiator.channel.close()
        acceptor.channel.close()
        listener.close()
    assert not errors and replica.syncup.result.matchpoint_vlsn == 1
    assert records(n1) == {b"a": b"new2"} and visible_stream(n1) == visible_stream(n2)


def test_the_spark_data_source_shows_the_invisible_flag(tmp_path):
    from minidb.spark.source import file_rows, log_file_partitions, to_record_batch

    n1, n2 = open_node("n1", str(tmp_path / "n1")), open_node("n2", clock=later_clock)
    n1.become_master()
    committed_txn("a", "1")(n1)
    net = InMemoryNetwork()
    settle(net, link(net, n1, n2, syncup=False))
    puts(("b", "mine"))(n1)
    n1.become_unknown()
    n2.become_master()
    rejoin(n1, n2)
    n1.close()
    rows = [row for part in log_file_partitions(str(tmp_path / "n1")) for columns in file_rows(part)
            for row in to_record_batch(part, columns).to_pylist()]
    flagged = [(row["vlsn"], row["type_name"]) for row in rows if row["invisible"]]
    assert flagged == [(4, "LN")]  # after the creation (1), the LN_TX (2) and the Commit (3)


def sync_up(net, feeder, replica):
    """Move the syncup's messages until the replica found the matchpoint and rolled back (no stream yet)."""
    while not replica.syncup.done:
        net.deliver()
        feeder.pump()
        net.deliver()
        replica.pump()


def test_a_replay_transaction_begun_after_the_matchpoint_is_forgotten():
    """n2 replayed the start of txn T that the new master n3 never saw: the rollback ends T on n2 (its
    locks released), and n3's own transaction with the same id replays on n2."""
    n1, n2, n3 = open_node("n1"), open_node("n2"), open_node("n3", clock=later_clock)
    n1.become_master()
    committed_txn("a", "1")(n1)
    net = InMemoryNetwork()
    to_n2, to_n3 = link(net, n1, n2, syncup=False), link(net, n1, n3, syncup=False)
    settle(net, to_n2, to_n3)
    txn = n1.begin()
    n1.database("accounts").put("k", "from T", txn=txn)
    settle(net, to_n2)
    assert list(n2.replay_txns) == [txn.id]
    n3.become_master()
    committed_txn("k", "from n3")(n3)
    assert next(e.txn_id for e in n3.log.scan() if e.vlsn == 4) == txn.id  # the same id, another transaction
    net = InMemoryNetwork()
    feeder, replica = link(net, n3, n2)
    sync_up(net, feeder, replica)
    assert [t for _, _, t in replica.syncup.rollback.rolled_back] == ["LN_TX"]
    assert not n2.replay_txns and not n2.env.txn_manager.active and records(n2) == {b"a": b"1"}
    settle(net, (feeder, replica))
    assert records(n2) == records(n3) == {b"a": b"1", b"k": b"from n3"}


def test_only_a_replicated_entry_can_be_made_invisible():
    n1 = open_node("n1")
    n1.become_master()
    committed_txn("a", "1")(n1)
    local = next(e for e in n1.log.scan() if e.type_name == "CkptEnd")
    replicated = n1.vlsn_index.find(1)
    with pytest.raises(UserError, match=f"the entry at {local.lsn} is not replicated"):
        n1.log.set_invisible([replicated.lsn, local.lsn])
    assert not n1.log.read(replicated.lsn).header.invisible  # refused before anything was written
    assert n1.log.set_invisible([replicated.lsn]) == 1 and n1.log.set_invisible([replicated.lsn]) == 0
    assert n1.log.read(replicated.lsn).header.invisible and not n1.log.read(local.lsn).header.invisible


# -- transactions open at the matchpoint ------------------------------------------------------------------------
def interleaved(n1, net, *pairs):
    """On master n1, after "accounts" was created (VLSN 1) and a first transaction committed (VLSNs 2, 3): T
    writes "t" (VLSN 4), U commits "u" (VLSNs 5, 6) while T is open; settled to ``pairs``.
    Returns T, still open on n1 (and on every replica, as a replay transaction)."""
    db = n1.database("accounts")
    t = n1.begin()
    db.put("t", "from T", txn=t)
    committed_txn("u", "from U")(n1)
    settle(net, *pairs)
    return t


def slot_data(env, key):
    """The data of the version the tree holds for ``key``, whoever locks it."""
    bin_node = env.env.db_tree.get("accounts").tree.search(key)
    index, exact = bin_node.find(key)
    return env.log.read(bin_node.lsns[index]).values["data"] if exact else None


def test_a_transaction_whose_commit_is_rolled_back_is_open_again_and_takes_the_new_masters_abort():
    """n1 commits T (VLSN 7) after its records and U's Commit reached n2; n2 takes over and aborts T (its
    predecessor never ended it). n1 rejoins: the matchpoint is U's Commit (VLSN 6), T's Commit is rolled
    back, T is open again on n1 (its record locked, in the tree), and n2's Abort of T replays."""
    n1, n2 = open_node("n1"), open_node("n2", clock=later_clock)
    n1.become_master()
    committed_txn("a", "1")(n1)
    net = InMemoryNetwork()
    to_n2 = link(net, n1, n2, syncup=False)
    t = interleaved(n1, net, to_n2)
    t.commit()  # VLSN 7, never sent to n2
    n1.become_unknown()
    n2.become_master()
    aborts = [(e.vlsn, e.txn_id) for e in n2.log.scan() if e.type_name == "Abort"]
    assert aborts == [(7, t.id)] and records(n2) == {b"a": b"1", b"u": b"from U"}
    committed_txn("b", "2")(n2)
    net = InMemoryNetwork()
    feeder, replica = link(net, n2, n1)
    sync_up(net, feeder, replica)
    assert replica.syncup.result.matchpoint_vlsn == 6
    assert [(v, k) for v, _, k in replica.syncup.rollback.rolled_back] == [(7, "Commit")]
    assert list(n1.replay_txns) == [t.id] and slot_data(n1, b"t") == b"from T"
    assert n1.env.locks.held_by(t.id) == [(n1.env.db_tree.get("accounts").id, b"t")]
    settle(net, (feeder, replica))
    assert records(n1) == records(n2) == {b"a": b"1", b"u": b"from U", b"b": b"2"}
    assert not n1.replay_txns and not n1.env.locks.held_by(t.id)
    assert visible_stream(n1) == visible_stream(n2)


def test_a_replica_that_crashed_inside_a_transaction_replays_its_commit():
    """n2 replayed T's record and U's Commit, then crashed before T's Commit reached it: recovery undid T
    as a loser. When n2 takes the stream again (from VLSN 7), T is open again with its record, and the
    master's Commit of T replays on it."""
    n1, n2 = open_node("n1"), open_node("n2")
    n1.become_master()
    committed_txn("a", "1")(n1)
    net = InMemoryNetwork()
    t = interleaved(n1, net, link(net, n1, n2, syncup=False))
    n2.sync()
    n2.crash(CrashMode.nothing())
    n2 = open_node("n2", n2.disk)
    assert records(n2) == {b"a": b"1", b"u": b"from U"} and not n2.replay_txns  # T undone by recovery
    t.commit()  # VLSN 7
    net = InMemoryNetwork()
    pair = link(net, n1, n2)
    settle(net, pair)
    assert pair[1].start_vlsn == 7
    assert records(n2) == records(n1) == {b"a": b"1", b"t": b"from T", b"u": b"from U"}
    assert not n2.replay_txns and visible_stream(n1) == visible_stream(n2)
