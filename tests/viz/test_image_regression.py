"""Every picture looks as it did: each is drawn again and compared with its baseline PNG.

The names come from :func:`minidb.viz.gallery.all_figures` when the tests are
collected (the pictures of ``figures/`` and every notebook's, as
``minidb/viz/notebook_figures.py`` lists them today), so a picture added to a
notebook is compared as soon as it has a name, and fails with "no baseline
for NAME: run make figures" until its baseline is committed. A failure names
the picture, the RMS and the diff image in ``out/image-diffs/``. The last
tests show that the comparison catches one damaged element of a real
picture, and lets a harmless re-render through.
"""

from pathlib import Path

import pytest

from minidb.viz.baseline import TOLERANCE, check, compare, render, stale
from minidb.viz.gallery import all_figures

ROOT = Path(__file__).resolve().parents[2]
BASELINES = ROOT / "tests" / "viz" / "baseline"
DIFFS = ROOT / "out" / "image-diffs"
PICTURES = all_figures()


@pytest.mark.parametrize("name", list(PICTURES))
def test_picture_matches_its_baseline(name):
    problem = check(name, PICTURES[name], str(BASELINES), str(DIFFS))
    assert problem is None, problem


def test_every_baseline_belongs_to_a_picture():
    gone = stale(str(BASELINES), PICTURES)
    assert not gone, f"baselines of pictures that no longer exist: {', '.join(gone)}: run make figures"


# Damage, on a real picture: the demo log (entry boxes with labels, arcs, a legend).
def log_files():
    return PICTURES["log_files"]()


def move_label_onto_its_neighbour(fig):
    ax = fig.axes[0]
    first, second = ax.texts[0], ax.texts[1]
    first.set_position(second.get_position())


def drop_an_entry_box(fig):
    fig.axes[0].patches[3].remove()


def drop_the_legend(fig):
    for legend in list(fig.legends):
        legend.remove()


@pytest.mark.parametrize("damage", [move_label_onto_its_neighbour, drop_an_entry_box, drop_the_legend])
def test_one_damaged_element_fails_the_comparison(tmp_path, damage):
    baseline = render(log_files(), str(tmp_path / "log_files-baseline.png"))
    broken = log_files()
    damage(broken)
    problem = compare("log_files", render(broken, str(tmp_path / "log_files.png")), baseline)
    assert problem is not None and problem.startswith("log_files: differs from its baseline")
    rms = float(problem.split("by RMS ")[1].split()[0])
    assert rms > 2 * TOLERANCE, problem
    diff = tmp_path / "log_files-failed-diff.png"
    assert f"the difference is drawn in {diff}" in problem and diff.exists()
    assert problem.endswith("run make figures if the change is intended")


def test_a_harmless_rerender_passes(tmp_path):
    baseline = render(log_files(), str(tmp_path / "baseline.png"))
    again = log_files()
    again.canvas.draw()  # drawn once on screen, then saved: the same pixels
    assert compare("log_files", render(again, str(tmp_path / "again.png")), baseline) is None


def test_a_picture_without_a_baseline_says_to_run_make_figures(tmp_path):
    assert check("99_new-1", log_files, str(tmp_path / "none"), str(tmp_path / "diffs")) == \
        "no baseline for 99_new-1: run make figures"


def test_a_picture_of_another_size_fails(tmp_path):
    baseline = render(log_files(), str(tmp_path / "baseline.png"))
    taller = log_files()
    taller.set_figheight(taller.get_figheight() + 1)
    problem = compare("log_files", render(taller, str(tmp_path / "taller.png")), baseline)
    assert problem.startswith("log_files: the picture's size changed") and "run make figures" in problem


def test_refresh_rewrites_only_what_changed_and_says_so(tmp_path):
    from minidb.viz.baseline import refresh

    def damaged():
        fig = log_files()
        drop_the_legend(fig)
        return fig

    first = refresh(str(tmp_path), {"a": log_files, "b": log_files})
    assert (first.added, first.changed, first.unchanged) == (["a", "b"], [], 0)
    before = (tmp_path / "b.png").stat().st_mtime_ns
    second = refresh(str(tmp_path), {"a": damaged, "b": log_files})
    assert (second.added, second.changed, second.unchanged, second.removed) == ([], ["a"], 1, [])
    assert (tmp_path / "b.png").stat().st_mtime_ns == before  # within the tolerance: not rewritten
    third = refresh(str(tmp_path), {"a": damaged})
    assert third.removed == ["b"] and not (tmp_path / "b.png").exists()
    assert third.summary() == f"baselines in {tmp_path}: 0 changed, 0 new, 1 removed, 1 unchanged\n  removed: b"
