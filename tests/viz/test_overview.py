"""The start page's map (minidb.viz.overview) and its crash demonstration (minidb.viz.start_demo)."""

from pathlib import Path

import pytest
from matplotlib.figure import Figure

from minidb.viz.overview import LAYERS, NOTEBOOKS, draw_layers, notebook_table, notebooks_of, number_runs
from minidb.viz.script import ScriptError
from minidb.viz.start_demo import SCRIPT, crash_after, start_explorer
from minidb.viz.style import WIDTH

from tests.viz.helpers import notebook_scripts

ROOT = Path(__file__).resolve().parents[2]


def test_every_notebook_is_listed_once_in_a_layer_that_exists():
    stems = [n.stem for n in NOTEBOOKS]
    assert len(stems) == len(set(stems))
    assert {p.stem for p in (ROOT / "notebooks").glob("*.ipynb")} <= set(stems)
    keys = {layer.key for layer in LAYERS}
    assert all(n.layer in keys for n in NOTEBOOKS)
    assert sum(len(notebooks_of(key)) for key in keys) == len(NOTEBOOKS)
    assert notebooks_of("pagestore") == ["02", "03", "04", "05", "05b", "06", "07", "08", "16", "18"]
    assert number_runs(notebooks_of("pagestore")) == "02-08, 16, 18"
    assert number_runs(["09", "10", "10b"]) == "09, 10, 10b" and number_runs(["01"]) == "01"


def test_the_layers_name_real_packages():
    for layer in LAYERS:
        first, *rest = [name.strip() for name in layer.package.split(",")]  # "minidb/errors.py, stats.py"
        folder = first.rsplit("/", 1)[0]
        for path in [first] + [f"{folder}/{name}" for name in rest]:
            assert (ROOT / path).exists(), path


def test_the_picture_names_every_layer_and_its_notebooks():
    fig = draw_layers()
    assert isinstance(fig, Figure) and fig.get_figwidth() == WIDTH
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert all(layer.package in texts for layer in LAYERS)
    assert "notebooks 02-08, 16, 18" in texts and "notebooks 09-11" in texts and "notebooks 12-14" in texts


def test_the_table_links_every_notebook():
    table = notebook_table()
    assert all(f"[{n.stem}]({n.stem}.ipynb)" in table for n in NOTEBOOKS)
    assert len(table.splitlines()) == len(NOTEBOOKS) + 2


def test_the_notebook_shows_the_modules_script():
    assert notebook_scripts("00_start_here")["script"] == SCRIPT


def test_the_default_script_keeps_what_was_synced():
    nothing = crash_after(len(SCRIPT), "nothing")
    assert nothing.synced == 2 and nothing.survivors == ("open account alice", "deposit alice 100")
    everything = crash_after(len(SCRIPT), "everything")
    assert everything.survivors == tuple(text for name, *text in SCRIPT if name == "append" for text in text)
    assert crash_after(0).survivors == () and crash_after(2, "nothing").survivors == ()
    assert "found after reopening 2 (2 lost)" in nothing.summary()


def test_an_edited_script_with_the_sync_last_loses_nothing():
    edited = [op for op in SCRIPT if op != ("sync",)] + [("sync",)]
    result = crash_after(len(edited), "nothing", edited)
    assert result.synced == 4 and len(result.survivors) == 4
    assert crash_after(4, "nothing", edited).survivors == ()  # before the sync, nothing was durable


@pytest.mark.parametrize("script, message", [
    ([("append", "a"), ("synch",)], r"step 2 \('synch',\): unknown operation 'synch'"),
    ([("append",)], r"step 1 \('append',\): append takes text"),
    ([("sync",), ("append", 7)], r"step 2 \('append', 7\): the text is a string in quotes, not 7"),
])
def test_a_bad_script_names_the_step(script, message):
    with pytest.raises(ScriptError, match=message):
        crash_after(1, "nothing", script)


def test_bad_step_or_keep():
    with pytest.raises(ValueError, match="step must be between 0 and 5"):
        crash_after(6)
    with pytest.raises(ValueError, match="keep must be one of nothing, everything"):
        crash_after(1, "some")


def test_the_explorer_drives_the_pure_callback_over_an_edited_script():
    edited = SCRIPT + [("sync",)]
    explorer = start_explorer(edited, 4)
    assert explorer.controls["step"].max == 6 and explorer.result.survivors == ("open account alice",
                                                                                "deposit alice 100")
    explorer.controls["keep"].value = "everything"
    assert len(explorer.result.survivors) == 3
    explorer.controls["step"].value = 6
    explorer.controls["keep"].value = "nothing"
    assert len(explorer.result.survivors) == 4
    with pytest.raises(ScriptError, match="step 1"):
        start_explorer([("fsync",)])


def test_the_arrows_agree_with_the_imports():
    # A layer imports only from the layers its arrows reach (or its own floor), and from each it points to.
    import re

    by_key = {layer.key: layer for layer in LAYERS}
    module_layer = {"errors": "base", "stats": "base", "impl": "base"}
    module_layer |= {layer.key: layer.key for layer in LAYERS if layer.key != "base"}

    def reach(key: str) -> set[str]:
        return {key}.union(*(reach(used) for used in by_key[key].uses))

    for layer in LAYERS:
        if layer.key == "base":
            continue
        imported = set()
        for path in (ROOT / "minidb" / layer.key).rglob("*.py"):
            for name in re.findall(r"^\s*(?:from|import) minidb\.(\w+)", path.read_text(encoding="utf-8"), re.M):
                imported.add(module_layer.get(name))
        imported -= {other.key for other in LAYERS if other.row == layer.row}  # the front ends call each other
        imported.discard(None)  # crash tests, the quiz, fast twins: not drawn
        assert imported <= reach(layer.key) - {layer.key}, (layer.key, imported - reach(layer.key))
        for used in layer.uses:
            assert imported & reach(used), (layer.key, used)
    assert by_key["replication"].column == by_key["logstore"].column  # on the log store alone
