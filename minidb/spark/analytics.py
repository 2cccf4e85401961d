"""Analyses of minidb logs, each a function from a DataFrame to a DataFrame.

Every function takes the DataFrame of ``spark.read.format("minidb")`` (one
row per log entry, :mod:`minidb.spark.schema`), or the result of another
analysis where it says so, and returns a small table, sorted, ready to be
written as Parquet or drawn. Rows flagged bad (``problem`` not null) are
counted by :func:`entries_by_type`, :func:`entries_by_file` and
:func:`file_summary`, and left out of every other analysis: a corrupt entry's
fields cannot be trusted.

What each entry type *means* (a commit, a checkpoint start) is looked up by
name in :data:`ROLES`, which lists the names every engine uses for the role:
the generator's test types (``GenCommit``...), the log store's JE names
(``Commit``, ``CkptStart``...), Shore's for the page store (``xct_end``,
``chkpt_begin``...). An engine whose log uses other names adds them there.

Distances are *log bytes*: ``log_pos`` (:func:`with_log_position`) is the
number of bytes of the environment's log before an entry, counting every
earlier file whole, so the distance from an entry in file 1 to one in file 2
is the bytes between them as the log was written. Worked example: with
``00000001.jdb`` of 32,700 bytes, the entry at ``0x2/0x2e`` has ``log_pos``
32,700 + 46 = 32,746; a transaction from ``0x1/0x7f00`` (32,512) to
``0x2/0x2e`` spans 234 log bytes.

The analyses:

- :func:`entries_by_type`, :func:`entries_by_file`, :func:`file_summary`:
  counts and bytes per type and per file;
- :func:`transactions` (one row per transaction: entries, outcome, span in
  log bytes, whether its ``txn_prev_lsn`` chain is intact) and
  :func:`transaction_summary` (per environment and outcome);
- :func:`checkpoints`: each checkpoint's start and end, the bytes between
  them and since the previous checkpoint's start;
- :func:`vlsn_streams`, :func:`vlsn_gaps`, :func:`vlsn_duplicates`: each
  environment's VLSN stream, with the VLSNs it misses and repeats;
- :func:`vlsn_agreement` and :func:`first_divergence`: across the
  environments of a replication group, whether every VLSN holds the same
  entry (same type, same :func:`item checksum
  <minidb.spark.source.item_checksum>`) everywhere, and the first VLSN where
  they part.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, Window, functions as F

ROLES: dict[str, tuple[str, ...]] = {
    # the generator's test types; the log store's (JE) names; the page store's (Shore) names.
    # Shore logs xct_abort before the CLRs and then xct_end for every transaction, so
    # xct_end counts as a commit only when no abort entry came first (see transactions()).
    "commit": ("GenCommit", "Commit", "TxnCommit", "xct_end"),
    "abort": ("GenAbort", "Abort", "TxnAbort", "xct_abort"),
    "ckpt_start": ("GenCkptStart", "CkptStart", "chkpt_begin"),
    "ckpt_end": ("GenCkptEnd", "CkptEnd", "chkpt_end"),
}


def is_role(role: str) -> Column:
    return F.col("type_name").isin(list(ROLES[role]))


def intact(df: DataFrame) -> DataFrame:
    """The rows of entries without a problem."""
    return df.where(F.col("problem").isNull())


def _bad() -> Column:
    return F.col("problem").isNotNull().cast("long")


# -- positions ----------------------------------------------------------------------
def with_log_position(df: DataFrame) -> DataFrame:
    """``df`` with ``log_pos``: bytes of the environment's log before each entry.

    A file's size is where its last row ends, so ``df`` must hold every entry
    of the environment's files: filter after, not before. A ``df`` that has
    ``log_pos`` already is returned as it is (compute it once, then cache).
    """
    if "log_pos" in df.columns:
        return df
    ends = df.groupBy("env", "file").agg(
        F.max(F.col("offset") + F.coalesce(F.col("entry_size"), F.lit(0))).alias("file_end"))
    earlier = Window.partitionBy("env").orderBy("file").rowsBetween(Window.unboundedPreceding, -1)
    bases = ends.select("env", "file", F.coalesce(F.sum("file_end").over(earlier), F.lit(0)).alias("file_base"))
    return (df.join(bases, ["env", "file"])
            .withColumn("log_pos", F.col("file_base") + F.col("offset")).drop("file_base"))


# -- counts and bytes -----------------------------------------------------------------
def entries_by_type(df: DataFrame) -> DataFrame:
    """Per entry type: entries, bytes, mean entry size, bad entries, environments.

    Columns: type_name, type_code, entries, bytes, mean_size, invalid, envs.
    """
    return (df.groupBy("type_name", "type_code")
            .agg(F.count(F.lit(1)).alias("entries"),
                 F.sum("entry_size").alias("bytes"),
                 F.avg("entry_size").alias("mean_size"),
                 F.sum(_bad()).alias("invalid"),
                 F.countDistinct("env").alias("envs"))
            .orderBy(F.col("type_code").asc_nulls_last(), "type_name"))


def entries_by_file(df: DataFrame) -> DataFrame:
    """Per log file and entry type: entries and bytes (the "entry types per file" picture).

    Columns: env, file, type_name, entries, bytes, invalid.
    """
    return (df.groupBy("env", "file", "type_name")
            .agg(F.count(F.lit(1)).alias("entries"),
                 F.sum("entry_size").alias("bytes"),
                 F.sum(_bad()).alias("invalid"))
            .orderBy("env", "file", F.col("type_name").asc_nulls_last()))


def file_summary(df: DataFrame) -> DataFrame:
    """One row per log file: entries, bytes of entries, bad entries, first and last LSN,
    and the first problem found in it.

    Columns: env, file, entries, bytes, invalid, first_lsn, last_lsn, first_problem.
    """
    return (df.groupBy("env", "file")
            .agg(F.count(F.lit(1)).alias("entries"),
                 F.sum("entry_size").alias("bytes"),
                 F.sum(_bad()).alias("invalid"),
                 F.min_by("lsn", "lsn_packed").alias("first_lsn"),
                 F.max_by("lsn", "lsn_packed").alias("last_lsn"),
                 F.min_by("problem", F.when(F.col("problem").isNotNull(), F.col("lsn_packed")))
                 .alias("first_problem"))
            .orderBy("env", "file"))


# -- transactions -----------------------------------------------------------------------
def transactions(df: DataFrame) -> DataFrame:
    """One row per transaction of each environment.

    ``entries`` counts all of its entries (updates plus the commit or abort),
    ``updates`` those that are neither; ``outcome`` is commit, abort or open
    (neither was logged: the transaction was cut off, or is still running);
    ``span_bytes`` is the log bytes from its first entry to its last;
    ``chain_ok`` says whether every entry's ``txn_prev_lsn`` names the
    transaction's entry before it (and the first names none).

    Columns: env, txn_id, entries, updates, outcome, first_lsn, last_lsn,
    span_bytes, chain_ok.
    """
    txn = intact(with_log_position(df)).where(F.col("txn_id").isNotNull())
    in_txn = Window.partitionBy("env", "txn_id").orderBy("lsn_packed")
    txn = txn.withColumn("link_ok", F.col("txn_prev_lsn_packed").eqNullSafe(F.lag("lsn_packed").over(in_txn)))
    ends = F.col("type_name").isin(list(ROLES["commit"] + ROLES["abort"]))
    return (txn.groupBy("env", "txn_id")
            .agg(F.count(F.lit(1)).alias("entries"),
                 F.sum((~ends).cast("long")).alias("updates"),
                 F.max(is_role("commit").cast("int")).alias("_commit"),
                 F.max(is_role("abort").cast("int")).alias("_abort"),
                 F.min_by("lsn", "lsn_packed").alias("first_lsn"),
                 F.max_by("lsn", "lsn_packed").alias("last_lsn"),
                 (F.max("log_pos") - F.min("log_pos")).alias("span_bytes"),
                 F.bool_and("link_ok").alias("chain_ok"))
            # An abort entry decides: Shore ends an aborted transaction with xct_end too.
            .withColumn("outcome", F.when(F.col("_abort") == 1, "abort")
                        .when(F.col("_commit") == 1, "commit").otherwise("open"))
            .select("env", "txn_id", "entries", "updates", "outcome", "first_lsn", "last_lsn",
                    "span_bytes", "chain_ok")
            .orderBy("env", "txn_id"))


def transaction_summary(txns: DataFrame) -> DataFrame:
    """Per environment and outcome, from :func:`transactions`: how many, their sizes.

    Columns: env, outcome, transactions, mean_entries, max_entries,
    mean_span_bytes, max_span_bytes, broken_chains.
    """
    return (txns.groupBy("env", "outcome")
            .agg(F.count(F.lit(1)).alias("transactions"),
                 F.avg("entries").alias("mean_entries"),
                 F.max("entries").alias("max_entries"),
                 F.avg("span_bytes").alias("mean_span_bytes"),
                 F.max("span_bytes").alias("max_span_bytes"),
                 F.sum((~F.col("chain_ok")).cast("long")).alias("broken_chains"))
            .orderBy("env", "outcome"))


def transaction_sizes(txns: DataFrame) -> DataFrame:
    """How many transactions have each number of entries, per outcome (from
    :func:`transactions`). Columns: outcome, entries, transactions."""
    return (txns.groupBy("outcome", "entries").agg(F.count(F.lit(1)).alias("transactions"))
            .orderBy("outcome", "entries"))


# -- checkpoints ----------------------------------------------------------------------------
def checkpoints(df: DataFrame) -> DataFrame:
    """One row per checkpoint start of each environment, numbered from 1.

    The checkpoint's end is the end entry right after its start among the
    environment's checkpoint entries (none if another start, or the end of
    the log, comes first: the checkpoint never finished). ``duration_bytes``
    is the log bytes from start to end; ``interval_bytes`` those from the
    previous checkpoint's start to this one's.

    Columns: env, ckpt, start_lsn, end_lsn, complete, duration_bytes,
    interval_bytes.
    """
    marks = intact(with_log_position(df)).where(is_role("ckpt_start") | is_role("ckpt_end"))
    in_env = Window.partitionBy("env").orderBy("log_pos")
    marks = (marks.withColumn("next_is_end", F.lead(is_role("ckpt_end")).over(in_env))
             .withColumn("next_lsn", F.lead("lsn").over(in_env))
             .withColumn("next_pos", F.lead("log_pos").over(in_env)))
    starts = marks.where(is_role("ckpt_start"))
    in_starts = Window.partitionBy("env").orderBy("log_pos")
    ended = F.coalesce(F.col("next_is_end"), F.lit(False))
    return (starts.select(
                "env",
                F.row_number().over(in_starts).alias("ckpt"),
                F.col("lsn").alias("start_lsn"),
                F.when(ended, F.col("next_lsn")).alias("end_lsn"),
                ended.alias("complete"),
                F.when(ended, F.col("next_pos") - F.col("log_pos")).alias("duration_bytes"),
                (F.col("log_pos") - F.lag("log_pos").over(in_starts)).alias("interval_bytes"))
            .orderBy("env", "ckpt"))


# -- VLSN streams -----------------------------------------------------------------------------
def _vlsns(df: DataFrame, envs: Sequence[str] | None = None) -> DataFrame:
    rows = intact(df).where(F.col("vlsn").isNotNull())
    return rows.where(F.col("env").isin(list(envs))) if envs is not None else rows


def vlsn_streams(df: DataFrame) -> DataFrame:
    """Each environment's VLSN stream: its range, and how many VLSNs it misses and repeats.

    ``missing`` counts the VLSNs between ``first_vlsn`` and ``last_vlsn`` that
    no entry carries; ``repeated`` the entries beyond the first for a VLSN.
    Environments without replicated entries have no row.

    Columns: env, entries, first_vlsn, last_vlsn, distinct_vlsns, missing, repeated.
    """
    return (_vlsns(df).groupBy("env")
            .agg(F.count(F.lit(1)).alias("entries"),
                 F.min("vlsn").alias("first_vlsn"),
                 F.max("vlsn").alias("last_vlsn"),
                 F.countDistinct("vlsn").alias("distinct_vlsns"))
            .withColumn("missing", F.col("last_vlsn") - F.col("first_vlsn") + 1 - F.col("distinct_vlsns"))
            .withColumn("repeated", F.col("entries") - F.col("distinct_vlsns"))
            .orderBy("env"))


def vlsn_gaps(df: DataFrame) -> DataFrame:
    """The runs of VLSNs missing from each environment's stream.

    Columns: env, gap_start, gap_end, missing (gap_end - gap_start + 1).
    """
    distinct = _vlsns(df).select("env", "vlsn").distinct()
    following = F.lead("vlsn").over(Window.partitionBy("env").orderBy("vlsn"))
    return (distinct.withColumn("next_vlsn", following)
            .where(F.col("next_vlsn") - F.col("vlsn") > 1)
            .select("env", (F.col("vlsn") + 1).alias("gap_start"), (F.col("next_vlsn") - 1).alias("gap_end"),
                    (F.col("next_vlsn") - F.col("vlsn") - 1).alias("missing"))
            .orderBy("env", "gap_start"))


def vlsn_duplicates(df: DataFrame) -> DataFrame:
    """VLSNs carried by more than one entry of an environment.

    ``same_content`` is true when all copies hold the same type and item checksum.
    Columns: env, vlsn, copies, lsns (in log order), same_content.
    """
    return (_vlsns(df).groupBy("env", "vlsn")
            .agg(F.count(F.lit(1)).alias("copies"),
                 F.transform(F.array_sort(F.collect_list(F.struct("lsn_packed", "lsn"))), lambda s: s["lsn"])
                 .alias("lsns"),
                 (F.countDistinct("type_name", "item_checksum") == 1).alias("same_content"))
            .where(F.col("copies") > 1)
            .orderBy("env", "vlsn"))


def vlsn_agreement(df: DataFrame, envs: Sequence[str] | None = None) -> DataFrame:
    """For each VLSN of a replication group: do its environments hold the same entry?

    The group is ``envs`` (default: every environment with replicated
    entries). An entry's *version* is its (type name, item checksum); a VLSN
    agrees when every environment that has it holds one version.
    Environments missing the VLSN are not counted against it
    (:func:`vlsn_gaps` reports them).

    Columns: vlsn, envs_present, versions, agree.
    """
    return (_vlsns(df, envs).groupBy("vlsn")
            .agg(F.countDistinct("env").alias("envs_present"),
                 F.countDistinct("type_name", "item_checksum").alias("versions"))
            .withColumn("agree", F.col("versions") == 1)
            .orderBy("vlsn"))


def first_divergence(df: DataFrame, envs: Sequence[str] | None = None) -> DataFrame:
    """Where a replication group's environments first disagree: one row per
    environment holding the first VLSN that has more than one version (no rows
    when they all agree).

    ``in_majority`` is true for the environments holding the version most of
    them hold (more than half): the others are the ones that diverged.
    Columns: vlsn, env, lsn, type_name, item_checksum, holders, envs_present, in_majority.
    """
    agreement = vlsn_agreement(df, envs)
    first = agreement.where(~F.col("agree")).agg(F.min("vlsn").alias("vlsn"))
    at_first = (_vlsns(df, envs).join(first, "vlsn")
                .groupBy("vlsn", "env", "type_name", "item_checksum")
                .agg(F.min_by("lsn", "lsn_packed").alias("lsn")))
    version = Window.partitionBy("vlsn", "type_name", "item_checksum")
    everyone = Window.partitionBy("vlsn")
    return (at_first.withColumn("holders", F.count(F.lit(1)).over(version))
            .withColumn("envs_present", F.size(F.collect_set("env").over(everyone)))
            .withColumn("in_majority", F.col("holders") * 2 > F.col("envs_present"))
            .select("vlsn", "env", "lsn", "type_name", "item_checksum", "holders", "envs_present", "in_majority")
            .orderBy("vlsn", "env"))
