"""The rules every notebook follows, checked on the committed (executed) notebooks.

- its name is ``NN_topic.ipynb`` (``NNb_topic`` for a second notebook on one module);
- every section (a ``## `` heading) that shows a picture asks the reader to predict
  first: a markdown cell with "**Predict" comes before the section's first picture;
- a step-by-step demo takes its workload as data shown in a cell (``script = [``)
  that the later cells use, so a student can edit it and re-run;
- it ends with an interactive control (an ipywidgets view in the last code cell's
  output) and, where the module has an exercise, sends the reader to it;
- it cites ``docs/sources.md`` (checked in tests/test_sources.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
WIDGET = "application/vnd.jupyter.widget-view+json"
# The notebooks whose module has an exercise, and its folder under exercises/ (a tuple: several exercises).
EXERCISES: dict[str, str | tuple[str, ...]] = {
    "01_log": ("01a_log_end", "01b_group_commit"),
    "02_pages": "02a_slotted_insert",
    "03_volume_extents": "03a_extent_alloc",
    "04_buffer_pool": ("04a_clock_replacement", "04b_wal_rule"),
    "06_transactions_records": "06a_write_clrs",
    "05b_deadlocks": "05a_lock_compat",
    "08_aries_recovery": ("08a_aries_undo", "08b_aries_analysis", "08c_redo_test"),
    "09_logstore_tree": "09a_bin_split",
    "10_checkpointer": "10a_provisional",
    "07_btree": "07a_leaf_split",
    "11_cleaner_eraser": ("11a_live_or_obsolete", "11b_erase_throttle"),
    "12_vlsn_index": "12a_vlsn_bucket",
    "13_feeders_replicas": "13a_ack_policy",
    "16_log_space": "16a_log_reservation",
    "14_syncup_rollback": "14a_matchpoint",
    "15_spark_log_analytics": "15a_resync",
    "17_making_it_fast": "05a_lock_compat",
    "18_rtree": ("18a_choose_subtree", "08a_aries_undo"),
}
# The notebooks built around a step-by-step demo of a workload.
DEMOS = {"01_log", "02_pages", "03_volume_extents", "04_buffer_pool", "05_locks", "05b_deadlocks",
         "06_transactions_records", "07_btree", "08_aries_recovery", "09_logstore_tree", "10_checkpointer",
         "11_cleaner_eraser", "12_vlsn_index", "16_log_space", "17_making_it_fast", "18_rtree"}


def folders_of(exercise: str | tuple[str, ...]) -> tuple[str, ...]:
    return (exercise,) if isinstance(exercise, str) else exercise


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"])


def shows_picture(cell: dict) -> bool:
    return any("image/png" in o.get("data", {}) or "image/svg+xml" in o.get("data", {})
               for o in cell.get("outputs", []))


def ids(paths: list[Path]) -> list[str]:
    return [p.stem for p in paths]


def test_notebook_rules_cover_the_notebooks_named_here():
    stems = {p.stem for p in NOTEBOOKS}
    assert set(EXERCISES) <= stems and DEMOS <= stems, sorted((set(EXERCISES) | DEMOS) - stems)
    for folder in (f for folders in EXERCISES.values() for f in folders_of(folders)):
        assert (ROOT / "exercises" / folder / "README.md").exists(), folder


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_notebook_name(path: Path):
    assert re.fullmatch(r"\d\d[a-z]?_[a-z0-9_]+", path.stem), path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_notebook_predict_before_every_sections_first_picture(path: Path):
    heading, asked, shown = None, False, False
    for cell in cells(path):
        text = source(cell)
        if cell["cell_type"] == "markdown":
            if m := re.search(r"^## (.+)$", text, re.M):
                heading, asked, shown = m.group(1), False, False
            asked = asked or "**Predict" in text
        elif shows_picture(cell) and heading is not None and not shown:
            assert asked, f"{path.name}: section '{heading}' shows a picture before asking the reader to predict"
            shown = True


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.stem in DEMOS], ids=lambda p: p.stem)
def test_notebook_workload_is_data_in_a_cell(path: Path):
    code = [source(c) for c in cells(path) if c["cell_type"] == "code"]
    defining = [i for i, text in enumerate(code) if re.search(r"^script = \[", text, re.M)]
    assert defining, f"{path.name}: no cell writes the workload out as `script = [...]`"
    later = "\n".join(code[defining[0] + 1:])
    assert re.search(r"\bscript\b", later), f"{path.name}: the cells after the script do not use it"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_notebook_ends_with_a_control_and_the_exercise(path: Path):
    all_cells = cells(path)
    last_code = [c for c in all_cells if c["cell_type"] == "code"][-1]
    assert any(WIDGET in o.get("data", {}) for o in last_code.get("outputs", [])), \
        f"{path.name}: the last code cell shows no interactive control"
    if path.stem in EXERCISES:
        tail = "\n".join(source(c) for c in all_cells[-3:] if c["cell_type"] == "markdown")
        for folder in folders_of(EXERCISES[path.stem]):
            assert re.search(rf"exercise[^\n]*{folder}", tail, re.I), \
                f"{path.name}: the end does not send the reader to exercises/{folder}"
