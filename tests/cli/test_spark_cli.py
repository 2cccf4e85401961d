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


def exit_code(argv):
    try:
        return main(argv)
    except SystemExit as e:  # argparse's usage errors
        return e.code


def load_args(tmp_path, volume, pages):
    (tmp_path / "rows.csv").write_text("k,v\n1,a\n")
    return ["spark", "load", str(tmp_path / "rows.csv"), "--volume", str(volume), "--index", "ix", "--key", "k",
            "--create", "--pages", str(pages)]


@pytest.mark.parametrize("pages", [2**40, 2**32 - 1, 2**24 + 1, 0])
def test_load_create_bounds_pages_to_what_a_volume_addresses_and_is_sane(tmp_path, capsys, pages):
    volume = tmp_path / "vol"
    assert exit_code(load_args(tmp_path, volume, pages)) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and len(lines) == 1 and "argument --pages: must be at " in lines[0]
    assert "at most 16,777,216 (128 GB of 8 KB pages)" in lines[0] or pages == 0
    assert not volume.exists()


@pytest.mark.parametrize("existed", [False, True])
def test_a_failed_create_leaves_nothing_behind_so_a_rerun_works(tmp_path, capsys, existed):
    from minidb.cli.spark import create_volume

    volume = tmp_path / "new" / "vol"
    if existed:
        volume.mkdir(parents=True)
    assert exit_code(load_args(tmp_path, volume, 20)) == 2  # too small for its own maps: refused by the format
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "cannot format: a volume of 20 pages with 8 pages per extent is too small" in lines[0]
    assert (sorted(volume.iterdir()) == [] if existed else not (tmp_path / "new").exists())
    create_volume(str(volume), 64)  # the rerun: no empty log file refuses it
    assert "v1.vol" in {p.name for p in volume.iterdir()}
