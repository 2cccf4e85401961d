"""analyze(): every table as Parquet, every figure as PNG, the summary people read."""

import os

import pyarrow.parquet as pq

from minidb.spark import analytics as A
from minidb.spark.pipeline import FIGURES, analyses


def test_analyze_writes_every_table_and_figure(generated, logs, analyzed):
    out, result = analyzed
    names = set(analyses(logs))
    assert set(result.counts) == names and len(names) == 13
    assert sorted(os.listdir(out)) == sorted(names | set(FIGURES))
    for name in FIGURES:
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert result.entries == sum(env.entries for env in generated.envs)
    for name, count in result.counts.items():
        assert pq.read_table(out / name).num_rows == count, name
    # the tables hold what the analyses compute, rows in order
    written = pq.read_table(out / "transactions").to_pylist()
    assert written == [r.asDict() for r in A.transactions(logs).collect()]
    divergence = pq.read_table(out / "first_divergence").to_pylist()
    assert {r["vlsn"] for r in divergence} == {generated.group.first_divergence}
    assert pq.read_table(out / "problems").num_rows == 0


def test_the_summary_reports_what_was_found(generated, analyzed):
    out, result = analyzed
    text = result.summary()
    group = generated.group
    txns = sum(len(env.txns) for env in generated.envs)
    files = sum(env.files for env in generated.envs)
    assert f"read 5 environments, {files} log files, {result.entries:,} entries (0 flagged bad)" in text
    assert f"transactions: {txns:,} (" in text
    [gap_env] = group.gaps
    [dup_env] = group.duplicates
    assert f"gaps: {gap_env} misses {group.gaps[gap_env][0]}" in text
    assert f"duplicates: {dup_env} repeats {group.duplicates[dup_env][0]}" in text
    assert (f"first divergence at VLSN {group.first_divergence} ({group.diverging_node} differs from the majority)"
            in text)
    assert text.endswith(f"wrote 13 Parquet tables and 4 figures to {out}")
