"""Malformed logs give rows flagged bad or a clear per-file error, never a failed job."""

import os
import random
import shutil

import pyarrow as pa
import pytest
from pyspark.testing import assertDataFrameEqual

from minidb.errors import LogCorruptionError
from minidb.io import OSDisk
from minidb.log import LogManager, file_name
from minidb.log.verify import verify_log
from minidb.spark.schema import LOG_SCHEMA
from minidb.spark.source import MinidbLogReader

from tests.spark.expected import reader_rows


@pytest.fixture
def env_copy(generated, tmp_path):
    """A copy of a standalone environment with several files, and its reader rows."""
    source = next(e for e in generated.envs if e.role == "standalone" and e.files >= 3)
    path = tmp_path / "broken" / source.name
    shutil.copytree(source.path, path)
    return str(path), source.name, reader_rows(str(path), source.name)


def frame(spark, rows):
    return spark.createDataFrame([tuple(r.values()) for r in rows], schema=LOG_SCHEMA)


def load(spark, path, **options):
    reader = spark.read.format("minidb")
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(path)


def bad_rows(df):
    return df.where("problem is not null").orderBy("env", "file", "offset").collect()


def entry_at(rows, file, index):
    return [r for r in rows if r["file"] == file][index]


def test_a_torn_tail_in_the_last_file_just_ends_the_log(spark, env_copy):
    path, name, rows = env_copy
    last = max(r["file"] for r in rows)
    cut_entry = entry_at(rows, last, -3)
    with open(os.path.join(path, file_name(last)), "r+b") as f:
        f.truncate(cut_entry["offset"] + 9)  # a crash in the middle of writing it
    df = load(spark, path)
    assert bad_rows(df) == []
    expected = [r for r in rows if (r["file"], r["offset"]) < (last, cut_entry["offset"])]
    assertDataFrameEqual(df, frame(spark, expected))
    assertDataFrameEqual(df, frame(spark, reader_rows(path, name)))  # the engine's reader agrees


def test_a_truncated_file_that_is_not_the_last_is_flagged(spark, env_copy):
    path, name, rows = env_copy
    cut_entry = entry_at(rows, 1, 10)
    with open(os.path.join(path, file_name(1)), "r+b") as f:
        f.truncate(cut_entry["offset"] + 20)
    with pytest.raises(LogCorruptionError):  # the engine's reader stops with an error here
        list(LogManager(OSDisk(path, readonly=True), readonly=True).scan())
    df = load(spark, path)
    [bad] = bad_rows(df)
    assert (bad.file, bad.offset, bad.checksum_valid) == (1, cut_entry["offset"], False)
    assert bad.problem.startswith("torn entry in a file that is not the last of the log")
    good = df.where("problem is null")
    expected = [r for r in rows if r["file"] != 1 or r["offset"] < cut_entry["offset"]]
    assertDataFrameEqual(good, frame(spark, expected))


def test_random_bytes_named_like_a_log_file_are_one_flagged_row(spark, env_copy):
    path, name, rows = env_copy
    junk = random.Random(11).randbytes(4096)
    assert junk[4] != 0x01  # not a FileHeader's type byte
    with open(os.path.join(path, file_name(9)), "wb") as f:
        f.write(junk)
    df = load(spark, path)
    gap, bad = bad_rows(df)  # the files between the last one and 9 are missing, too
    after = max(r["file"] for r in rows) + 1
    assert (gap.file, gap.offset, gap.problem) == (after, 0, f"log file is missing: the log jumps from "
                                                              f"{file_name(after - 1)} to {file_name(9)}")
    assert (bad.env, bad.file, bad.offset, bad.lsn, bad.checksum_valid) == (name, 9, 0, "0x9/0x0", False)
    assert bad.problem == "not a minidb log file (it does not start with a FileHeader)"
    assert bad.type_name is None and bad.entry_size is None
    assertDataFrameEqual(df.where("problem is null"), frame(spark, rows))


def test_a_bit_flip_mid_file_flags_one_entry_and_the_reader_resynchronises(spark, env_copy):
    path, name, rows = env_copy
    victim = entry_at(rows, 2, 7)
    with open(os.path.join(path, file_name(2)), "r+b") as f:
        f.seek(victim["offset"] + victim["entry_size"] - 3)
        byte = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([byte[0] ^ 0x10]))
    df = load(spark, path)
    [bad] = bad_rows(df)
    assert (bad.file, bad.offset, bad.type_name, bad.checksum_valid) == (2, victim["offset"], victim["type_name"], False)
    assert bad.problem.startswith("corrupt: checksum mismatch")
    others = [r for r in rows if r is not victim]
    assertDataFrameEqual(df.where("problem is null"), frame(spark, others))  # everything after it is back
    # without checksums the flip in the item goes unseen: the entry reads as intact
    unchecked = load(spark, path, verify_checksums="false")
    assert bad_rows(unchecked) == [] and unchecked.count() == len(rows)


def test_a_flipped_type_byte_mid_file_is_corruption_too(spark, env_copy):
    path, name, rows = env_copy
    victim = entry_at(rows, 1, 5)
    with open(os.path.join(path, file_name(1)), "r+b") as f:
        f.seek(victim["offset"] + 4)
        f.write(b"\x7f")  # no such entry type
    df = load(spark, path)
    [bad] = bad_rows(df)
    assert (bad.offset, bad.type_code, bad.checksum_valid) == (victim["offset"], 0x7F, False)
    assert "invalid entry type code 0x7f" in bad.problem
    assert df.where("problem is null").count() == len(rows) - 1


def test_a_file_gone_between_planning_and_reading_is_a_per_file_error(env_copy):
    path, name, rows = env_copy
    reader = MinidbLogReader({"path": path})  # planning lists the files
    parts = reader.partitions()
    os.remove(os.path.join(path, file_name(2)))
    batches = [batch for part in parts for batch in reader.read(part)]  # what the tasks run
    table = pa.Table.from_batches(batches).to_pylist()
    [bad] = [r for r in table if r["problem"] is not None]
    assert (bad["file"], bad["offset"], bad["checksum_valid"]) == (2, 0, False)
    assert bad["problem"].startswith("cannot read ") and file_name(2) in bad["problem"]
    assert len(table) - 1 == len([r for r in rows if r["file"] != 2])


def test_one_job_over_every_kind_of_damage_completes(spark, generated, tmp_path):
    root = tmp_path / "zoo"
    envs = {}
    for env in generated.envs[3:]:
        envs[env.name] = root / env.name
        shutil.copytree(env.path, envs[env.name])
    (root / "junk").mkdir()
    (root / "junk" / file_name(1)).write_bytes(random.Random(5).randbytes(300))
    (root / "empty").mkdir()
    (root / "empty" / file_name(1)).write_bytes(b"")  # created, FileHeader never written: no entries
    with open(envs["env-03"] / file_name(1), "r+b") as f:
        f.seek(200)
        f.write(b"\x00\xff")
    df = load(spark, str(root))
    problems = {(r.env, r.file): r.problem.split(":")[0] for r in bad_rows(df)}
    assert problems == {("env-03", 1): "corrupt", ("junk", 1): "not a minidb log file (it does not start with a FileHeader)"}
    assert df.where("env = 'empty'").count() == 0
    assert df.where("env = 'env-04'").count() == generated.envs[4].entries


def _empty(path, rows):
    open(os.path.join(path, file_name(2)), "wb").close()


def _missing(path, rows):
    os.remove(os.path.join(path, file_name(2)))


def _cut_at_an_entry_boundary(path, rows):
    with open(os.path.join(path, file_name(2)), "r+b") as f:
        f.truncate(entry_at(rows, 2, 6)["offset"])  # every entry left in it is intact


def _zeroed_header(path, rows):
    with open(os.path.join(path, file_name(2)), "r+b") as f:
        f.seek(entry_at(rows, 2, 6)["offset"])
        f.write(bytes(14))


@pytest.mark.parametrize("damage", [_empty, _missing, _cut_at_an_entry_boundary, _zeroed_header],
                         ids=lambda f: f.__name__.strip("_"))
def test_item7_a_damaged_middle_file_gives_the_problem_row_verify_reports(spark, env_copy, damage):
    path, name, rows = env_copy
    damage(path, rows)
    problem = verify_log(OSDisk(path, readonly=True)).problem
    assert problem is not None and problem.file_name == file_name(2)
    [bad] = bad_rows(load(spark, path))
    # the data source labels an entry judged corrupt (intact entries follow it) "corrupt: "
    assert (bad.env, bad.file, bad.offset, bad.problem.removeprefix("corrupt: "), bad.checksum_valid) == \
        (name, 2, problem.offset, problem.what, False)
    if bad.problem.startswith("corrupt: "):  # the scan resynchronises at the intact entry that follows
        kept = [r for r in rows if (r["file"], r["offset"]) != (2, problem.offset)]
    else:  # the rest of file 2 is untrusted
        kept = [r for r in rows if r["file"] != 2 or r["offset"] < problem.offset]
    assertDataFrameEqual(load(spark, path).where("problem is null"), frame(spark, kept))
