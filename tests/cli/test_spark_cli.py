"""`minidb spark analyze` refuses a bad PATH in one line, before Spark starts."""

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
