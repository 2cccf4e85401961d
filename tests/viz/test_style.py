"""Colours: an explicit colour for every entry type, by family, and no two alike in one legend."""

import itertools
import math

import pytest
from matplotlib.colors import to_rgb
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

import minidb.logstore.logdef  # noqa: F401
import minidb.pagestore.wal.logdef  # noqa: F401  (registers the page store's types)
import minidb.replication.logdef  # noqa: F401
import minidb.spark.logdef  # noqa: F401
from minidb.log.types import known_types
from minidb.viz.gallery import FIGURES
from minidb.viz.style import FAMILIES, TYPE_COLOURS, TYPE_FAMILY, type_colour

# Colours closer than this (CIE76 distance in Lab) look alike side by side.
ALIKE = 15.0


def lab(colour) -> tuple[float, float, float]:
    def linear(c):
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in to_rgb(colour))
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t):
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def distance(a, b) -> float:
    return math.dist(lab(a), lab(b))


def engine_of(code: int) -> str:
    if code < 0x08:
        return "log"
    if code < 0x10:
        return "generator"
    if code < 0x40 or 0x80 <= code < 0x90:
        return "pagestore"
    return "logstore"  # the log store and replication share a log


def test_every_entry_type_has_an_explicit_colour_and_a_family():
    names = {t.name for t in known_types()}
    assert names - set(TYPE_COLOURS) == set()
    assert all(TYPE_FAMILY[name] in FAMILIES for name in names)


def test_no_two_entry_types_share_a_colour():
    colours = list(TYPE_COLOURS.values())
    assert len(set(c.lower() for c in colours)) == len(colours)


@pytest.mark.parametrize("engine", ["generator", "pagestore", "logstore"])
def test_no_two_types_one_log_can_hold_look_alike(engine):
    names = [t.name for t in known_types() if engine_of(t.code) in ("log", engine)] + ["Erased"]
    close = [(a, b, round(distance(type_colour(a), type_colour(b)), 1))
             for a, b in itertools.combinations(names, 2) if distance(type_colour(a), type_colour(b)) < ALIKE]
    assert close == []


def test_the_families_named_in_the_issue_no_longer_collide():
    # These pairs shared one colour when colours came from a hash of the name.
    for a, b in [("page_format", "rec_splice"), ("create_ext_list", "compensate"),
                 ("compensate", "clr_rec_remove"), ("chkpt_begin", "clr_rec_insert"),
                 ("store_operation", "xct_end"), ("chkpt_xct_tab", "xct_abort")]:
        assert distance(type_colour(a), type_colour(b)) >= ALIKE, (a, b)


def legend_entries(fig):
    """(label, colour, hatch) of every entry of every legend of ``fig``."""
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    for legend in legends:
        entries = []
        for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
            if isinstance(handle, Patch):
                colour, hatch = handle.get_facecolor(), handle.get_hatch()
                if handle.get_fill() is False or colour[3] == 0:
                    colour = handle.get_edgecolor()
            elif isinstance(handle, Line2D):
                colour, hatch = handle.get_color(), handle.get_marker()
            else:
                colour, hatch = handle.get_facecolor()[0], None
            entries.append((text.get_text(), colour, hatch))
        yield entries


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_no_legend_repeats_a_colour(name):
    fig = FIGURES[name]()
    for entries in legend_entries(fig):
        alike = [(a[0], b[0]) for a, b in itertools.combinations(entries, 2)
                 if a[2] == b[2] and distance(a[1][:3] if not isinstance(a[1], str) else a[1],
                                              b[1][:3] if not isinstance(b[1], str) else b[1]) < ALIKE]
        assert alike == [], f"{name}: legend entries drawn alike: {alike}"
