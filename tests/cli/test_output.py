"""Output directories: the marker lists exactly what the command created; a file a user saves there while it
runs is left alone, named in one warning line, never listed, so no later run deletes it."""

import os
import subprocess
import sys

import pytest

from minidb.cli import main, tour as tour_cli
from minidb.cli.output import entries_below as entries
from minidb.io import created

MARKER = ".minidb-output"


def listed(path):
    return (path / MARKER).read_text().splitlines()[1:]


def tree(path):
    return {str(p.relative_to(path)): p.read_bytes() if p.is_file() else None for p in sorted(path.rglob("*"))}


def user_saves_a_file_meanwhile(directory, name="notes.txt"):
    """While the block runs, the first path the command creates is followed by the user saving ``name`` in
    ``directory`` with a plain ``open``, which nobody reports: deterministic, no sleeps."""
    saved = []

    def hook(path):
        if not saved:
            saved.append(directory / name)
            saved[0].write_text("the user's own notes")

    return created.watching(hook), saved


def warning_for(path, command):
    return f"warning: {path} was not written by {command}; it is left alone and not listed\n"


def test_generate_lists_only_what_it_created_and_the_next_run_deletes_only_that(tmp_path, capsys):
    out = tmp_path / "gen"
    argv = ["generate", "--engine", "log", "--envs", "2", "--ops", "20", str(out)]
    watch, saved = user_saves_a_file_meanwhile(out)
    with watch:
        assert main(argv) == 0
    assert saved and capsys.readouterr().err == warning_for(out / "notes.txt", "minidb generate")
    assert "notes.txt" not in listed(out) and listed(out) == [e for e in entries(out) if e != "notes.txt"]
    assert listed(out)[:2] == ["env-00/", "env-00/00000001.jdb"]
    before = tree(out)
    assert main(argv) == 2  # the user's file is not the command's: refused, nothing deleted
    assert "notes.txt: not written by minidb generate" in capsys.readouterr().err and tree(out) == before
    os.rename(out / "notes.txt", tmp_path / "notes.txt")
    assert main(argv) == 0 and capsys.readouterr().err == ""
    del before["notes.txt"]
    assert tree(out) == before  # the marker's paths, deleted and written again alike


def test_figures_keep_their_earlier_output_and_do_not_list_a_users_file(tmp_path, capsys):
    out = tmp_path / "pictures"
    assert main(["figures", "log_files", "--out", str(out)]) == 0
    watch, saved = user_saves_a_file_meanwhile(out, "sketch.png")
    with watch:
        assert main(["figures", "locks_deadlock", "--out", str(out)]) == 0
    assert capsys.readouterr().err == warning_for(out / "sketch.png", "minidb figures")
    assert listed(out) == ["locks_deadlock.png", "log_files.png"]


def test_tour_lists_what_its_engines_and_pictures_created_in_both_directories(tmp_path, capsys, monkeypatch):
    """The tour's body stands in: a section that runs an engine on an OSDisk, and one picture."""
    from minidb.viz.gallery import write_figures

    def short_tour(args):
        tour_cli.tour_log(args.workdir)
        write_figures(args.out, ["log_files"])
        return 0

    monkeypatch.setattr(tour_cli, "tour", short_tour)
    workdir, figures = tmp_path / "work", tmp_path / "figures"
    watch, saved = user_saves_a_file_meanwhile(workdir)
    with watch:
        assert main(["tour", "--workdir", str(workdir), "--out", str(figures)]) == 0
    assert capsys.readouterr().err == warning_for(workdir / "notes.txt", "minidb tour")
    assert listed(workdir) == [e for e in entries(workdir) if e != "notes.txt"]
    assert listed(workdir)[:2] == ["log/", "log/00000001.jdb"]
    assert listed(figures) == ["log_files.png"]
    assert (figures / MARKER).read_text().splitlines()[0] == "minidb output of: minidb figures"


def test_a_folder_the_user_makes_meanwhile_is_named_once_with_what_is_in_it(tmp_path, capsys):
    out = tmp_path / "gen"
    saved = []

    def hook(path):
        if not saved:
            saved.append(path)
            (out / "mine" / "deeper").mkdir(parents=True)
            (out / "mine" / "deeper" / "a.txt").write_text("a")
            (out / "zz.txt").write_text("z")

    with created.watching(hook):
        assert main(["generate", "--engine", "log", "--envs", "1", "--ops", "5", str(out)]) == 0
    assert capsys.readouterr().err == (f"warning: {out / 'mine'} and 1 more path were not written by minidb generate; "
                                       f"they are left alone and not listed\n")
    assert listed(out) == ["env-00/", "env-00/00000001.jdb"]


def test_group_demo_lists_what_its_node_processes_created(tmp_path, capsys):
    out = tmp_path / "demo"
    watch, saved = user_saves_a_file_meanwhile(out)
    with watch:
        assert main(["group", "demo", "--dir", str(out), "--records", "2", "--timeout", "120"]) == 0
    err = capsys.readouterr().err
    assert saved and err == warning_for(out / "notes.txt", "minidb group demo")
    names = listed(out)
    assert names == [e for e in entries(out) if e != "notes.txt"]
    assert {"n1/", "n2/", "n3/", "n1/00000001.jdb"} <= set(names)


@pytest.mark.parametrize("inside, message", [
    ("notes.txt", "{out}: not empty, and not written by minidb tour (no .minidb-output in it)"),
    (MARKER, "{out}: holds the output of minidb generate, not of minidb tour"),
])
def test_tour_refusals_of_its_figures_directory_name_minidb_tour(tmp_path, inside, message):
    out = tmp_path / "figs"
    out.mkdir()
    (out / inside).write_text("minidb output of: minidb generate\n")
    done = subprocess.run([sys.executable, "-m", "minidb", "tour", "--workdir", str(tmp_path / "work"),
                           "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message.format(out=out) in lines[0] and "minidb figures" not in lines[0]
    assert not (tmp_path / "work").exists()


def test_a_run_that_fails_puts_the_previous_output_back_and_one_that_succeeds_replaces_it(tmp_path, capsys):
    """A tour on a student's unfinished code stops with an error half-way: the pictures of the last good run
    must still be there, listed, and what the failed run wrote must be gone; no set-aside folder is left."""
    from minidb.cli.output import PREVIOUS, owned_output

    out = tmp_path / "out"
    with owned_output(str(out), "minidb generate"):
        (out / "env-00").mkdir()
        created.created(str(out / "env-00"))
        for name in ("env-00/a.jdb", "b.png"):
            (out / name).write_text("first run")
            created.created(str(out / name))
    before = tree(out)
    with pytest.raises(RuntimeError), owned_output(str(out), "minidb generate"):
        assert not (out / "b.png").exists()  # the previous output is set aside while the command runs
        (out / "c.png").write_text("second run")
        created.created(str(out / "c.png"))
        raise RuntimeError("the student's code is not implemented yet")
    assert tree(out) == before and listed(out) == ["b.png", "env-00/", "env-00/a.jdb"]
    with owned_output(str(out), "minidb generate"):
        (out / "c.png").write_text("third run")
        created.created(str(out / "c.png"))
    assert tree(out) == {MARKER: (out / MARKER).read_bytes(), "c.png": b"third run"} and not (out / PREVIOUS).exists()
    assert capsys.readouterr().err == ""
