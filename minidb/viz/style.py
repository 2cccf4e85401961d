"""Shared look of minidb's pictures: colours, figure sizes, saving.

Every drawing function returns a :class:`matplotlib.figure.Figure` built
without pyplot (no global state, nothing to close), at a fixed size, so the
same call gives the same picture in a notebook, a test and ``figures/``.
"""

from __future__ import annotations

import os

from matplotlib.figure import Figure

# One colour per entry type name; types not listed get a colour from FALLBACK
# chosen by a stable hash of the name, so a type keeps its colour everywhere.
TYPE_COLOURS = {
    "FileHeader": "#9e9e9e",
    "Trace": "#80cbc4",
    "Erased": "#212121",
    # the generator's test entries (minidb/spark/logdef.py)
    "GenUpdate": "#4e79a7",
    "GenCommit": "#59a14f",
    "GenAbort": "#e15759",
    "GenCkptStart": "#f28e2b",
    "GenCkptEnd": "#b07aa1",
}
FALLBACK = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
            "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#8cd17d", "#d37295"]
BAD = "#d62728"
DURABLE = "#1b5e20"
DPI = 100


def type_colour(name: str) -> str:
    if name in TYPE_COLOURS:
        return TYPE_COLOURS[name]
    return FALLBACK[sum(name.encode()) % len(FALLBACK)]


def new_figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height), dpi=DPI)


def save(fig: Figure, path: str | os.PathLike) -> str:
    """Write ``fig`` as PNG without volatile metadata, so reruns give the same bytes."""
    fig.savefig(path, format="png", metadata={"Software": None})
    return os.fspath(path)
