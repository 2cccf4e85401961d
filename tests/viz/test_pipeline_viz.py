"""The pipeline's pictures: pure functions of rows, fixed sizes, honest about missing data."""

import pytest
from matplotlib.patches import Rectangle

from minidb.viz.pipeline import (
    MAX_FILES,
    draw_checkpoint_intervals,
    draw_entry_types_per_file,
    draw_transaction_sizes,
    draw_vlsn_streams,
)
from minidb.viz.style import WIDTH, type_colour

BY_FILE = [
    ("env-00", 1, "FileHeader", 1, 38, 0), ("env-00", 1, "GenUpdate", 40, 4000, 0),
    ("env-00", 2, "FileHeader", 1, 38, 0), ("env-00", 2, "GenCommit", 5, 190, 0),
    ("env-01", 1, None, 1, None, 1),
]


def bars(ax):
    return [p for p in ax.patches if isinstance(p, Rectangle) and p.get_width() > 0]


def test_entry_types_per_file_stacks_one_bar_per_file():
    fig = draw_entry_types_per_file(BY_FILE)
    ax = fig.axes[0]
    assert tuple(fig.get_size_inches()) == (WIDTH, 3.0)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["env-00 #1", "env-00 #2", "env-01 #1"]
    widths = {(round(b.get_y() + b.get_height() / 2), b.get_facecolor()[:3]): b.get_width() for b in bars(ax)}
    assert len(bars(ax)) == 5  # one segment per (file, type) present
    assert sum(widths.values()) == 48
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["FileHeader", "GenUpdate", "GenCommit", "unreadable"]
    by_bytes = draw_entry_types_per_file(BY_FILE, measure="bytes")
    assert sum(b.get_width() for b in bars(by_bytes.axes[0])) == 4000 + 190 + 76
    with pytest.raises(ValueError):
        draw_entry_types_per_file(BY_FILE, measure="pages")


def test_entry_types_per_file_caps_the_number_of_bars():
    rows = [("env", n, "Trace", 1, 10) for n in range(1, MAX_FILES + 11)]
    fig = draw_entry_types_per_file(rows)
    assert len(fig.axes[0].get_yticklabels()) == MAX_FILES
    assert f"(first {MAX_FILES} of {MAX_FILES + 10} files)" in fig._suptitle.get_text()


def test_transaction_sizes_bars_per_outcome():
    fig = draw_transaction_sizes([("commit", 2, 10), ("commit", 3, 4), ("abort", 2, 1), ("open", 5, 2)])
    ax = fig.axes[0]
    assert sorted(b.get_height() for b in bars(ax) if b.get_height() > 0) == [1, 2, 4, 10]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["commit (14)", "abort (1)", "open (2)"]


def test_checkpoint_intervals_two_panels():
    rows = [("env-00", 1, "0x1/0x26", "0x1/0x90", True, 106, None),
            ("env-00", 2, "0x1/0x400", None, False, None, 986),
            ("env-01", 1, "0x1/0x26", "0x1/0x50", True, 42, None)]
    fig = draw_checkpoint_intervals(rows)
    left, right = fig.axes
    assert [list(line.get_ydata()) for line in left.lines[::2]] == [[106], [42]]
    assert list(left.lines[1].get_xdata()) == [2]  # the checkpoint that never ended
    assert list(right.lines[0].get_ydata()) == [986]


def test_vlsn_streams_marks_gaps_repeats_and_divergence():
    streams = [("env-00", 10, 1, 10, 10, 0, 0), ("env-01", 10, 1, 10, 9, 1, 1), ("env-02", 10, 1, 10, 10, 0, 0)]
    divergence = [(6, "env-00", "0x1/0x90", "GenUpdate", 1, 2, 3, True),
                  (6, "env-01", "0x1/0x99", "GenUpdate", 1, 2, 3, True),
                  (6, "env-02", "0x1/0x88", "GenUpdate", 2, 1, 3, False)]
    fig = draw_vlsn_streams(streams, [("env-01", 4, 4, 1)], [("env-01", 8, 2)], divergence)
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert "gap 4" in texts and "twice 8" in texts and "first divergence: VLSN 6" in texts
    diverged = [b for b in bars(ax) if b.get_hatch() == "//"]
    assert len(diverged) == 1 and diverged[0].get_x() == 5.5 and diverged[0].get_width() == 5


def test_empty_inputs_say_so():
    for fig in (draw_entry_types_per_file([]), draw_transaction_sizes([]), draw_checkpoint_intervals([]),
                draw_vlsn_streams([])):
        assert any("no " in t.get_text() and "in these logs" in t.get_text() for ax in fig.axes for t in ax.texts)


def test_types_keep_their_colours():
    assert type_colour("GenCommit") == "#59a14f" and type_colour("GenAbort") == "#e15759"


def test_the_explorers_callback_is_a_pure_function_of_the_rows_and_the_choice():
    from minidb.viz.pipeline import EVERY, entry_types_view

    every = entry_types_view(BY_FILE)
    assert [t.get_text() for t in every.axes[0].get_yticklabels()] == ["env-00 #1", "env-00 #2", "env-01 #1"]
    one = entry_types_view(BY_FILE, "env-00", "bytes")
    assert [t.get_text() for t in one.axes[0].get_yticklabels()] == ["env-00 #1", "env-00 #2"]
    assert sum(b.get_width() for b in bars(one.axes[0])) == 38 + 4000 + 38 + 190
    assert one._suptitle.get_text() == "Entry types per log file of env-00, by bytes"
    assert entry_types_view(BY_FILE, EVERY, "entries")._suptitle.get_text().endswith("of every environment, by entries")
    assert BY_FILE[0] == ("env-00", 1, "FileHeader", 1, 38, 0)  # the rows are not changed
    with pytest.raises(ValueError, match=r"no environment 'env-09' in these rows \(they hold env-00, env-01\)"):
        entry_types_view(BY_FILE, "env-09")


def test_the_explorer_redraws_for_the_chosen_environment_and_measure():
    from minidb.viz.pipeline import entry_types_explorer

    explorer = entry_types_explorer(BY_FILE)
    assert len(explorer.result.axes[0].get_yticklabels()) == 3
    explorer.controls["env"].value = "env-00"
    labels = [t.get_text() for t in explorer.result.axes[0].get_yticklabels()]
    assert labels == ["env-00 #1", "env-00 #2"]
    explorer.controls["measure"].value = "bytes"
    assert sum(b.get_width() for b in bars(explorer.result.axes[0])) == 4000 + 190 + 76
    assert "of env-00, by bytes" in explorer.result._suptitle.get_text()
