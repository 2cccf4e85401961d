"""`minidb tour`, the main job, runs end to end; its log works with printlog and verify.

The tour ends with the Spark analysis of the environments it generated. The test lives with the other
Spark tests and uses their local session (``spark``, tests/spark/conftest.py), which all three tours of
the test find running and leave running (a tour stops only a Spark it started): the suite starts no
JVM for it, and its analyses run on a JVM already warm.
"""

import re

from minidb.cli import main
from minidb.cli.output import entries_below


def test_tour_then_printlog_and_verify_item5_reruns_on_its_own_output_only(tmp_path, capsys, spark):
    figures, workdir = tmp_path / "figures", tmp_path / "work"
    assert main(["tour", "--out", str(figures), "--workdir", str(workdir)]) == 0
    captured = capsys.readouterr()
    out = captured.out
    # the Spark part: the analysis of the generated environments ran, with a progress bar, and summed up
    spark_part = out[out.index("== 11. The data pipeline on Spark"):out.index("== 12. Figures")]
    assert spark_part.splitlines()[1:] == [
        f"the same job as: minidb spark analyze {workdir / 'envs'} --out {workdir / 'spark'}",
        "Spark 4.3.0 in local mode (local[2])",
        f"read 4 environments, 14 log files, 2,611 entries (0 flagged bad) from {workdir / 'envs'}",
        "transactions: 315 (210 committed, 93 aborted, 12 open); the largest has 15 entries; broken prev chains: 0",
        "checkpoints: 12 (12 complete); CkptStart to CkptEnd 3,501 log bytes on average, 35,633 between starts",
        "VLSN streams: 3 environments; gaps: none; duplicates: none",
        "replication group: first divergence at VLSN 189 (env-02 differs from the majority)",
        f"wrote 13 Parquet tables and 4 figures to {workdir / 'spark'}",
        "",
    ]
    assert "spark analyze: 100%" in captured.err and "17/17" in captured.err
    # every file the tour wrote was reported as created (no "not written by" warning): the marker lists it all
    assert "warning:" not in captured.err
    from minidb.spark.pipeline import FIGURES as SPARK_FIGURES, TABLES

    assert sorted(p.name for p in (workdir / "spark").iterdir()) == sorted([*TABLES, *SPARK_FIGURES])
    assert not spark.sparkContext._jsc.sc().isStopped()  # the tour left the test's Spark running
    for expected in ("The disk layer", "The shared log on real files", "group commit: 4 threads",
                     "A crash with a torn tail", "violations: 0", "wrote ",
                     "The page store", "consistency check: ok", "crash sweep of the volume",
                     "ARIES restart", "undo: losers T3", "crash sweep of transactions",
                     "The lock manager", "T3: SH r(1.3.48.1) -> DeadlockVictim",
                     "T3 found its fingerprint {5,10} in T1's digest {0,5,6,10,12,15}",
                     "The log store", "step 10: dirty map state NONE", "case 3 with the evictor bug option",
                     "Environments for the data pipeline", "env-02 diverges from VLSN",
                     "Replication: VLSNs and the VLSN index", "a put woke it with VLSN 46",
                     "merged (the recovery tracker wins where they overlap)", "next VLSN: 80",
                     "replication crash sweep, seed 0, 10 operations: crash points: 136, violations: 0"):
        assert expected in out
    # the cleaner and the eraser are on in the log store's part, and did something
    assert re.search(r"the data eraser: one cycle, [1-9][0-9]* entries of deleted records overwritten", out)
    assert re.search(r"the log cleaner: [1-9][0-9]* of [0-9]+ log files cleaned .*, [1-9][0-9]* deleted", out)
    from minidb.viz.gallery import FIGURES

    assert sorted(p.name for p in figures.iterdir()) == sorted([*FIGURES, ".minidb-output"])
    assert main(["verify", str(workdir / "logstore")]) == 0
    capsys.readouterr()
    assert main(["printlog", str(workdir / "replication"), "--type", "Matchpoint"]) == 0
    assert '<vlsn v="45"/><Matchpoint' in capsys.readouterr().out
    assert main(["verify", str(workdir / "replication")]) == 0
    capsys.readouterr()
    log_dir = workdir / "log"
    assert main(["printlog", str(log_dir), "--type", "Trace", "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 162  # 61 entries, 4 threads x 25 commits, "the tour ends"
    assert main(["verify", str(log_dir)]) == 0
    assert capsys.readouterr().out.startswith("ok: ")
    assert sorted(p.name for p in (workdir / "envs").iterdir()) == ["env-00", "env-01", "env-02", "env-03"]
    assert main(["printlog", str(workdir / "transactions"), "--type", "clr_rec_splice", "-q"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2  # T2 aborted, T3 rolled back by restart
    # a second tour starts a fresh log in the same place: the marker says the tour wrote all of it
    listed = (workdir / ".minidb-output").read_text().splitlines()
    assert listed[0] == "minidb output of: minidb tour" and "log/00000001.jdb" in listed and "envs/" in listed
    assert listed[1:] == entries_below(str(workdir))
    assert main(["tour", "--out", str(figures), "--workdir", str(workdir)]) == 0
    assert "warning:" not in capsys.readouterr().err
    assert main(["printlog", str(log_dir), "--type", "Trace", "-q"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 162

    # item 5: a file the tour did not write, put into its output, makes the next tour refuse and delete nothing
    (log_dir / "00000009.jdb").write_bytes(b"the user's own log file")
    before = {p: p.read_bytes() for p in workdir.rglob("*") if p.is_file()}
    assert main(["tour", "--out", str(figures), "--workdir", str(workdir)]) == 2
    assert capsys.readouterr().err.strip() == (f"minidb tour: error: {log_dir / '00000009.jdb'}: not written by "
                                               f"minidb tour; move it away or choose another directory")
    assert {p: p.read_bytes() for p in workdir.rglob("*") if p.is_file()} == before
