"""`minidb figures`: every picture by name, PNG or SVG at a chosen dpi, the same bytes on every run."""

import ast
import json
import struct
from collections import Counter
from pathlib import Path

import pytest

from minidb.cli import main
from minidb.viz.gallery import FIGURES, all_figures
from minidb.viz.notebook_figures import SPARK_WORKLOAD


def png_size(path) -> tuple[int, int]:
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_item_figures_list_names_every_picture(capsys):
    assert main(["figures", "--list"]) == 0
    names = capsys.readouterr().out.split()
    assert names == list(all_figures())
    assert names[:3] == ["log_files", "log_torn_tail", "page_slotted"] and "09_logstore_tree-9" in names
    assert len(names) == len(FIGURES) + sum(pictures_in_notebooks().values())


def pictures_in_notebooks() -> dict[str, int]:
    """Pictures each committed notebook shows."""
    found = {}
    for path in sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb")):
        found[path.stem] = sum(1 for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]
                               for out in cell.get("outputs", [])
                               if {"image/png", "image/svg+xml"} & set(out.get("data", {})))
    return found


def test_every_notebook_picture_has_a_name():
    named = Counter(name.rsplit("-", 1)[0] for name in all_figures() if name[:2].isdigit())
    assert dict(named) == {stem: n for stem, n in pictures_in_notebooks().items() if n}


def test_item_figures_by_name_png_at_150_dpi_by_default(tmp_path, capsys):
    assert main(["figures", "--out", str(tmp_path), "log_files", "02_pages-2"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"wrote {tmp_path}/log_files.png", f"wrote {tmp_path}/02_pages-2.png"]
    width, _ = png_size(tmp_path / "log_files.png")
    assert width == round(9.5 * 150)  # every picture is a notebook column wide
    assert main(["figures", "--out", str(tmp_path / "low"), "--dpi", "60", "log_files.png"]) == 0
    assert png_size(tmp_path / "low" / "log_files.png")[0] == round(9.5 * 60)


def test_item_figures_svg_reruns_give_the_same_bytes(tmp_path):
    for out in ("a", "b"):
        assert main(["figures", "--out", str(tmp_path / out), "--format", "svg", "locks_deadlock",
                     "05b_deadlocks-5", "09_logstore_tree-9"]) == 0
    for name in ("locks_deadlock.svg", "05b_deadlocks-5.svg", "09_logstore_tree-9.svg"):
        data = (tmp_path / "a" / name).read_bytes()
        assert data.startswith(b"<?xml") and data == (tmp_path / "b" / name).read_bytes()
        assert b"<dc:date>" not in data


def test_item_figures_unknown_name_is_a_usage_error_and_writes_nothing(tmp_path, capsys):
    assert main(["figures", "--out", str(tmp_path / "out"), "log_files", "no_such_picture"]) == 2
    err = capsys.readouterr().err
    assert err == "minidb figures: error: no figure named 'no_such_picture' (minidb figures --list names them all)\n"
    assert not (tmp_path / "out").exists()


def test_item_figures_bad_format_and_dpi_are_usage_errors(capsys):
    for argv, message in ((["--format", "jpg"], "invalid choice: 'jpg'"), (["--dpi", "5"], "must be at least 10: 5")):
        with pytest.raises(SystemExit) as exit_:
            main(["figures", *argv])
        assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_notebook_15_pictures_are_drawn_from_the_notebooks_own_workload():
    """The names 15_spark_log_analytics-K generate SPARK_WORKLOAD: the keywords of the notebook's workload cell."""
    cells = json.loads((Path(__file__).resolve().parents[2] / "notebooks" / "15_spark_log_analytics.ipynb")
                       .read_text(encoding="utf-8"))["cells"]
    cell = next("".join(c["source"]) for c in cells if "workload = GenerateRequest(" in "".join(c["source"]))
    call = ast.parse(cell).body[0].value

    def number(node: ast.expr) -> int:  # literals and products of literals, as the cell writes them
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            return number(node.left) * number(node.right)
        return ast.literal_eval(node)

    assert {kw.arg: number(kw.value) for kw in call.keywords} == SPARK_WORKLOAD
