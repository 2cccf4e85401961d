"""The pipeline behind ``minidb spark analyze``: every analysis, as tables and figures.

:func:`analyze` reads the logs under a path with the ``minidb`` data source
(cached: the logs are read once), runs every analysis of
:mod:`minidb.spark.analytics`, writes each result as a Parquet table
``OUT/<name>/`` (one file, rows sorted) and draws the pictures of
:mod:`minidb.viz.pipeline` into ``OUT/<name>.png``. The same code runs in
local mode and on a cluster; on a cluster, the logs and ``OUT`` must be on a
file system every node sees (the executors read the logs and write the
tables), while the figures are drawn by the driver. :func:`analyze` never
deletes anything: a table or figure already in ``OUT`` is an error before
Spark reads anything (``minidb spark analyze`` clears its own earlier
output first).

Tables (see each function's documentation for the columns)::

    entries_by_type      entries_by_file      files
    transactions         transaction_summary  transaction_sizes
    checkpoints
    vlsn_streams         vlsn_gaps            vlsn_duplicates
    vlsn_agreement       first_divergence
    problems             every row flagged bad: where, and what is wrong

Figures: ``entry_types_per_file.png``, ``transaction_sizes.png``,
``checkpoint_intervals.png``, ``vlsn_streams.png``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession, functions as F

from minidb.errors import UserError
from minidb.io import created
from minidb.spark import analytics as A
from minidb.spark.source import FORMAT
from minidb.viz.pipeline import (
    draw_checkpoint_intervals,
    draw_entry_types_per_file,
    draw_transaction_sizes,
    draw_vlsn_streams,
)
from minidb.viz.style import save


def read_logs(spark: SparkSession, path: str, verify_checksums: bool = True) -> DataFrame:
    """``spark.read.format("minidb").load(path)`` with the checksum option set."""
    return (spark.read.format(FORMAT).option("verify_checksums", str(verify_checksums).lower()).load(path))


def problems(df: DataFrame) -> DataFrame:
    """Every row flagged bad. Columns: env, file, offset, lsn, type_name, problem."""
    return (df.where(F.col("problem").isNotNull())
            .select("env", "file", "offset", "lsn", "type_name", "problem")
            .orderBy("env", "file", "offset"))


TABLES = ("entries_by_type", "entries_by_file", "files", "transactions", "transaction_summary",
          "transaction_sizes", "checkpoints", "vlsn_streams", "vlsn_gaps", "vlsn_duplicates",
          "vlsn_agreement", "first_divergence", "problems")


def analyses(df: DataFrame) -> dict[str, DataFrame]:
    """Every table of the pipeline, by name, computed from the entries ``df``."""
    txns = A.transactions(df)
    return {
        "entries_by_type": A.entries_by_type(df),
        "entries_by_file": A.entries_by_file(df),
        "files": A.file_summary(df),
        "transactions": txns,
        "transaction_summary": A.transaction_summary(txns),
        "transaction_sizes": A.transaction_sizes(txns),
        "checkpoints": A.checkpoints(df),
        "vlsn_streams": A.vlsn_streams(df),
        "vlsn_gaps": A.vlsn_gaps(df),
        "vlsn_duplicates": A.vlsn_duplicates(df),
        "vlsn_agreement": A.vlsn_agreement(df),
        "first_divergence": A.first_divergence(df),
        "problems": problems(df),
    }


@dataclass
class AnalyzeResult:
    path: str
    out: str
    entries: int
    rows: dict[str, list] = field(default_factory=dict)  # the small tables, collected
    counts: dict[str, int] = field(default_factory=dict)  # rows per table written
    figures: list[str] = field(default_factory=list)

    def summary(self) -> str:
        envs = {r[0] for r in self.rows["files"]}
        bad = len(self.rows["problems"])
        lines = [f"read {len(envs)} environments, {len(self.rows['files'])} log files, "
                 f"{self.entries:,} entries ({bad} flagged bad) from {self.path}"]
        by_outcome: dict[str, int] = {}
        largest, broken = 0, 0
        for _env, outcome, count, _mean, biggest, _mspan, _xspan, chains in self.rows["transaction_summary"]:
            by_outcome[outcome] = by_outcome.get(outcome, 0) + count
            largest, broken = max(largest, biggest), broken + chains
        total = sum(by_outcome.values())
        lines.append(f"transactions: {total:,} ({by_outcome.get('commit', 0):,} committed, "
                     f"{by_outcome.get('abort', 0):,} aborted, {by_outcome.get('open', 0):,} open); "
                     f"the largest has {largest} entries; broken prev chains: {broken}")
        ckpts = self.rows["checkpoints"]
        done = [r[5] for r in ckpts if r[5] is not None]
        spaced = [r[6] for r in ckpts if r[6] is not None]
        if ckpts:
            lines.append(f"checkpoints: {len(ckpts)} ({len(done)} complete); "
                         + (f"CkptStart to CkptEnd {sum(done) / len(done):,.0f} log bytes on average" if done else "none ended")
                         + (f", {sum(spaced) / len(spaced):,.0f} between starts" if spaced else ""))
        else:
            lines.append("checkpoints: none")
        streams = self.rows["vlsn_streams"]
        if streams:
            gaps = ", ".join(f"{g[0]} misses {g[1]}" + (f"..{g[2]}" if g[2] != g[1] else "") for g in self.rows["vlsn_gaps"])
            dups = ", ".join(f"{d[0]} repeats {d[1]}" for d in self.rows["vlsn_duplicates"])
            lines.append(f"VLSN streams: {len(streams)} environments; gaps: {gaps or 'none'}; "
                         f"duplicates: {dups or 'none'}")
            divergence = self.rows["first_divergence"]
            if divergence:
                odd = sorted(r[1] for r in divergence if not r[7])
                lines.append(f"replication group: first divergence at VLSN {divergence[0][0]}"
                             + (f" ({', '.join(odd)} {'differs' if len(odd) == 1 else 'differ'} from the majority)" if odd else ""))
            else:
                lines.append("replication group: every VLSN agrees")
        lines.append(f"wrote {len(self.counts)} Parquet tables and {len(self.figures)} figures to {self.out}")
        return "\n".join(lines)


COLLECTED = ("files", "transaction_summary", "transaction_sizes", "checkpoints", "entries_by_file",
             "vlsn_streams", "vlsn_gaps", "vlsn_duplicates", "first_divergence", "problems")

FIGURES: dict[str, Callable[[dict[str, list]], object]] = {
    "entry_types_per_file.png": lambda rows: draw_entry_types_per_file(rows["entries_by_file"]),
    "transaction_sizes.png": lambda rows: draw_transaction_sizes(rows["transaction_sizes"]),
    "checkpoint_intervals.png": lambda rows: draw_checkpoint_intervals(rows["checkpoints"]),
    "vlsn_streams.png": lambda rows: draw_vlsn_streams(rows["vlsn_streams"], rows["vlsn_gaps"],
                                                       rows["vlsn_duplicates"], rows["first_divergence"]),
}


def analyze(spark: SparkSession, path: str, out: str, verify_checksums: bool = True,
            done: Callable[[str], object] | None = None) -> AnalyzeResult:
    """Run every analysis on the logs under ``path``; write tables and figures to ``out``.

    ``done``, if given, is called with each table's and figure's name once it is written (a progress
    bar's step: there are ``len(TABLES) + len(FIGURES)``).
    """
    done = done or (lambda name: None)
    taken = [name for name in (*TABLES, *FIGURES) if os.path.lexists(os.path.join(out, name))]
    if taken:
        raise UserError(f"{os.path.join(out, taken[0])}: already exists; analyze writes only new tables and figures")
    created.makedirs(out)
    # Cached with log positions: the logs are read once, the positions computed once.
    df = A.with_log_position(read_logs(spark, path, verify_checksums)).persist()
    try:
        result = AnalyzeResult(path, out, df.count())
        for name, table in analyses(df).items():
            destination = os.path.join(out, name)
            table.coalesce(1).write.mode("errorifexists").parquet(destination)
            created.created_tree(destination)  # Spark wrote it: what is there now, the job done, is ours
            # Read back what was written: a count reads only the Parquet footer, and the
            # small tables come back without computing them a second time.
            written = spark.read.parquet(destination)
            if name in COLLECTED:
                result.rows[name] = [tuple(r) for r in written.collect()]
                result.counts[name] = len(result.rows[name])
            else:
                result.counts[name] = written.count()
            done(name)
    finally:
        df.unpersist()
    for name, draw in FIGURES.items():
        result.figures.append(save(draw(result.rows), os.path.join(out, name)))
        done(name)
    return result
