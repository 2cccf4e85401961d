"""Every analysis, checked against what the generator wrote and what minidb.log's reader reads."""

from collections import Counter

from minidb.io import OSDisk
from minidb.log import LSN, NULL_LSN, TRACE, LogManager
from minidb.spark import analytics as A
from minidb.spark.logdef import GEN_CKPT_END, GEN_CKPT_START, GEN_COMMIT, GEN_UPDATE

from tests.spark.expected import file_sizes, log_pos, reader_rows


def parse(text):
    return LSN.parse(text) if text is not None else None


def test_log_position_counts_every_earlier_file_whole(generated, logs):
    env = max(generated.envs, key=lambda e: e.files)
    sizes = file_sizes(env.path)
    rows = A.with_log_position(logs.where(f"env = '{env.name}'")).select("lsn", "log_pos").collect()
    assert len(rows) == env.entries
    assert all(r.log_pos == log_pos(sizes, LSN.parse(r.lsn)) for r in rows)


def test_entries_by_type(generated, logs):
    table = {r.type_name: r for r in A.entries_by_type(logs).collect()}
    expected = sum((env.types for env in generated.envs), Counter())
    assert {name: r.entries for name, r in table.items()} == dict(expected)
    assert sum(r.bytes for r in table.values()) == sum(env.bytes for env in generated.envs)
    assert all(r.invalid == 0 and r.envs == len(generated.envs) for r in table.values())
    assert [r.type_name for r in A.entries_by_type(logs).collect()][:2] == ["FileHeader", "Trace"]
    assert table["GenCkptStart"].mean_size == 14 + 8 and table["GenCkptStart"].bytes == 22 * expected["GenCkptStart"]


def test_entries_by_file_and_file_summary(spark, generated, logs):
    rows = [r for env in generated.envs for r in reader_rows(env.path, env.name)]
    expected = Counter((r["env"], r["file"], r["type_name"]) for r in rows)
    table = A.entries_by_file(logs).collect()
    assert {(r.env, r.file, r.type_name): r.entries for r in table} == dict(expected)
    files = A.file_summary(logs).collect()
    for env in generated.envs:
        sizes = file_sizes(env.path)
        mine = [r for r in files if r.env == env.name]
        assert {r.file: r.bytes for r in mine} == sizes  # every byte of every file is an entry
        assert all(r.first_lsn == f"0x{r.file:x}/0x0" and r.invalid == 0 and r.first_problem is None for r in mine)
        last = {n: max(r["offset"] for r in rows if r["env"] == env.name and r["file"] == n) for n in sizes}
        assert {r.file: LSN.parse(r.last_lsn).offset for r in mine} == last


def test_transactions_match_what_was_written(generated, logs):
    table = A.transactions(logs).collect()
    assert len(table) == sum(len(env.txns) for env in generated.envs)
    for env in generated.envs:
        sizes = file_sizes(env.path)
        mine = {r.txn_id: r for r in table if r.env == env.name}
        assert set(mine) == set(env.txns)
        for txn_id, written in env.txns.items():
            row = mine[txn_id]
            assert (row.entries, row.outcome) == (written.entries, written.outcome)
            assert row.updates == written.entries - (written.outcome != "open")
            assert (parse(row.first_lsn), parse(row.last_lsn)) == (written.first_lsn, written.last_lsn)
            assert row.span_bytes == log_pos(sizes, written.last_lsn) - log_pos(sizes, written.first_lsn)
            assert row.chain_ok
    outcomes = Counter(r.outcome for r in table)
    assert set(outcomes) == {"commit", "abort", "open"} and all(outcomes.values())


def test_transaction_summary_and_sizes(generated, logs):
    txns = A.transactions(logs)
    summary = A.transaction_summary(txns).collect()
    for env in generated.envs:
        written = Counter(t.outcome for t in env.txns.values())
        assert {r.outcome: r.transactions for r in summary if r.env == env.name} == dict(written)
        for r in summary:
            if r.env == env.name:
                sizes = [t.entries for t in env.txns.values() if t.outcome == r.outcome]
                assert r.max_entries == max(sizes) and abs(r.mean_entries - sum(sizes) / len(sizes)) < 1e-9
                assert r.broken_chains == 0
    histogram = Counter((t.outcome, t.entries) for env in generated.envs for t in env.txns.values())
    assert {(r.outcome, r.entries): r.transactions for r in A.transaction_sizes(txns).collect()} == dict(histogram)


def test_a_broken_transaction_chain_is_found(spark, tmp_path):
    log = LogManager(OSDisk(tmp_path / "env", create=True))
    first = log.append(GEN_UPDATE, {"txn_id": 5, "txn_prev_lsn": NULL_LSN, "key": 1, "data": b"a"})
    second = log.append(GEN_UPDATE, {"txn_id": 5, "txn_prev_lsn": first, "key": 2, "data": b"b"})
    log.append(GEN_UPDATE, {"txn_id": 5, "txn_prev_lsn": first, "key": 3, "data": b"c"})  # skips `second`
    log.append(GEN_COMMIT, {"txn_id": 5, "txn_prev_lsn": second})
    log.append(GEN_UPDATE, {"txn_id": 6, "txn_prev_lsn": NULL_LSN, "key": 4, "data": b"d"})
    log.close()
    df = spark.read.format("minidb").load(str(tmp_path / "env"))
    rows = {r.txn_id: r for r in A.transactions(df).collect()}
    assert (rows[5].entries, rows[5].outcome, rows[5].chain_ok) == (4, "commit", False)
    assert (rows[6].entries, rows[6].outcome, rows[6].chain_ok) == (1, "open", True)
    assert rows[6].span_bytes == 0


def test_checkpoints_match_what_was_written(generated, logs):
    table = A.checkpoints(logs).collect()
    assert len(table) == sum(len(env.checkpoints) for env in generated.envs)
    for env in generated.envs:
        sizes = file_sizes(env.path)
        mine = [r for r in table if r.env == env.name]
        assert [r.ckpt for r in mine] == list(range(1, len(env.checkpoints) + 1))
        for row, written in zip(mine, env.checkpoints, strict=True):
            assert (parse(row.start_lsn), parse(row.end_lsn)) == (written.start_lsn, written.end_lsn)
            assert row.complete == (written.end_lsn is not None)
            if written.end_lsn is not None:
                assert row.duration_bytes == log_pos(sizes, written.end_lsn) - log_pos(sizes, written.start_lsn)
        starts = [log_pos(sizes, c.start_lsn) for c in env.checkpoints]
        assert [r.interval_bytes for r in mine] == [None] + [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert sum(len(env.checkpoints) >= 3 for env in generated.envs) >= 3  # real material


def test_a_checkpoint_that_never_ended(spark, tmp_path):
    log = LogManager(OSDisk(tmp_path / "env", create=True))
    start = log.append(GEN_CKPT_START, {"ckpt_id": 1})
    log.append(TRACE, {"message": "work during the checkpoint"})
    end = log.append(GEN_CKPT_END, {"ckpt_id": 1, "ckpt_start_lsn": start, "first_active_lsn": start})
    second = log.append(GEN_CKPT_START, {"ckpt_id": 2})
    third = log.append(GEN_CKPT_START, {"ckpt_id": 3})  # the second never ended
    log.close()
    df = spark.read.format("minidb").load(str(tmp_path / "env"))
    rows = A.checkpoints(df).collect()
    assert [(r.ckpt, r.start_lsn, r.end_lsn, r.complete) for r in rows] == [
        (1, str(start), str(end), True), (2, str(second), None, False), (3, str(third), None, False)]
    assert rows[0].duration_bytes == end.offset - start.offset and rows[1].duration_bytes is None
    assert [r.interval_bytes for r in rows] == [None, second.offset - start.offset, third.offset - second.offset]


def test_vlsn_streams_gaps_and_duplicates(generated, logs):
    group = generated.group
    streams = {r.env: r for r in A.vlsn_streams(logs).collect()}
    assert sorted(streams) == group.nodes  # the standalone environments have no VLSNs
    for env in group.nodes:
        written = generated.env(env).vlsns
        row = streams[env]
        assert (row.entries, row.first_vlsn, row.last_vlsn) == (len(written), 1, group.last_vlsn)
        assert row.missing == len(group.gaps.get(env, [])) and row.repeated == len(group.duplicates.get(env, []))
    gaps = A.vlsn_gaps(logs).collect()
    assert {r.env: [r.gap_start] for r in gaps} == group.gaps
    assert all(r.gap_start == r.gap_end and r.missing == 1 for r in gaps)
    duplicates = A.vlsn_duplicates(logs).collect()
    assert {r.env: [r.vlsn] for r in duplicates} == group.duplicates
    [dup] = duplicates
    assert dup.copies == 2 and dup.same_content and len(dup.lsns) == 2
    assert LSN.parse(dup.lsns[0]) < LSN.parse(dup.lsns[1])


def test_agreement_and_the_first_divergence(generated, logs):
    group = generated.group
    agreement = A.vlsn_agreement(logs).collect()
    assert [r.vlsn for r in agreement] == list(range(1, group.last_vlsn + 1))
    for r in agreement:
        assert r.envs_present == (len(group.nodes) - 1 if any(r.vlsn in v for v in group.gaps.values())
                                  else len(group.nodes))
    disagree = [r.vlsn for r in agreement if not r.agree]
    assert disagree[0] == group.first_divergence
    assert all(r.agree for r in agreement if r.vlsn < group.first_divergence)
    rows = A.first_divergence(logs).collect()
    assert {r.vlsn for r in rows} == {group.first_divergence}
    assert {r.env: r.in_majority for r in rows} == {env: env != group.diverging_node for env in group.nodes}
    assert all(r.type_name == "GenUpdate" and r.envs_present == len(group.nodes) for r in rows)
    # the nodes that agree are exactly the ones holding the majority version
    assert len({r.item_checksum for r in rows}) == 2


def test_a_group_without_the_diverging_node_agrees_everywhere(generated, logs):
    agreeing = [env for env in generated.group.nodes if env != generated.group.diverging_node]
    assert A.first_divergence(logs, agreeing).count() == 0
    assert A.vlsn_agreement(logs, agreeing).where("not agree").count() == 0


def test_bad_rows_are_counted_but_not_analysed(spark, generated, tmp_path):
    import shutil

    env = generated.envs[0]
    copy = tmp_path / env.name
    shutil.copytree(env.path, copy)
    rows = reader_rows(str(copy), env.name)
    victim = next(r for r in rows if r["type_name"] == "GenCommit" and r["file"] == 1)
    with open(copy / "00000001.jdb", "r+b") as f:
        f.seek(victim["offset"] + victim["entry_size"] - 1)
        f.write(bytes([(victim["lsn_packed"] & 0xFF) ^ 0xA5]))
    df = spark.read.format("minidb").load(str(copy))
    by_type = {r.type_name: r for r in A.entries_by_type(df).collect()}
    assert by_type["GenCommit"].invalid == 1 and by_type["GenCommit"].entries == env.types["GenCommit"]
    txns = {r.txn_id: r for r in A.transactions(df).collect()}
    assert txns[victim["txn_id"]].outcome == "open"  # its commit can no longer be trusted
    [summary] = [r for r in A.file_summary(df).collect() if r.file == 1]
    assert summary.invalid == 1 and summary.first_problem.startswith("corrupt: checksum mismatch")
