"""The pipeline on logs the log store wrote: rows as the reader sees them, the analyses against
the generator's report, and a replicated group whose nodes agree (at other LSNs) until one diverges."""

import pytest
from pyspark.testing import assertDataFrameEqual

from minidb.log import LSN
from minidb.spark import analytics as A
from minidb.spark.generate import GenerateRequest, generate

from tests.spark.test_source import all_envs, expected_frame


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    out = tmp_path_factory.mktemp("logstore")
    return generate("logstore", GenerateRequest(str(out), envs=4, ops=240, seed=5, group=3,
                                                file_max=8 * 1024, ckpt_every=50))


@pytest.fixture(scope="module")
def store_logs(spark, store):
    return spark.read.format("minidb").load(store.request.out).cache()


def test_every_entry_as_the_reader_sees_it(spark, store, store_logs):
    assert store_logs.count() == sum(env.entries for env in store.envs)
    assertDataFrameEqual(store_logs, expected_frame(spark, all_envs(store)))


def test_transactions_and_checkpoints_match_the_report(store, store_logs):
    table = A.transactions(store_logs).collect()
    for env in store.envs:
        mine = {r.txn_id: r for r in table if r.env == env.name}
        assert set(mine) == set(env.txns)
        for txn_id, written in env.txns.items():
            row = mine[txn_id]
            assert (row.entries, row.outcome, row.chain_ok) == (written.entries, written.outcome, True)
            assert LSN.parse(row.first_lsn) == written.first_lsn and LSN.parse(row.last_lsn) == written.last_lsn
    ckpts = A.checkpoints(store_logs).collect()
    for env in store.envs:
        mine = sorted((r for r in ckpts if r.env == env.name), key=lambda r: LSN.parse(r.start_lsn))
        assert [LSN.parse(r.start_lsn) for r in mine] == [c.start_lsn for c in env.checkpoints]
        assert all(r.end_lsn is not None for r in mine)


def test_the_group_agrees_until_the_diverging_node(store, store_logs):
    group = store.group
    streams = {r.env: r for r in A.vlsn_streams(store_logs).collect()}
    assert set(streams) == set(group.nodes)
    assert A.vlsn_gaps(store_logs).count() == 0 and A.vlsn_duplicates(store_logs).count() == 0
    rows = A.first_divergence(store_logs).collect()
    assert {r.vlsn for r in rows} == {group.first_divergence}
    assert {r.env: r.in_majority for r in rows} == {env: env != group.diverging_node for env in group.nodes}
    agreeing = [env for env in group.nodes if env != group.diverging_node]
    assert A.vlsn_agreement(store_logs, agreeing).where("not agree").count() == 0
    # the same VLSNs at other LSNs: the agreement does not come from identical logs
    placed = store_logs.where("vlsn is not null").select("env", "vlsn", "lsn").collect()
    by_env = {env: tuple(r.lsn for r in sorted((r for r in placed if r.env == env), key=lambda r: r.vlsn))
              for env in group.nodes}
    assert len(set(by_env.values())) == len(group.nodes)
