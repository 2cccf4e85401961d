"""Pictures of the log and the crash widget: data, figures, callbacks."""

import pytest
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from minidb.io import CrashMode
from minidb.viz.gallery import FIGURES, write_figures
from minidb.viz.log import draw_log, log_layout
from minidb.viz.log_demo import DEMO_MESSAGES, demo_disk, demo_writes, log_crash_demo
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
    explorer.controls["keep"].value = "nothing"
    explorer.controls["after_write"].value = 5
    assert explorer.result.survivors == tuple(DEMO_MESSAGES[:4])
    explorer.controls["keep"].value = "everything"
    assert explorer.result.survivors == tuple(DEMO_MESSAGES[:8])
    explorer.controls["after_write"].value = 1
    assert explorer.result.survivors == ()


def test_gallery_writes_every_figure_reproducibly(tmp_path):
    first = write_figures(str(tmp_path / "a"))
    second = write_figures(str(tmp_path / "b"))
    assert [p.split("/")[-1] for p in first] == list(FIGURES)
    for a, b in zip(first, second):
        with open(a, "rb") as fa, open(b, "rb") as fb:
            data = fa.read()
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and data == fb.read()
