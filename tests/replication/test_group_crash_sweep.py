"""The replication group's crash sweep (minidb.crashtest.group): three nodes, failovers, partitions
and node crashes at sampled points of each node's disk history, then convergence and the checks (a)-(d).

Every seed ends with all nodes equal, no acknowledged commit lost, equal VLSN streams and every rollback
finished; the workloads really fail over, roll back, restore, and crash in the middle of rollbacks; a broken
rule (a rollback that leaves the entries visible, an election that picks the least up-to-date node) is caught.
"""

import pytest

from minidb.crashtest.group import crash_sweep, run_group_workload
from minidb.log.manager import LogManager
from minidb.replication.group import elections

from tests.sweeps import assert_chunk_has_no_violations

CHUNKS = 4
SEEDS_PER_CHUNK = 50  # 200 workloads
OPS = 30


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_group_crash_sweep_has_no_violations(chunk):
    assert_chunk_has_no_violations(crash_sweep, chunk, SEEDS_PER_CHUNK, ops=OPS, min_points_per_seed=1)


def test_the_workloads_fail_over_roll_back_restore_and_crash_inside_rollbacks():
    totals = dict(failovers=0, rollbacks=0, hard_recoveries=0, restores=0, redone_at_open=0, acknowledged=0,
                  rejoin_crashes=0)
    for seed in range(20):
        workload, group = run_group_workload(seed, OPS)
        totals["failovers"] += workload.failovers
        totals["rollbacks"] += workload.rollbacks
        totals["hard_recoveries"] += workload.hard_recoveries
        totals["restores"] += workload.restores
        totals["redone_at_open"] += workload.redone_at_open
        totals["acknowledged"] += sum(w.acknowledged for w in workload.writes)
        totals["rejoin_crashes"] += sum("while it rejoins" in c for c in workload.crashes)
        group.close()
    assert all(totals.values()), totals
    assert totals["failovers"] >= 10 and totals["acknowledged"] >= 100, totals


def test_the_checker_catches_a_rollback_that_leaves_entries_visible(monkeypatch):
    monkeypatch.setattr(LogManager, "set_invisible", lambda self, lsns: 0)
    violations = [v for seed in range(13) for v in crash_sweep(seed, OPS).violations]
    # The streams disagree (c), or, in a rollback across a checkpoint, the rollback itself finds its entries
    # still visible before it logs RollbackEnd (the node's environment is then invalid: it never converges).
    assert any("(c)" in v or "is still visible; no RollbackEnd was logged" in v for v in violations), violations[:3]


def test_the_checker_catches_an_election_that_picks_the_least_up_to_date_node(monkeypatch):
    def least_up_to_date(candidates):
        electable = [c for c in candidates if c.electable]
        return min(electable, key=lambda c: (c.last_txn_end, c.node_name), default=None)

    monkeypatch.setattr(elections, "choose_master", least_up_to_date)
    violations = [v for seed in range(8) for v in crash_sweep(seed, OPS).violations]
    assert any("(a)" in v and "acknowledged" in v for v in violations), violations[:3]


def test_the_command_line_runs_the_group_sweep(capsys):
    from minidb.cli import main

    assert main(["crashtest", "group", "--seed", "3", "--ops", "30"]) == 0
    out = capsys.readouterr().out
    assert int(out.split("crash points: ")[1].split(",")[0]) >= 1 and out.strip().endswith("violations: 0")


def test_a_database_on_one_node_only_is_named_in_the_violation():
    """Check (b)'s message names what differs, even when it is a database (empty) that one node lacks."""
    from minidb.crashtest.group import _diff

    assert _diff({"a": {}, "b": {b"k": b"v"}}, {"b": {b"k": b"v"}}) == "database 'a' exists here only (0 records)"
    assert _diff({"b": {b"k": b"v"}}, {"b": {b"k": b"w"}}) == "database 'b' key b'k': b'v' != b'w'"


@pytest.mark.parametrize("seed", [3012, 3332, 6374])
def test_a_database_whose_creation_a_failover_rolled_back_is_on_no_node(seed):
    """The workloads where a replica kept an empty database the new master never had: the first
    transaction's database was created on a master that died before its replicas saw the transaction;
    the creation is in the stream now, and the rollback that undoes it removes the database."""
    result = crash_sweep(seed, ops=30)
    assert result.points >= 1 and result.violations == []
