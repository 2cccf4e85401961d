"""Pictures of the log and the crash widget: data, figures, callbacks."""

import pytest
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from minidb.io import CrashMode, SimDisk
from minidb.viz.gallery import FIGURES, write_figures
from minidb.viz.log import draw_log, log_layout
from minidb.viz.log_demo import DEMO_MESSAGES, SCRIPT, demo_disk, demo_log, demo_writes, log_crash_demo, run_script
from minidb.viz.script import ScriptError
from minidb.viz.style import WIDTH, type_colour
from minidb.viz.widgets import log_crash_explorer


def test_layout_of_the_demo_log():
    strips = log_layout(demo_disk())
    assert [s.name for s in strips] == ["00000001.jdb", "00000002.jdb"]
    types = [b.type_name for s in strips for b in s.entries]
    assert types.count("FileHeader") == 2 and types.count("Trace") == len(DEMO_MESSAGES)
    for strip in strips:
        assert strip.bad_offset is None
        offsets = [b.offset for b in strip.entries]
        assert [b.prev for b in strip.entries[1:]] == offsets[:-1]
        assert strip.entries[-1].offset + strip.entries[-1].size == strip.size
    assert strips[0].durable_size == strips[0].size  # file 1 was fsynced before file 2 began
    assert strips[1].durable_size < strips[1].size  # the last writes were never synced


def test_layout_shows_a_torn_tail():
    disk = demo_disk()
    disk.crash(CrashMode.torn(5))
    last = log_layout(disk)[-1]
    assert last.bad_kind == "torn" and last.size - last.bad_offset == 5


def test_draw_log_has_a_box_per_entry_at_a_fixed_size():
    strips = log_layout(demo_disk())
    fig = draw_log(strips, title="t")
    assert isinstance(fig, Figure)
    assert tuple(fig.get_size_inches()) == (WIDTH, 1.6 + 1.2 * 2)
    ax = fig.axes[0]
    coloured = [p for p in ax.patches if isinstance(p, Rectangle)
                and p.get_facecolor()[:3] != (1.0, 1.0, 1.0) and p.get_width() > 0]
    boxes = sum(len(s.entries) for s in strips)
    assert len(coloured) == boxes + len(strips)  # entries plus the strip backgrounds


def test_type_colours_are_stable():
    assert type_colour("Trace") == type_colour("Trace")
    assert type_colour("SomeNewType") == type_colour("SomeNewType")


@pytest.mark.parametrize("keep, survivors, cut", [
    ("nothing", 4, False),   # only what the sync after entry 4 promised
    ("torn", 7, True),       # the fifth write, torn: its entry is cut off
    ("everything", 8, False),
])
def test_crash_demo_after_write_5(keep, survivors, cut):
    demo = log_crash_demo(after_write=5, keep=keep)
    assert demo.survivors == tuple(DEMO_MESSAGES[:survivors])
    assert demo.synced == 4
    assert (demo.cut is not None) == cut
    assert isinstance(demo.figure, Figure)


def test_crash_demo_every_point_keeps_a_prefix_with_the_synced_entries():
    for k in range(1, len(demo_writes()) + 1):
        for keep in ("nothing", "torn", "everything"):
            demo = log_crash_demo(k, keep)
            assert demo.survivors == tuple(DEMO_MESSAGES[: len(demo.survivors)])
            assert len(demo.survivors) >= demo.synced


def test_crash_demo_rejects_bad_arguments():
    with pytest.raises(ValueError, match="after_write must be between 1 and"):
        log_crash_demo(0)
    with pytest.raises(ValueError, match="keep must be one of"):
        log_crash_demo(1, "some")


def test_the_explorer_widget_drives_the_callback():
    explorer = log_crash_explorer()
    assert explorer.controls["after_write"].description == "crash after write"
    assert all(c.style.description_width == "initial" for c in explorer.controls.values())  # labels shown whole
    explorer.controls["keep"].value = "nothing"
    explorer.controls["after_write"].value = 5
    assert explorer.result.survivors == tuple(DEMO_MESSAGES[:4])
    assert explorer.result.summary().startswith("crash after write 5 ")
    explorer.controls["keep"].value = "everything"
    assert explorer.result.survivors == tuple(DEMO_MESSAGES[:8])
    explorer.controls["after_write"].value = 1
    assert explorer.result.survivors == ()


# -- the workload as a script ------------------------------------------------------------------
def test_the_default_script_is_the_bank_workload_of_the_notebook():
    assert DEMO_MESSAGES[0] == "open account alice" and len(DEMO_MESSAGES) == 10
    assert [i for i, op in enumerate(SCRIPT, 1) if op == ("sync",)] == [5, 10]  # after entries 4 and 8
    disk = SimDisk("t")
    log = demo_log(disk)
    lsns = run_script(log, SCRIPT, 0, 4)
    assert [str(lsn) for lsn in lsns] == ["0x1/0x2e", "0x1/0x50", "0x1/0x70", "0x1/0x91"]  # what 01 prints
    assert disk.pending_ops() > 0  # the full buffer was written, nothing fsynced
    assert run_script(log, SCRIPT, 4, 5) == [] and disk.pending_ops() == 0  # step 5 syncs
    run_script(log, SCRIPT, 5)
    assert disk.list() == ["00000001.jdb", "00000002.jdb"]
    assert [e.values["message"] for e in log.scan() if "message" in e.values] == DEMO_MESSAGES


def test_an_edited_script_without_the_first_sync_loses_entries_1_to_4():
    edited = [op for i, op in enumerate(SCRIPT, 1) if i != 5]  # the notebook's what-if: drop the first sync
    kept = log_crash_demo(4, "nothing")
    lost = log_crash_demo(4, "nothing", script=edited)
    assert kept.synced == 4 and kept.survivors == tuple(DEMO_MESSAGES[:4])
    assert lost.synced == 0 and lost.survivors == ()
    assert log_crash_demo(6, "nothing", script=edited).survivors == tuple(DEMO_MESSAGES[:8])  # the second sync


def test_a_bad_log_script_names_the_step():
    with pytest.raises(ScriptError, match=r"step 2 \('apend', 'x'\): unknown operation 'apend'"):
        log_crash_demo(1, script=[("sync",), ("apend", "x")])
    with pytest.raises(ScriptError, match=r"step 1 \('append', 42\): the message must be a string"):
        demo_writes([("append", 42)])
    with pytest.raises(ScriptError, match=r"step 3 \('sync', 'now'\): sync takes no arguments"):
        run_script(demo_log(SimDisk("t")), [("append", "a"), ("flush",), ("sync", "now")], 0, 1)


def test_the_explorer_runs_an_edited_script():
    edited = [("append", "open account dave"), ("sync",), ("append", "deposit dave 5"), ("flush",)]
    explorer = log_crash_explorer(edited)
    assert explorer.controls["after_write"].max == len(demo_writes(edited))
    explorer.controls["keep"].value = "nothing"
    explorer.controls["after_write"].value = explorer.controls["after_write"].max
    assert explorer.result.survivors == ("open account dave",)
    explorer.controls["keep"].value = "everything"
    assert explorer.result.survivors == ("open account dave", "deposit dave 5")


def test_gallery_writes_every_figure_reproducibly(tmp_path):
    first = write_figures(str(tmp_path / "a"))
    second = write_figures(str(tmp_path / "b"))
    assert [p.split("/")[-1] for p in first] == list(FIGURES)
    for a, b in zip(first, second, strict=True):
        with open(a, "rb") as fa, open(b, "rb") as fb:
            data = fa.read()
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and data == fb.read()


def test_each_slider_has_a_row_of_its_own_as_wide_as_the_output():
    # A slider sharing its row with a menu shrank to a bare handle in a 1400-pixel window.
    import ipywidgets as widgets

    explorer = log_crash_explorer()
    rows = explorer.widget().children
    slider, menu = explorer.controls["after_write"], explorer.controls["keep"]
    assert rows[0] is slider and slider.layout.width == "100%"
    assert isinstance(rows[1], widgets.HBox) and rows[1].children == (menu,) and rows[2] is explorer.output
