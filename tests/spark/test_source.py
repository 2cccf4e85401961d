"""The minidb data source returns what minidb.log's own reader returns, one partition per file."""

import os
import shutil

import pytest
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.testing import assertDataFrameEqual

from minidb.errors import UserError
from minidb.io import OSDisk
from minidb.log import TRACE, LogManager, Provisional
from minidb.spark.schema import ARROW_SCHEMA, COLUMN_NAMES, LOG_SCHEMA
from minidb.spark.source import BATCH_ROWS, FileColumns, file_rows, log_file_partitions, to_record_batch

from tests.spark.expected import reader_rows


def expected_frame(spark, envs):
    """``envs``: (directory, name) pairs -> the reader's rows as a DataFrame."""
    rows = [row for env_dir, name in envs for row in reader_rows(env_dir, name)]
    return spark.createDataFrame([tuple(r.values()) for r in rows], schema=LOG_SCHEMA)


def all_envs(generated):
    return [(env.path, env.name) for env in generated.envs]


def test_the_arrow_schema_is_the_one_spark_expects():
    assert ARROW_SCHEMA.equals(to_arrow_schema(LOG_SCHEMA, timezone="UTC"))
    assert ARROW_SCHEMA.names == COLUMN_NAMES


def test_every_entry_of_every_environment_as_the_reader_sees_it(spark, generated, logs):
    assert logs.schema == LOG_SCHEMA
    assert logs.count() == sum(env.entries for env in generated.envs)
    assertDataFrameEqual(logs, expected_frame(spark, all_envs(generated)))


def test_one_partition_per_log_file(spark, generated, logs):
    files = sum(env.files for env in generated.envs)
    assert files > len(generated.envs)  # several files per environment
    assert logs.rdd.getNumPartitions() == files
    per_partition = logs.rdd.mapPartitions(lambda rows: [sorted({(r.env, r.file) for r in rows})]).collect()
    assert all(len(p) == 1 for p in per_partition)
    assert sorted(p[0] for p in per_partition) == sorted(
        (p.env, p.number) for p in log_file_partitions(generated.request.out))


def test_an_environment_directory_a_glob_and_single_files(spark, generated):
    env = generated.envs[3]
    one = spark.read.format("minidb").load(env.path)
    assertDataFrameEqual(one, expected_frame(spark, [(env.path, env.name)]))

    pattern = os.path.join(generated.request.out, "env-0[12]")
    two = spark.read.format("minidb").load(pattern)
    assert sorted(r.env for r in two.select("env").distinct().collect()) == ["env-01", "env-02"]
    assertDataFrameEqual(two, expected_frame(spark, [(generated.envs[1].path, "env-01"),
                                                     (generated.envs[2].path, "env-02")]))

    second_file = os.path.join(env.path, "00000002.jdb")
    only = spark.read.format("minidb").load(second_file)
    expected = [r for r in reader_rows(env.path, env.name) if r["file"] == 2]
    assert [r.offset for r in only.orderBy("offset").collect()] == [r["offset"] for r in expected]


def test_environment_names_are_relative_to_the_loaded_directory(tmp_path):
    for env in ("class/alice", "class/bob", "group/node1"):
        log = LogManager(OSDisk(tmp_path / env, create=True))
        log.append(TRACE, {"message": env})
        log.close()
    parts = log_file_partitions(str(tmp_path))
    assert [(p.env, p.number, p.last) for p in parts] == [
        ("class/alice", 1, True), ("class/bob", 1, True), ("group/node1", 1, True)]
    # two environments that would both be called "node1" get longer names
    log = LogManager(OSDisk(tmp_path / "other" / "node1", create=True))
    log.close()
    names = [p.env for p in log_file_partitions(os.path.join(str(tmp_path), "*", "node1"))]
    assert names == ["group/node1", "other/node1"]


def test_bad_paths_are_clear_errors_at_load(spark, tmp_path):
    with pytest.raises(UserError, match="no such file or directory"):
        log_file_partitions(str(tmp_path / "missing"))
    with pytest.raises(UserError, match="no minidb log files"):
        log_file_partitions(str(tmp_path))
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(UserError, match="not a log file"):
        log_file_partitions(str(tmp_path / "notes.txt"))
    with pytest.raises(UserError, match="matches nothing"):
        log_file_partitions(str(tmp_path / "env-*"))
    with pytest.raises(Exception, match="no minidb log files"):
        spark.read.format("minidb").load(str(tmp_path))
    with pytest.raises(Exception, match="verify_checksums must be true or false"):
        spark.read.format("minidb").option("verify_checksums", "maybe").load(str(tmp_path / "..")).count()


def test_without_checksum_verification_rows_are_the_same_but_unchecked(spark, generated, logs):
    path = generated.envs[0].path
    unchecked = spark.read.format("minidb").option("verify_checksums", "false").load(path)
    assert unchecked.where("checksum_valid is not null").count() == 0
    checked = logs.where(f"env = '{generated.envs[0].name}'")
    assertDataFrameEqual(unchecked.drop("checksum_valid"), checked.drop("checksum_valid"))


def test_flags_vlsns_and_transactions_come_from_the_headers(spark, tmp_path):
    env = tmp_path / "flags"
    log = LogManager(OSDisk(env, create=True), clock=lambda: 1_700_000_000.0)
    log.append(TRACE, {"message": "plain"})
    log.append(TRACE, {"message": "provisional"}, provisional=Provisional.YES)
    log.append(TRACE, {"message": "replicated"}, vlsn=41, provisional=Provisional.BEFORE_CKPT_END)
    log.close()
    rows = spark.read.format("minidb").load(str(env)).orderBy("offset").collect()
    assert [(r.lsn, r.type_name, r.provisional, r.replicated, r.vlsn) for r in rows] == [
        ("0x1/0x0", "FileHeader", "NO", False, None),
        ("0x1/0x2e", "Trace", "NO", False, None),
        ("0x1/0x43", "Trace", "YES", False, None),
        ("0x1/0x5e", "Trace", "BEFORE_CKPT_END", True, 41),
    ]
    assert rows[1].lsn_packed == (1 << 32) | 0x2e and rows[1].offset == 46
    assert all(r.txn_id is None and r.checksum_valid and r.problem is None for r in rows)


def test_rows_come_in_arrow_batches_of_the_exact_schema(generated):
    part = log_file_partitions(generated.envs[0].path)[0]
    batches = [to_record_batch(part, rows) for rows in file_rows(part, batch_rows=50)]
    assert len(batches) > 1 and all(b.num_rows <= 50 for b in batches)
    assert all(b.schema.equals(ARROW_SCHEMA) for b in batches)
    whole = [to_record_batch(part, rows) for rows in file_rows(part)]
    assert len(whole) == 1 and whole[0].num_rows == sum(b.num_rows for b in batches) <= BATCH_ROWS
    empty = to_record_batch(part, FileColumns())
    assert empty.num_rows == 0 and empty.schema.equals(ARROW_SCHEMA)


def test_copying_an_environment_keeps_its_rows_but_not_its_path(spark, generated, tmp_path):
    copy = tmp_path / "copied" / "env-04"
    shutil.copytree(generated.envs[4].path, copy)
    rows = spark.read.format("minidb").load(str(copy)).select("env", "env_path").distinct().collect()
    assert [(r.env, r.env_path) for r in rows] == [("env-04", str(copy))]


def test_files_below_the_log_head_are_not_partitions(tmp_path):
    """Files left below the recorded log head (a crash before their deletion) were deleted on purpose."""
    from minidb.io import OSDisk
    from minidb.log import TRACE, LogManager
    from minidb.log.head import write_log_head

    disk = OSDisk(tmp_path / "env", create=True)
    log = LogManager(disk, file_max=512)
    for i in range(40):
        log.append(TRACE, {"message": f"message {i} " * 8})
    log.close()
    write_log_head(disk, 3)
    parts = log_file_partitions(str(tmp_path / "env"))
    assert [p.number for p in parts][0] == 3 and not any(p.problem for p in parts)


def test_middle_files_recorded_deleted_are_not_partitions_and_an_unrecorded_one_is_missing(tmp_path):
    """A file named by the deleted-files record was deleted on purpose; any other missing file is a problem row."""
    from minidb.log.deleted import write_deleted_files
    from minidb.log.files import file_name

    disk = OSDisk(tmp_path / "env", create=True)
    log = LogManager(disk, file_max=512)
    for i in range(40):
        log.append(TRACE, {"message": f"message {i} " * 8})
    last = log.end_lsn.file
    log.close()
    write_deleted_files(disk, {3, 4})
    for number in (3, 4, 6):
        disk.delete(file_name(number))
    parts = log_file_partitions(str(tmp_path / "env"))
    assert [p.number for p in parts] == [1, 2, 5, 6] + list(range(7, last + 1))
    assert [(p.number, p.problem[:23]) for p in parts if p.problem] == [(6, "log file is missing: th")]
