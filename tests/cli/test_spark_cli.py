"""`minidb spark analyze` refuses a bad PATH in one line, before Spark starts."""

import pytest

from minidb.cli import main


def test_a_missing_path_is_a_one_line_error(tmp_path, capsys):
    assert main(["spark", "analyze", str(tmp_path / "nowhere")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == f"minidb spark: error: {tmp_path / 'nowhere'}: no such file or directory"


def test_a_directory_without_logs_is_a_one_line_error(tmp_path, capsys):
    assert main(["spark", "analyze", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no minidb log files (named like 00000001.jdb)" in err
    assert not (tmp_path / "out").exists()  # nothing was written


def test_spark_needs_an_action(capsys):
    try:
        main(["spark"])
    except SystemExit as stop:
        assert stop.code == 2
    assert "the following arguments are required: ACTION" in capsys.readouterr().err


def test_a_missing_py_file_is_a_one_line_error(tmp_path, capsys):
    from minidb.spark.generate import GenerateRequest, generate

    generate("log", GenerateRequest(str(tmp_path / "envs"), envs=1, ops=5))
    assert main(["spark", "analyze", str(tmp_path / "envs"), "--py-files", str(tmp_path / "minidb.zip")]) == 2
    assert capsys.readouterr().err.strip() == f"minidb spark: error: --py-files: {tmp_path / 'minidb.zip'}: no such file"


def test_item5_analyze_refuses_an_out_directory_it_did_not_write(tmp_path, capsys):
    from minidb.spark.generate import GenerateRequest, generate

    generate("log", GenerateRequest(str(tmp_path / "envs"), envs=1, ops=5))
    out = tmp_path / "out"
    (out / "files").mkdir(parents=True)
    (out / "files" / "mine.parquet").write_bytes(b"the user's table")
    assert main(["spark", "analyze", str(tmp_path / "envs"), "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"minidb spark: error: {out}: not empty, and not written by minidb spark analyze (no .minidb-output in it); "
        f"choose a new or empty directory")
    assert sorted(p.name for p in out.rglob("*")) == ["files", "mine.parquet"]
    assert (out / "files" / "mine.parquet").read_bytes() == b"the user's table"


def test_item5_analyze_the_function_never_replaces_a_table(tmp_path):
    from minidb.errors import UserError
    from minidb.spark.pipeline import analyze

    (tmp_path / "out" / "files").mkdir(parents=True)
    with pytest.raises(UserError, match="out/files: already exists"):
        analyze(None, str(tmp_path / "envs"), str(tmp_path / "out"))  # refused before Spark is used
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["files"]
