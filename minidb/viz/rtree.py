"""Pictures of an R*-tree: the boxes on a map, each level's node boxes in a colour of its own.

:func:`rtree_picture` reads a tree into plain data (:class:`RTreePicture`):
every node's page, level and box (the union of its entries'), every leaf
entry's box and label. :func:`draw_rtree` draws it: the leaf entries as grey
boxes (a point as a dot) with their labels, and around them the boxes of
the nodes, one colour per level (:func:`level_colour`), each drawn a little
larger than the one below so that nested outlines stay apart. A search is
drawn with its window (dashed) and the nodes it read (solid) against those
it pruned (dotted, faded); the pages a step changed are filled in yellow. Beside the map, one line per node, root first,
in its level's colour: its page and what it holds (:func:`node_lines`), so a
box on the map is matched to its page by colour and contents.

Reading a tree here takes no lock and changes nothing (it is a picture of
the pages as they are, for notebooks and tests).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from minidb.pagestore.rtree.box import Box, mbr
from minidb.pagestore.rtree.rtree import RTree
from minidb.viz.style import SMALL, TEXT, WIDTH, new_figure

# One colour per level above the leaves' entries: level 1 (the leaves) first.
LEVEL_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
ENTRY_COLOUR = "#9e9e9e"
CHANGED_FILL = "#fff59d"


@dataclass(frozen=True)
class NodeBox:
    page: int
    level: int
    box: Box | None  # None: an empty node (only the root of an empty tree)
    entries: int


@dataclass(frozen=True)
class RTreePicture:
    """What :func:`draw_rtree` draws (see the module documentation)."""

    height: int
    root: int
    nodes: tuple[NodeBox, ...]  # root first, then level by level
    leaves: tuple[tuple[Box, str], ...]
    query: Box | None = None
    visited: frozenset[int] = field(default_factory=frozenset)  # pages a search read (None query: unused)

    def level_of(self, page: int) -> int:
        return next(n.level for n in self.nodes if n.page == page)


def rtree_picture(tree: RTree, query: Box | None = None, visited: frozenset[int] = frozenset(),
                  label=lambda el: el.decode(errors="replace")) -> RTreePicture:
    """The picture data of ``tree`` (read from its pages); ``query`` and ``visited``: a search to show."""
    nodes: list[NodeBox] = []
    leaves: list[tuple[Box, str]] = []
    frontier = [tree.root.page]
    height = 0
    while frontier:
        below = []
        for number in frontier:
            node = tree.read(number)
            height = max(height, node.level)
            nodes.append(NodeBox(number, node.level, mbr(node.boxes()) if node.entries else None, len(node.entries)))
            if node.is_leaf:
                leaves += [(e.box, label(e.data)) for e in node.entries]
            else:
                below += [e.child for e in node.entries]
        frontier = below
    return RTreePicture(height, tree.root.page, tuple(nodes), tuple(sorted(leaves)), query, frozenset(visited))


def level_colour(level: int) -> str:
    """The colour of the node boxes of ``level`` (1: the leaves)."""
    return LEVEL_COLOURS[(level - 1) % len(LEVEL_COLOURS)]


def outline(box: Box, level: int) -> tuple[float, float, float, float]:
    """Where a node box of ``level`` is drawn: (x, y, width, height), grown by 0.6 per level so that a node's
    outline stands clear of its children's (and a leaf's of its entries)."""
    pad = 0.6 * level
    return box.xlo - pad, box.ylo - pad, box.xhi - box.xlo + 2 * pad, box.yhi - box.ylo + 2 * pad


def node_lines(picture: RTreePicture, entries_below: dict[int, list[str]],
               changed: tuple[int, ...] = ()) -> list[tuple[str, str]]:
    """The text beside the map, one line per node, root first: (line, colour). A leaf lists its entries'
    labels, an interior node its children's pages; then whether a search read the node or pruned it,
    and whether the step changed it."""
    lines = []
    for node in picture.nodes:
        what = " ".join(entries_below.get(node.page, [])) or "(empty)"
        read = "" if picture.query is None else ("  read" if node.page in picture.visited else "  pruned")
        mark = "  changed" if node.page in changed else ""
        lines.append((f"p{node.page} level {node.level}: {what}{read}{mark}", level_colour(node.level)))
    return lines


def draw_rtree(picture: RTreePicture, title: str = "", changed: tuple[int, ...] = (),
               contents: dict[int, list[str]] | None = None) -> Figure:
    """The map (leaf entries, each level's node boxes in its colour, the search window if any) and beside it
    one line per node (``contents``: what to list for each page, see :func:`node_lines`)."""
    fig = new_figure(WIDTH, 5.0)
    ax = fig.add_axes((0.06, 0.08, 0.5, 0.82))
    for box, text in picture.leaves:
        if box.area == 0 and box.margin == 0:
            ax.plot([box.xlo], [box.ylo], "o", color=ENTRY_COLOUR, markersize=5)
        else:
            ax.add_patch(Rectangle((box.xlo, box.ylo), box.xhi - box.xlo, box.yhi - box.ylo,
                                   facecolor=ENTRY_COLOUR, edgecolor="#616161", alpha=0.6))
        ax.annotate(text, (box.xhi, box.yhi), xytext=(2, 1), textcoords="offset points", fontsize=SMALL)
    searched = picture.query is not None
    for node in sorted(picture.nodes, key=lambda n: n.level):
        if node.box is None:
            continue
        read = not searched or node.page in picture.visited
        x, y, w, h = outline(node.box, node.level)
        if node.page in changed and node.level < picture.height:  # the root's fill would cover the map
            ax.add_patch(Rectangle((x, y), w, h, facecolor=CHANGED_FILL, edgecolor="none", alpha=0.5, zorder=0))
        ax.add_patch(Rectangle((x, y), w, h, fill=False, edgecolor=level_colour(node.level),
                               linewidth=2.0 if read else 1.0, linestyle="-" if read else ":",
                               alpha=1.0 if read else 0.5))
    if searched:
        q = picture.query
        ax.add_patch(Rectangle((q.xlo, q.ylo), q.xhi - q.xlo, q.yhi - q.ylo, fill=False, edgecolor="black",
                               linestyle="--", linewidth=1.5))
    everything = [b for b, _ in picture.leaves] + ([picture.query] if searched else [])
    whole = mbr(everything) if everything else Box(0, 0, 100, 100)
    margin = 3 + 0.8 * picture.height
    ax.set_xlim(whole.xlo - margin, whole.xhi + margin + 4)
    ax.set_ylim(whole.ylo - margin, whole.yhi + margin + 3)
    ax.set_aspect("equal", adjustable="box")
    ax.tick_params(labelsize=SMALL)
    ax.set_title(title, fontsize=TEXT)
    side = fig.add_axes((0.6, 0.04, 0.39, 0.9))
    side.axis("off")
    lines = node_lines(picture, contents or {}, changed)
    if searched:
        lines.append(("dashed: the search window", "black"))
    if changed:
        lines.append(("yellow: the nodes below the root this step changed", "#827717"))
    step = min(0.075, 0.95 / max(1, len(lines)))
    for i, (line, colour) in enumerate(lines):
        side.text(0.0, 0.98 - i * step, line, fontsize=SMALL, color=colour, va="top", transform=side.transAxes)
    return fig
