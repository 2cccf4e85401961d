"""Shared look of minidb's pictures: colours, figure sizes, saving.

Every drawing function returns a :class:`matplotlib.figure.Figure` built
without pyplot (no global state, nothing to close), WIDTH inches wide (a
notebook column) and as tall as its content needs, so the same call gives
the same picture in a notebook, a test and ``figures/``, and its text is as
large there as it was drawn. Where a row of boxes would not fit the width it
wraps into more rows instead of shrinking its labels (:func:`fits` and
:func:`text_width` decide before drawing). :func:`save` writes a picture as
PNG (150 dpi by default) or SVG, the same bytes on every run.
"""

from __future__ import annotations

import os
import textwrap
from typing import Any, Union

import matplotlib
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure

from minidb.io.created import created

# One explicit colour per entry type, grouped by family so that a picture's
# colours say what kind of work an entry does: data changes are blues, tree
# nodes purples, space allocation browns and oranges, transaction control
# greens (commit) and reds (abort), compensation pinks and magentas,
# checkpoints yellows (but the device table, a light blue), whole-page images
# blue-greys, the page store's B+tree entries teals, volume mounts and
# dismounts indigo and cyan. Within one engine's legend no two types are alike
# (tests/viz/test_style.py checks every pair's colour distance).
FAMILIES: dict[str, dict[str, str]] = {
    "log": {"FileHeader": "#9e9e9e", "Trace": "#80cbc4", "Erased": "#212121"},
    "data": {
        "rec_insert": "#1f5fbf", "rec_remove": "#90caf9", "rec_splice": "#00838f",
        "LN": "#1565c0", "LN_TX": "#0b2e6f", "DEL_LN": "#64b5f6", "DEL_LN_TX": "#7986cb",
        "GenUpdate": "#4e79a7",
    },
    "tree": {"IN": "#6a1b9a", "BIN": "#ba68c8", "MapLN": "#e1bee7", "FileSummaryLN": "#455a64",
             "OldFileSummaryLN": "#8d6e63"},
    "allocation": {
        "create_ext_list": "#8d4a1f", "free_ext_list": "#d7b48a", "set_ext_next": "#e65100",
        "set_ext_prev": "#ffccbc", "alloc_pages_in_ext": "#c68642", "free_pages_in_ext": "#4e342e",
        "store_operation": "#9e9d24", "page_format": "#795548",
    },
    "transaction": {
        "xct_abort": "#c62828", "xct_freeing_space": "#9ccc65", "xct_end": "#2e7d32",
        "Commit": "#388e3c", "Abort": "#e53935", "GenCommit": "#59a14f", "GenAbort": "#e15759",
        "xct_prepare_st": "#00c853", "xct_prepare_alk": "#c5e1a5", "xct_prepare_stores": "#76ff03",
        "xct_prepare_fi": "#004d40",
    },
    "compensation": {
        "compensate": "#ad1457", "clr_rec_insert": "#f48fb1", "clr_rec_remove": "#7b1fa2",
        "clr_rec_splice": "#e040fb",
    },
    "checkpoint": {
        "chkpt_begin": "#f9a825", "chkpt_bf_tab": "#fff176", "chkpt_xct_tab": "#c6a700",
        "chkpt_end": "#8d6e00", "CkptStart": "#fbc02d", "CkptEnd": "#a67c00",
        "GenCkptStart": "#f28e2b", "GenCkptEnd": "#b07aa1", "chkpt_dev_tab": "#42a5f5",
    },
    "volume": {"mount_vol": "#283593", "dismount_vol": "#00b8d4"},
    "page": {"page_image": "#546e7a", "unlogged_page_image": "#37474f"},
    "btree": {
        "btree_insert": "#006644", "btree_remove": "#52e0b1", "page_insert": "#009966", "page_remove": "#80ffea",
        "page_link": "#3fa68d", "btree_header": "#00e699",
    },
    "rtree": {
        "rtree_insert": "#f27f0c", "rtree_remove": "#8c1d07", "rtree_page_insert": "#bf8209",
        "rtree_page_remove": "#592004", "rtree_header": "#f27348",
    },
    "replication": {"Matchpoint": "#00897b", "RollbackStart": "#880e4f", "RollbackEnd": "#f06292",
                    "TermStart": "#5d4037"},
}
TYPE_COLOURS = {name: colour for family in FAMILIES.values() for name, colour in family.items()}
TYPE_FAMILY = {name: family for family, members in FAMILIES.items() for name in members}
# Colours for things that are not entry types (lock modes, buckets, ...); a
# type missing from FAMILIES (a student's own) also gets one, by a stable hash.
FALLBACK = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
            "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#8cd17d", "#d37295"]
# One colour per kind of page in pictures of large records (minidb/viz/large_records.py): the file page
# holding the slot, index pages (lgindex_p), data pages (lgdata_p), and the bar under a chunk of data pages.
PAGE_KIND_COLOURS = {"file": "#bbdefb", "lgindex": "#ffcc80", "lgdata": "#c5e1a5", "chunk": "#33691e"}
# The parts of a picture of log space (minidb/viz/logspace_demo.py): a log file's used and unused bytes, a
# removed (scavenged) file, a spare (preallocated) file, the checkpoint reserve, free room, the master
# checkpoint and tail marks, and a transaction's logged bytes against those it holds for its rollback.
LOG_SPACE_COLOURS = {"used": "#78909c", "unused": "#ffffff", "removed": "#e0e0e0", "spare": "#f5f5f5",
                     "checkpoint": "#f9a825", "free": "#dcedc8", "master": "#8d6e00", "tail": "#212121",
                     "logged": "#1f5fbf", "held": "#ad1457"}
# One colour per transaction in those pictures, by its number (T1, T2, ...), none like the colours above.
TRANSACTION_COLOURS = ["#e15759", "#4e79a7", "#59a14f", "#b07aa1", "#6a3d9a", "#76b7b2", "#9c755f", "#ff9da7"]
BAD = "#d62728"
# A replicated entry rolled back by a syncup (INVISIBLE, minidb/viz/syncup.py): greyed and hatched, whatever
# its type, so it reads as "still in the log, no longer in the stream".
INVISIBLE_FILL = "#eeeeee"
INVISIBLE_EDGE = "#757575"
INVISIBLE_HATCH = "///"
DURABLE = "#1b5e20"
DPI = 100
# A notebook column is about 9.5 inches wide at 100 dpi; a wider figure is
# scaled down to fit. So pictures are at most WIDTH wide, and no text in them
# is smaller than SMALL points: at notebook size every label is readable
# (tests/viz/test_readability.py checks every figure's text size and overlap).
WIDTH = 9.5
SAVE_DPI = 150  # figures/ and slides: sharper than the notebook's 100 dpi
FORMATS = ("png", "svg")
SMALL = 9
TEXT = 10
TITLE = 11
# Average advance of a character, as a fraction of the font size (DejaVu Sans
# digits and lower case are 0.55..0.64 em): enough to decide whether a label
# fits in a box before drawing it.
CHAR_EM = 0.62


# What the notebooks show: a matplotlib Figure, or a graphviz graph (graphviz.Digraph).
Picture = Union[Figure, Any]


def type_colour(name: str) -> str:
    if name in TYPE_COLOURS:
        return TYPE_COLOURS[name]
    return FALLBACK[sum(name.encode()) % len(FALLBACK)]


def transaction_colour(name: str) -> str:
    """The colour of transaction ``name`` (``T2``) in pictures of log space."""
    digits = "".join(c for c in name if c.isdigit())
    return TRANSACTION_COLOURS[int(digits or 0) % len(TRANSACTION_COLOURS)]


def tint(colour: str, amount: float = 0.45) -> tuple[float, float, float]:
    """``colour`` mixed with ``amount`` of white: a pale version, for a fill under black text."""
    r, g, b = to_rgb(colour)
    return (r + (1 - r) * amount, g + (1 - g) * amount, b + (1 - b) * amount)


def dark(colour: str) -> bool:
    """Whether text on ``colour`` should be white (its luma is under a half)."""
    r, g, b = to_rgb(colour)
    return 0.299 * r + 0.587 * g + 0.114 * b < 0.5


def new_figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height), dpi=DPI)


def text_width(text: str, fontsize: float = SMALL, mono: bool = False) -> float:
    """About how wide ``text`` is, in points (its longest line)."""
    return max(len(line) for line in text.split("\n")) * fontsize * (0.6 if mono else CHAR_EM)


def title_lines(text: str, width: float = WIDTH, fontsize: float = TITLE) -> str:
    """``text`` wrapped to lines that fit a figure ``width`` inches wide."""
    chars = max(20, int((width - 0.3) * 72 / (fontsize * CHAR_EM)))
    return "\n".join(textwrap.wrap(text, chars)) or text


def points_per_unit(ax) -> tuple[float, float]:
    """Points per data unit along x and y of ``ax`` (limits must be set)."""
    fig_w, fig_h = ax.figure.get_size_inches()
    box = ax.get_position()
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    return box.width * fig_w * 72 / abs(x1 - x0), box.height * fig_h * 72 / abs(y1 - y0)


def fits(ax, text: str, width: float, fontsize: float = SMALL, height: float | None = None) -> bool:
    """Whether ``text`` fits in ``width`` (and ``height``) data units of ``ax``."""
    per_x, per_y = points_per_unit(ax)
    lines = text.count("\n") + 1
    return (text_width(text, fontsize) <= width * per_x
            and (height is None or lines * fontsize * 1.2 <= height * per_y))


def save(picture: Picture, path: str | os.PathLike, *, dpi: int = SAVE_DPI) -> str:
    """Write ``picture`` (a Figure or a graphviz graph) as PNG or SVG, by ``path``'s suffix.

    No volatile metadata, so reruns give the same bytes: no software or date
    in a PNG, no date in an SVG, and SVG element ids from a fixed salt. The file is
    reported to :mod:`minidb.io.created` (a command lists what it wrote).
    """
    fmt = os.path.splitext(os.fspath(path))[1].lstrip(".").lower()
    if fmt not in FORMATS:
        raise ValueError(f"{os.fspath(path)}: a picture is written as {' or '.join(FORMATS)}, not {fmt or 'nothing'!r}")
    if isinstance(picture, Figure):
        metadata = {"Software": None} if fmt == "png" else {"Date": None, "Creator": None}
        with matplotlib.rc_context({"svg.hashsalt": "minidb", "svg.fonttype": "path"}):
            picture.savefig(path, format=fmt, dpi=dpi, metadata=metadata)
    else:  # graphviz: dot lays it out; its output carries no date
        picture.graph_attr["dpi"] = str(dpi) if fmt == "png" else "72"
        with open(path, "wb") as out:
            out.write(picture.pipe(format=fmt))
    created(path)
    return os.fspath(path)
