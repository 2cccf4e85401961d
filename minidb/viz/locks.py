"""Pictures of the lock manager: the lock table as a hierarchy, digests, the waits-for graph.

Everything here draws plain data: a :class:`~minidb.pagestore.lock.LockTableSnapshot`
and a :class:`~minidb.pagestore.lock.WaitsForGraph`, both copied from the
lock manager under its mutex.

- :func:`draw_lock_table`: one row per lock head, indented by its place in
  the hierarchy (v(1) > s(1.3) > p(1.3.48) > r(1.3.48.2)), tree lines from
  each lock to its parent; then the supremum of the granted modes; then the
  queue, one box per request in arrival order, coloured by transaction:
  solid for granted, hatched for waiting, a dashed border and ``SH>EX`` for a
  conversion. Extent and user locks come last, under "not in a hierarchy".
- :func:`draw_digests`: Dreadlocks' bitmaps, one row per transaction, one
  column per bit: its own fingerprint's bits dark in its colour, the other
  bits of its digest pale in the colour of the transaction whose fingerprint
  they come from.
- :func:`draw_waits_for`: transactions on a circle, an arrow from each waiter
  to each transaction it waits for, labelled with the lock and the holder's
  mode (``, conversion``: waits for a pending conversion; ``, FIFO``: for the
  waiter ahead of it); arrows on a cycle are red; a chosen victim has a red ring.
- :func:`draw_lock_state`: the table on top, the graph and the digests side by
  side under it (the notebook's step picture).
- :func:`draw_mode_tables`: Shore's compatibility and supremum tables.
- :func:`waits_for_dot`: the waits-for graph as graphviz source (a ``graphviz.Digraph``).
"""

from __future__ import annotations

import math

import graphviz
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyArrowPatch, Rectangle

from minidb.pagestore.lock import LockTableSnapshot, WaitsForGraph
from minidb.pagestore.lock.dreadlocks import bits_of
from minidb.pagestore.lock.modes import MODES, compatible, supremum
from minidb.viz.style import (
    BAD,
    FALLBACK,
    SMALL,
    TEXT,
    TITLE,
    WIDTH,
    fits,
    new_figure,
    points_per_unit,
    text_width,
    tint,
    title_lines,
)

_DEPTH = {"v": 0, "s": 1, "p": 2, "r": 3, "k": 3}
_SHORT_DURATION = {"instant": ",i", "short": ",s", "long": ""}
# Edge labels: a conflicting mode goes without saying; the other two reasons are tagged.
_REASON_TAGS = {"conflicting mode": "", "conversion first": ", conversion", "ahead in the queue": ", FIFO"}


def txn_colour(txn_id: int) -> str:
    return FALLBACK[(txn_id - 1) % len(FALLBACK)]


def table_rows(snapshot: LockTableSnapshot) -> list[tuple[int, int | None]]:
    """For each head (in order): its depth, and the row of its parent if that parent is in the table."""
    index = {h.lock_id: i for i, h in enumerate(snapshot.heads)}
    rows = []
    for head in snapshot.heads:
        parent = head.lock_id.parent()
        rows.append((_DEPTH.get(head.lock_id.code, 0), index.get(parent) if parent is not None else None))
    return rows


# -- the lock table ---------------------------------------------------------------------
def _draw_table(ax: Axes, snapshot: LockTableSnapshot, highlight: tuple = ()) -> None:
    heads = snapshot.heads
    rows = table_rows(snapshot)
    first_outside = next((i for i, h in enumerate(heads) if not h.lock_id.in_hierarchy), None)
    n = max(len(heads) + (1 if first_outside is not None else 0), 4)
    ax.set_xlim(0, 100)
    ax.set_ylim(n + 0.3, -1.2)
    ax.set_axis_off()
    ax.text(1, -0.7, "lock", fontsize=SMALL, weight="bold")
    ax.text(27, -0.7, "granted", fontsize=SMALL, weight="bold")
    ax.text(37, -0.7, "queue (arrival order; hatched: waiting, dashed: converting)", fontsize=SMALL, weight="bold")
    y_of = []
    for i in range(len(heads)):
        y = i + (1 if first_outside is not None and i >= first_outside else 0)
        y_of.append(y)
    if first_outside is not None:
        ax.text(1, y_of[first_outside] - 0.75, "not in a hierarchy", fontsize=SMALL, style="italic", color="#616161")
    for i, head in enumerate(heads):
        depth, parent = rows[i]
        y = y_of[i]
        x = 1.5 + depth * 4.5
        if parent is not None:
            px = 1.5 + rows[parent][0] * 4.5 + 1.2
            ax.plot([px, px, x - 0.4], [y_of[parent] + 0.3, y, y], color="#9e9e9e", lw=0.8)
        bold = head.lock_id in highlight
        ax.text(x, y, str(head.lock_id), va="center", fontsize=SMALL, family="monospace",
                weight="bold" if bold else "normal", color=BAD if bold else "black")
        ax.text(28, y, head.granted_mode.name, va="center", fontsize=SMALL, family="monospace")
        for k, request in enumerate(head.requests):
            bx = 37 + k * 10.5
            colour = txn_colour(request.txn_id)
            waiting = request.status == "waiting"
            converting = request.status == "converting"
            ax.add_patch(Rectangle((bx, y - 0.36), 9.8, 0.72, facecolor=tint(colour, 0.55 if not waiting else 0.85),
                                   edgecolor=colour, lw=1.2, hatch="///" if waiting else None,
                                   linestyle="--" if converting else "-"))
            mode = request.mode.name + (f">{request.convert_mode.name}" if converting else "")
            label = f"T{request.txn_id} {mode}{_SHORT_DURATION[str(request.duration)]}"
            ax.text(bx + 4.9, y, label, ha="center", va="center", fontsize=SMALL, family="monospace")
        if head.has_page_alloc:
            ax.text(37 + len(head.requests) * 10.5, y, "has page", va="center", fontsize=SMALL, color="#616161")
    if not heads:
        ax.text(50, 1.5, "(no locks)", ha="center", fontsize=9, color="#9e9e9e")


def draw_lock_table(snapshot: LockTableSnapshot, *, title: str | None = None, highlight: tuple = ()) -> Figure:
    """The lock table as a hierarchy with queues (see the module documentation)."""
    height = 0.5 + table_height(snapshot)
    fig = new_figure(WIDTH, height)
    ax = fig.add_axes((0.01, 0.1 / height, 0.98, 1 - 0.5 / height))
    _draw_table(ax, snapshot, highlight)
    if title:
        fig.suptitle(title, fontsize=TITLE)
    return fig


# -- digests ------------------------------------------------------------------------------
def _bit_owner(snapshot: LockTableSnapshot) -> dict[int, int]:
    owner = {}
    for o in snapshot.owners:
        for bit in bits_of(o.fingerprint):
            owner.setdefault(bit, o.txn_id)
    return owner


def _draw_digests(ax: Axes, snapshot: LockTableSnapshot) -> None:
    bits = snapshot.bitmap_bits
    owners = snapshot.owners
    bit_owner = _bit_owner(snapshot)
    n = max(len(owners), 1)
    ax.set_xlim(-9, bits + 0.5)
    ax.set_ylim(n + 0.2, -1.3)
    ax.set_axis_off()
    step = next(s for s in (1, 2, 4, 8, 16, bits) if fits(ax, str(bits), s * 0.9))
    for b in range(0, bits, step):
        ax.text(b + 0.5, -0.6, str(b), ha="center", va="center", fontsize=SMALL, color="#616161")
    for row, o in enumerate(owners):
        mine = set(bits_of(o.fingerprint))
        digest = set(bits_of(o.digest))
        status = "waits" if o.waiting_on is not None else "runs"
        ax.text(-0.5, row + 0.5, f"T{o.txn_id} {status}", ha="right", va="center", fontsize=SMALL,
                family="monospace", color=txn_colour(o.txn_id))
        for b in range(bits):
            if b in mine:
                face = txn_colour(o.txn_id)
            elif b in digest:
                face = tint(txn_colour(bit_owner.get(b, o.txn_id)), 0.6)
            else:
                face = "white"
            ax.add_patch(Rectangle((b, row + 0.1), 1, 0.8, facecolor=face, edgecolor="#bdbdbd", lw=0.4))
    if not owners:
        ax.text(bits / 2, 0.5, "(no transactions)", ha="center", fontsize=SMALL, color="#9e9e9e")


def draw_digests(snapshot: LockTableSnapshot, *, title: str | None = None) -> Figure:
    """Fingerprints (dark) and digests (pale) as bitmaps, one row per transaction."""
    fig = new_figure(WIDTH, 0.9 + 0.35 * max(len(snapshot.owners), 2))
    ax = fig.add_axes((0.02, 0.02, 0.96, 0.8 if title else 0.94))
    _draw_digests(ax, snapshot)
    if title:
        fig.suptitle(title, fontsize=TITLE)
    return fig


# -- the waits-for graph ------------------------------------------------------------------
def node_positions(graph: WaitsForGraph) -> dict[int, tuple[float, float]]:
    """Transactions on a circle, the lowest id at the top, clockwise."""
    ids = [n.txn_id for n in graph.nodes]
    count = max(len(ids), 1)
    return {t: (math.sin(2 * math.pi * i / count), math.cos(2 * math.pi * i / count)) for i, t in enumerate(ids)}


def cycle_edges(graph: WaitsForGraph) -> set[tuple[int, int]]:
    on_cycle = set()
    for cycle in graph.cycles():
        for a, b in zip(cycle, cycle[1:] + cycle[:1], strict=True):
            on_cycle.add((a, b))
    return on_cycle


def _draw_graph(ax: Axes, graph: WaitsForGraph) -> None:
    pos = node_positions(graph)
    red = cycle_edges(graph)
    ax.set_xlim(-1.6, 1.6)
    ax.set_ylim(-1.45, 1.45)
    ax.set_aspect("equal")
    ax.set_axis_off()
    per_unit = min(points_per_unit(ax))
    # Boxes (x0, y0, x1, y1) already taken: the nodes, then each label as it is placed.
    taken = [(x - 0.2, y - 0.2, x + 0.2, y + 0.2) for x, y in pos.values()]
    grouped: dict[tuple[int, int], list[str]] = {}
    for e in graph.edges:
        grouped.setdefault((e.waiter, e.holder), []).append(
            f"{e.lock_id} {e.holder_mode.name}{_REASON_TAGS.get(e.reason, ', ' + e.reason)}")
    for (a, b), labels in sorted(grouped.items()):
        (x1, y1), (x2, y2) = pos[a], pos[b]
        colour = BAD if (a, b) in red else "#424242"
        ax.add_patch(FancyArrowPatch((x1, y1), (x2, y2), arrowstyle="-|>", mutation_scale=12, lw=1.4,
                                     color=colour, shrinkA=16, shrinkB=16, connectionstyle="arc3,rad=-0.18"))
        text = "\n".join(labels)
        w = text_width(text, SMALL, mono=True) / per_unit + 0.06
        h = len(labels) * SMALL * 1.25 / per_unit + 0.04
        lx, ly = _label_place((x1, y1), (x2, y2), w, h, taken)
        taken.append((lx - w / 2, ly - h / 2, lx + w / 2, ly + h / 2))
        ax.text(lx, ly, text, ha="center", va="center", fontsize=SMALL, color=colour, family="monospace",
                bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none", alpha=0.85))
    for node in graph.nodes:
        x, y = pos[node.txn_id]
        ax.add_patch(Circle((x, y), 0.17, facecolor=tint(txn_colour(node.txn_id), 0.4),
                            edgecolor=BAD if node.victim else txn_colour(node.txn_id), lw=3 if node.victim else 1.5))
        ax.text(x, y, f"T{node.txn_id}", ha="center", va="center", fontsize=SMALL, weight="bold")
    if not graph.nodes:
        ax.text(0, 0, "(nobody)", ha="center", fontsize=SMALL, color="#9e9e9e")
    elif not graph.edges:
        ax.text(0, -1.35, "nobody waits", ha="center", fontsize=SMALL, color="#616161")


def _label_place(start: tuple[float, float], end: tuple[float, float], w: float, h: float,
                 taken: list[tuple[float, float, float, float]]) -> tuple[float, float]:
    """Where an edge's label (``w`` x ``h``) goes: on its arc, or slid along or off it, clear of ``taken``.

    arc3 with a negative rad bends towards (-dy, dx): outwards for an edge that goes clockwise round
    the circle (a cycle), so two edges between the same pair bend apart. A point of the quadratic
    curve at t is (1-t)^2 start + 2t(1-t) control + t^2 end.
    """
    (x1, y1), (x2, y2) = start, end
    dx, dy = x2 - x1, y2 - y1
    cx, cy = (x1 + x2) / 2 - 0.18 * dy, (y1 + y2) / 2 + 0.18 * dx
    length = math.hypot(dx, dy) or 1.0
    nx, ny = -dy / length, dx / length
    candidates = []
    for shift in (0.0, 0.12, 0.24, 0.36, 0.5, 0.65):
        for t in (0.5, 0.38, 0.62):
            px = (1 - t) ** 2 * x1 + 2 * t * (1 - t) * cx + t * t * x2
            py = (1 - t) ** 2 * y1 + 2 * t * (1 - t) * cy + t * t * y2
            candidates += [(px + shift * nx, py + shift * ny), (px - shift * nx, py - shift * ny)]
    for x, y in candidates:
        box = (x - w / 2, y - h / 2, x + w / 2, y + h / 2)
        if all(box[2] <= o[0] or o[2] <= box[0] or box[3] <= o[1] or o[3] <= box[1] for o in taken):
            return x, y
    return candidates[0]


def draw_waits_for(graph: WaitsForGraph, *, title: str | None = None) -> Figure:
    """The waits-for graph: waiter -> holder, cycles in red."""
    fig = new_figure(5.0, 4.5)
    ax = fig.add_axes((0.02, 0.02, 0.96, 0.86 if title else 0.96))
    _draw_graph(ax, graph)
    if title:
        fig.suptitle(title, fontsize=TITLE)
    return fig


def table_height(snapshot: LockTableSnapshot) -> float:
    """Inches for the lock table: a header and one 0.3-inch row per head (at least four)."""
    outside = any(not h.lock_id.in_hierarchy for h in snapshot.heads)
    return 0.45 + 0.3 * max(len(snapshot.heads) + outside, 4)


def draw_lock_state(snapshot: LockTableSnapshot, graph: WaitsForGraph, *, title: str | None = None,
                    highlight: tuple = ()) -> Figure:
    """The lock table (top), the waits-for graph (bottom left) and the digests (bottom right)."""
    table_in, graph_in = table_height(snapshot), 3.6
    title = title_lines(title) if title else None
    height = 0.25 + 0.2 * (title.count("\n") + 1 if title else 0) + table_in + 0.35 + graph_in
    fig = new_figure(WIDTH, height)
    table = fig.add_axes((0.0, (graph_in + 0.35) / height, 1.0, table_in / height))
    _draw_table(table, snapshot, highlight)
    graph_ax = fig.add_axes((0.0, 0.0, 0.5, graph_in / height))
    _draw_graph(graph_ax, graph)
    label_y = (graph_in + 0.12) / height
    fig.text(0.25, label_y, "waits-for graph", ha="center", fontsize=TEXT, weight="bold")
    digests = fig.add_axes((0.52, 0.05 / height, 0.46, (graph_in - 0.4) / height))
    _draw_digests(digests, snapshot)
    fig.text(0.75, label_y, f"Dreadlocks: fingerprints (dark) and digests, {snapshot.bitmap_bits} bits",
             ha="center", fontsize=SMALL, weight="bold")
    if title:
        fig.suptitle(title, x=0.01, ha="left", fontsize=TITLE)
    return fig


# -- the tables of modes --------------------------------------------------------------------
def draw_mode_tables() -> Figure:
    """Shore's compatibility (requested x granted) and supremum tables; the UD asymmetry outlined."""
    fig = new_figure(WIDTH, 4.2)
    for k, kind in enumerate(("compatibility: requested (row) vs granted (column)", "supremum: held + asked")):
        ax = fig.add_axes((0.04 + 0.5 * k, 0.04, 0.44, 0.8))
        ax.set_xlim(-1.2, len(MODES))
        ax.set_ylim(len(MODES), -1.2)
        ax.set_axis_off()
        ax.set_title(kind, fontsize=SMALL)
        for i, m in enumerate(MODES):
            ax.text(i + 0.5, -0.6, m.name, ha="center", va="center", fontsize=SMALL, weight="bold")
            ax.text(-0.6, i + 0.5, m.name, ha="center", va="center", fontsize=SMALL, weight="bold")
        for i, a in enumerate(MODES):
            for j, b in enumerate(MODES):
                if k == 0:
                    ok = compatible(a, b)
                    face, text = ("#c8e6c9", "+") if ok else ("#ffcdd2", "-")
                    asym = ok != compatible(b, a)
                else:
                    face, text, asym = "white", supremum(a, b).name, False
                ax.add_patch(Rectangle((j, i), 1, 1, facecolor=face, edgecolor=BAD if asym else "#9e9e9e",
                                       lw=2.2 if asym else 0.6, zorder=3 if asym else 1))
                ax.text(j + 0.5, i + 0.5, text, ha="center", va="center", fontsize=SMALL, family="monospace")
    return fig


# -- graphviz -------------------------------------------------------------------------------
def waits_for_dot(graph: WaitsForGraph, title: str | None = None) -> graphviz.Digraph:
    """The waits-for graph as graphviz source: waiter -> holder, edges on a cycle red."""
    # top to bottom: a cycle of three laid left to right is wider than a notebook column
    dot = graphviz.Digraph("waits_for", graph_attr={"rankdir": "TB", "fontsize": "10", "label": title or ""},
                           node_attr={"shape": "circle", "style": "filled", "fontname": "Helvetica"})
    for node in graph.nodes:
        extra = {"color": BAD, "penwidth": "3"} if node.victim else {}
        label = f"T{node.txn_id}"
        if node.waiting_on is not None:
            label += f"\\n{node.wanted.name} {node.waiting_on}"  # type: ignore[union-attr]
        dot.node(f"T{node.txn_id}", label, fillcolor=txn_colour(node.txn_id), shape="ellipse", **extra)
    red = cycle_edges(graph)
    for e in graph.edges:
        dot.edge(f"T{e.waiter}", f"T{e.holder}", label=f"{e.lock_id} {e.holder_mode.name}\\n{e.reason}",
                 color=BAD if (e.waiter, e.holder) in red else "black", fontsize="10")
    return dot
