"""Every picture reads at notebook size: text of 9 pt and more, no label over another, none cut off,
no marker over another, no bar too thin to see.

A notebook column is about 9.5 inches wide at 100 dpi; a wider figure is
scaled down, so a text's effective size is its font size x min(1, 9.5 /
width). Each figure is drawn with the Agg canvas and every visible, non-empty
Text artist measured (``get_window_extent``): its effective size is at least
9 pt, its box lies inside the figure, and no two boxes intersect. The
marks are checked the same way at the figure's own size in pixels: the box of
every drawn marker (a line's or a scatter's, its marker size square; not a
hollow ring drawn around a point to single it out) meets no other marker's box (:data:`MARKER_OVERLAP_PX` of slack, for antialiasing), and
every drawn bar (``bar``/``barh``) is at least :data:`MIN_BAR_PX` pixels in
both directions, so a bar is never a sliver a projector loses. The
pictures are those of ``figures/`` and every picture of the notebooks (each
demo's step function at the steps the notebooks show), plus the pipeline's
pictures from rows shaped like notebook 15's. Graphviz pictures are laid out
by dot: their SVG must be at most a column wide with text of 9 pt and more.
"""

import re
from unittest.mock import patch

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PathCollection
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Text

from minidb.viz.gallery import FIGURES, all_figures
from minidb.viz.style import SMALL, WIDTH

COLUMN_PT = WIDTH * 72
MIN_BAR_PX = 3  # a bar thinner than this, at the figure's size, is a sliver
MARKER_OVERLAP_PX = 1.0  # two marker boxes may share an antialiased edge, no more


def problems(fig: Figure) -> list[str]:
    """What makes ``fig`` hard to read at notebook size (empty if nothing)."""
    FigureCanvasAgg(fig)
    renderer = fig.canvas.get_renderer()
    drawn: list[Text] = []  # the texts a draw really draws (not, e.g., tick labels outside the axis limits)
    draw = Text.draw

    def record(text, *args, **kwargs):
        if text.get_visible() and text.get_text().strip() and text not in drawn:
            drawn.append(text)
        return draw(text, *args, **kwargs)

    marked: list = []  # the lines and scatters a draw really draws
    draw_line, draw_scatter = Line2D.draw, PathCollection.draw

    def record_marks(original):
        def draw_and_record(artist, *args, **kwargs):
            if artist.get_visible() and artist not in marked:
                marked.append(artist)
            return original(artist, *args, **kwargs)
        return draw_and_record

    with patch.object(Text, "draw", record), patch.object(Line2D, "draw", record_marks(draw_line)), \
            patch.object(PathCollection, "draw", record_marks(draw_scatter)):
        fig.draw(renderer)
    scale = min(1.0, WIDTH / fig.get_figwidth())
    boxes, found = [], []
    for text in drawn:
        box = text.get_window_extent(renderer)
        name = text.get_text().replace("\n", " ")[:40]
        if text.get_fontsize() * scale < SMALL:
            found.append(f"small: {name!r} at {text.get_fontsize() * scale:.1f} pt")
        if box.x0 < -0.5 or box.y0 < -0.5 or box.x1 > fig.bbox.width + 0.5 or box.y1 > fig.bbox.height + 0.5:
            found.append(f"outside the figure: {name!r}")
        for other, other_name in boxes:
            if box.x0 < other.x1 and other.x0 < box.x1 and box.y0 < other.y1 and other.y0 < box.y1:
                found.append(f"overlap: {name!r} and {other_name!r}")
        boxes.append((box, name))
    return found + marker_problems(fig, marked) + bar_problems(fig)


def marker_boxes(fig: Figure, artists: list) -> list[tuple[float, float, float, float, str]]:
    """Each drawn marker's box in pixels (x0, y0, x1, y1, a name): its marker size square around its point."""
    px_per_pt = fig.dpi / 72
    boxes = []
    for artist in artists:
        if isinstance(artist, Line2D):
            if artist.get_marker() in (None, "", "None", " ") or isinstance(artist.get_marker(), int) \
                    or not artist.get_markersize() or artist.get_markerfacecolor() == "none":
                continue  # no marker, an axis's tick (TICKDOWN, ... are ints), or a ring drawn around a point
            points = artist.get_transform().transform(artist.get_xydata())
            sizes = [artist.get_markersize()] * len(points)
            name = artist.get_label() if not artist.get_label().startswith("_") else f"marker {artist.get_marker()}"
        else:
            offsets = artist.get_offsets()
            if not len(offsets):
                continue
            points = artist.get_offset_transform().transform(offsets)
            raw = artist.get_sizes()
            sizes = [(raw[i % len(raw)] if len(raw) else 36) ** 0.5 for i in range(len(points))]
            name = artist.get_label() if not artist.get_label().startswith("_") else "scatter"
        for (x, y), size in zip(points, sizes, strict=True):
            half = size * px_per_pt / 2
            if x == x and y == y:  # not NaN: a gap in a line
                boxes.append((x - half, y - half, x + half, y + half, name))
    return boxes


def marker_problems(fig: Figure, artists: list) -> list[str]:
    """Markers whose boxes overlap (by more than an antialiased edge): two points the eye cannot tell apart."""
    boxes = sorted(marker_boxes(fig, artists))
    found = []
    slack = MARKER_OVERLAP_PX
    for i, (x0, y0, x1, y1, name) in enumerate(boxes):
        for ox0, oy0, _ox1, oy1, other in boxes[i + 1:]:
            if ox0 >= x1 - slack:
                break  # sorted by x0: no later box reaches back
            if oy0 < y1 - slack and y0 < oy1 - slack:
                found.append(f"markers overlap: {name!r} at ({x0 + (x1 - x0) / 2:.0f}, {y0 + (y1 - y0) / 2:.0f}) px "
                             f"and {other!r}")
    return found


def bar_problems(fig: Figure) -> list[str]:
    """Bars (of ``bar``/``barh``) narrower or flatter than :data:`MIN_BAR_PX` at the figure's size."""
    found = []
    for ax in fig.axes:
        for container in ax.containers:
            if not isinstance(container, BarContainer):
                continue
            for bar in container.patches:
                if not bar.get_visible() or bar.get_width() == 0 or bar.get_height() == 0:
                    continue  # a zero bar draws nothing
                box = bar.get_window_extent()
                if min(box.width, box.height) < MIN_BAR_PX:
                    label = container.get_label() if not str(container.get_label()).startswith("_") else "a bar"
                    found.append(f"sliver bar: {label!r} {box.width:.1f} x {box.height:.1f} px")
    return found


def graphviz_problems(graph) -> list[str]:
    svg = graph.pipe(format="svg").decode()
    width = float(re.search(r'<svg width="([\d.]+)pt"', svg).group(1))
    scale = min(1.0, COLUMN_PT / width)
    sizes = [float(s) * scale for s in re.findall(r'font-size="([\d.]+)"', svg)]
    found = [f"small: text at {size:.1f} pt" for size in sizes if size < SMALL]
    return found + ([f"wider than a column: {width} pt"] if width > COLUMN_PT else [])


@pytest.mark.parametrize("name", list(all_figures()))
def test_item_readable_every_picture_of_figures_and_notebooks(name):
    picture = all_figures()[name]()
    found = problems(picture) if isinstance(picture, Figure) else graphviz_problems(picture)
    assert found == [], f"{name}: {found}"


def test_item_readable_every_figures_entry_has_a_name_and_the_notebooks_are_covered():
    names = list(all_figures())
    assert [n + ".png" for n in names[: len(FIGURES)]] == list(FIGURES)
    for notebook in ("00_start_here", "01_log", "02_pages", "03_volume_extents", "04_buffer_pool", "05_locks",
                     "05b_deadlocks", "06_transactions_records", "07_btree", "08_aries_recovery", "09_logstore_tree",
                     "10_checkpointer", "11_cleaner_eraser", "12_vlsn_index", "13_feeders_replicas",
                     "14_syncup_rollback", "16_log_space"):
        assert f"{notebook}-1" in names


PIPELINE_ENVS = [f"env-{i:02d}" for i in range(5)]


def pipeline_figures() -> dict[str, Figure]:
    """The pipeline's pictures from rows shaped like notebook 15's (5 environments, 4 files each)."""
    from minidb.viz.pipeline import (
        draw_checkpoint_intervals,
        draw_entry_types_per_file,
        draw_transaction_sizes,
        draw_vlsn_streams,
    )

    types = ["FileHeader", "GenUpdate", "GenCommit", "GenAbort", "GenCkptStart", "GenCkptEnd", "Matchpoint"]
    by_file = [(env, f, t, 10 + 7 * k + f, 300 * (k + 1), 0) for env in PIPELINE_ENVS for f in range(1, 5)
               for k, t in enumerate(types)]
    sizes = [(outcome, n, 50 // n + (outcome == "abort")) for outcome in ("commit", "abort") for n in range(2, 9)]
    ckpts = [(env, k, "0x1/0x26", "0x1/0x90", k < 8, 300 + 40 * k if k < 8 else None, 700 + 30 * k if k > 1 else None)
             for env in PIPELINE_ENVS for k in range(1, 9)]
    streams = [(env, 600, 1, 600 - 40 * (env == "env-02"), 600, 0, 0) for env in PIPELINE_ENVS]
    divergence = [(500, env, "0x2/0x1c0", "GenUpdate", 1 + (env == "env-02"), 4, 5, env != "env-02")
                  for env in PIPELINE_ENVS]
    return {
        "entry types per file": draw_entry_types_per_file(by_file),
        "transaction sizes": draw_transaction_sizes(sizes),
        "checkpoint intervals": draw_checkpoint_intervals(ckpts),
        "vlsn streams": draw_vlsn_streams(streams, [("env-01", 120, 121, 2)], [("env-03", 300, 2)],
                                          divergence),
    }


def test_item_readable_pipeline_pictures():
    found = {name: problems(fig) for name, fig in pipeline_figures().items()}
    assert {name: p for name, p in found.items() if p} == {}


def test_item_readable_the_checker_finds_small_overlapping_and_cut_off_text():
    # The check itself can fail: a figure with each fault is caught.
    fig = Figure(figsize=(12, 3))
    fig.text(0.1, 0.5, "tiny", fontsize=10)  # 10 pt x 9.5/12 = 7.9 pt
    fig.text(0.5, 0.5, "one label", fontsize=12)
    fig.text(0.52, 0.5, "another label", fontsize=12)
    fig.text(0.99, 0.9, "cut off at the right edge", fontsize=12)
    found = " ".join(problems(fig))
    assert "small: 'tiny'" in found and "overlap: 'another label' and 'one label'" in found
    assert "outside the figure: 'cut off at the right edge'" in found


def test_item_readable_the_checker_finds_overlapping_markers_and_sliver_bars():
    fig = Figure(figsize=(9.5, 3))
    ax = fig.add_subplot()
    ax.set_xlim(0, 1000)
    ax.plot([100, 102, 600], [0.5, 0.5, 0.5], marker="o", markersize=8, linestyle="", label="crowded")
    ax.scatter([800, 801], [0.2, 0.2], s=64, label="stacked")
    ax.barh([0.8], [1], left=[300], height=0.1, label="sliver")  # 1 of 1000 units: under a pixel
    ax.bar([900], [0.3], width=60, label="wide enough")
    found = " ".join(problems(fig))
    assert "markers overlap: 'crowded'" in found and "markers overlap: 'stacked'" in found
    assert "sliver bar: 'sliver'" in found and "wide enough" not in found
    assert found.count("markers overlap") == 2  # 600 stands alone


def test_item_readable_tree_keeps_one_row_per_level_with_narrow_bins_instead_of_shrinking():
    # A second row of BINs made the lines from the INs above cross; the level keeps one row, its BINs narrow.
    from minidb.viz.logstore import level_widths, node_labels, tree_and_log, tree_rows
    from minidb.viz.logstore_demo import checkpoint_demo_env

    view = tree_and_log(checkpoint_demo_env(), "accounts").view
    rows, _, _ = tree_rows(view, COLUMN_PT * 0.96)
    bins = [n for n in view.nodes() if n.is_bin]
    assert sum(len(row) for row in rows) == len(view.nodes())
    assert len(rows) == view.root.level  # one row per level: the 15 BINs side by side
    box_w, gap = level_widths(view, COLUMN_PT * 0.96)[1]
    assert len(bins) * (box_w + gap) <= COLUMN_PT * 0.96
    labels = node_labels(view, COLUMN_PT * 0.96)
    assert labels[bins[0].node_id].splitlines()[0] == f"BIN {bins[0].node_id}"  # the name, then the keys
