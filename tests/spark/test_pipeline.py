"""analyze(): every table as Parquet, every figure as PNG, the summary people read."""

import os
import shutil

import pyarrow.parquet as pq

from minidb.log import file_name
from minidb.spark import analytics as A
from minidb.spark.pipeline import FIGURES, TABLES, analyses


def test_analyze_writes_every_table_and_figure(generated, logs, analyzed):
    out, result = analyzed
    names = set(analyses(logs))
    assert set(result.counts) == names == set(TABLES) and len(names) == 13
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


def test_item7_analyze_exits_1_on_damaged_logs_unless_told_to_tolerate_them(spark, generated, tmp_path, capsys,
                                                                           monkeypatch):
    from minidb.cli import main

    source = next(e for e in generated.envs if e.role == "standalone" and e.files >= 3)
    path = tmp_path / "logs" / source.name
    shutil.copytree(source.path, path)
    (path / file_name(2)).write_bytes(b"")  # a middle file emptied: every entry left reads as intact
    out = tmp_path / "out"
    args = ["spark", "analyze", str(path), "--master", "local[1]", "--out", str(out)]
    # The command as a user runs it (what `python -m minidb` exits with is what main returns), on the shared
    # session: the command stops its session at the end, not the shared one.
    monkeypatch.setattr(type(spark), "stop", lambda self: None)
    assert main(args) == 1
    printed = capsys.readouterr()
    ours = [line for line in printed.err.splitlines() if line.startswith("minidb spark analyze:")]
    assert ours == [f"minidb spark analyze: the logs are damaged: 1 problem row in {out / 'problems'}; the first: "
                    f"{source.name}/00000002.jdb at offset 0x0: log file is empty but is not the last file "
                    f"(--tolerate-damage to exit 0)"]
    assert "Traceback" not in printed.err
    assert "(1 flagged bad)" in printed.out and pq.read_table(out / "problems").num_rows == 1
    # again on its own output, tolerating the damage: the earlier tables are replaced
    assert main([*args, "--tolerate-damage"]) == 0
    assert "(1 flagged bad)" in capsys.readouterr().out
    assert sorted(os.listdir(out)) == sorted({*TABLES, *FIGURES, ".minidb-output"})


def test_analyze_lists_the_tables_spark_wrote_and_not_a_file_saved_meanwhile(spark, generated, tmp_path, capsys,
                                                                              monkeypatch):
    from minidb.cli import main
    from minidb.io import created

    monkeypatch.setattr(type(spark), "stop", lambda self: None)  # the command stops its session: not the shared one
    out = tmp_path / "out"
    saved = []

    def user_saves_a_file(path):  # right after the first table is written, before the others
        if not saved:
            saved.append(path)
            (out / "notes.txt").write_text("the user's own notes")

    one_env = generated.envs[0].path  # the listing does not depend on how much is read: one environment
    with created.watching(user_saves_a_file):
        assert main(["spark", "analyze", one_env, "--out", str(out)]) == 0
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"warning: {out / 'notes.txt'} was not written by minidb spark analyze; it is left alone and not listed")
    listed = (out / ".minidb-output").read_text().splitlines()[1:]
    top = {entry.split("/")[0] for entry in listed}
    assert top == set(TABLES) | set(FIGURES) and "notes.txt" not in listed
    assert all(entry.endswith("/") or (out / entry).is_file() for entry in listed)
    assert any(entry.endswith(".parquet") for entry in listed)
