"""Pictures of the log store: a tree above its log, utilization per file.

:func:`tree_and_log` reads an environment (without changing it) into plain
data: the tree of one database (every node, resident or not, as
:mod:`minidb.logstore.inspect` sees it) and every entry of the log, each
marked *in use* (some tree points at it), *obsolete* (the utilization
tracker says so) or neither. :func:`draw_tree_and_log` draws it:

- the tree on top: one box per node (``BIN 4`` and its keys), dirty nodes
  outlined in red, nodes not in memory dashed;
- the log below, bytes to scale, files one after another: one box per entry,
  coloured by type, hatched when provisional (``//`` YES, ``..``
  BEFORE_CKPT_END), greyed out when obsolete;
- a line from every node to the log entry of its current version, and from
  every BIN slot to its record's LN.

:func:`tree_graph` is the same tree as a graphviz digraph (record-shaped
nodes, one field per slot with its LSN); :func:`draw_utilization` draws live
and obsolete bytes per file.
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.patches import ConnectionPatch, Patch, Rectangle

from minidb.log import LSN
from minidb.logstore.env import Environment
from minidb.logstore.inspect import NodeView, TreeView, tree_view
from minidb.logstore.tree.in_node import node_kind
from minidb.viz.style import new_figure, type_colour

OBSOLETE = "#d9d9d9"


def colour(type_name: str) -> str:
    """An entry type's colour: the shared table of :mod:`minidb.viz.style` (tree nodes purple, records blue)."""
    return type_colour(type_name)


DIRTY = "#c62828"
HATCHES = {"YES": "//", "BEFORE_CKPT_END": ".."}


@dataclass(frozen=True)
class LogBox:
    lsn: LSN
    size: int
    type_name: str
    provisional: str
    in_use: bool
    obsolete: bool


@dataclass(frozen=True)
class TreeAndLog:
    view: TreeView
    boxes: tuple[LogBox, ...]
    file_sizes: tuple[tuple[int, int], ...]  # (file number, bytes)

    def box(self, lsn: LSN) -> LogBox | None:
        return next((b for b in self.boxes if b.lsn == lsn), None)


def tree_and_log(env: Environment, db_name: str) -> TreeAndLog:
    """The tree of ``db_name`` and the whole log, as plain data (nothing in the environment changes)."""
    from minidb.logstore.inspect import live_lsns

    with env.latch:
        view = tree_view(env, db_name)
        used = set(live_lsns(env))
        boxes = []
        sizes: dict[int, int] = {}
        for entry in env.log.scan():
            boxes.append(LogBox(entry.lsn, entry.size, entry.type_name, entry.provisional.name, entry.lsn in used,
                                env.utilization.is_obsolete(entry.lsn)))
            sizes[entry.lsn.file] = entry.lsn.offset + entry.size
    return TreeAndLog(view, tuple(boxes), tuple(sorted(sizes.items())))


def _tree_positions(view: TreeView) -> dict[int, tuple[float, float]]:
    """x, y for every node: leaves evenly spread, parents centred over their children."""
    leaves = [n for n in view.nodes() if n.is_bin]
    positions: dict[int, tuple[float, float]] = {}
    height = view.root.level
    for i, leaf in enumerate(leaves):
        positions[leaf.node_id] = ((i + 0.5) / max(len(leaves), 1), 0.0)

    def place(node: NodeView) -> float:
        if node.is_bin:
            return positions[node.node_id][0]
        xs = [place(child) for child in node.children]
        x = sum(xs) / len(xs) if xs else 0.5
        positions[node.node_id] = (x, (node.level - 1) / max(height - 1, 1))
        return x

    place(view.root)
    return positions


def _log_x(picture: TreeAndLog) -> tuple[dict[int, float], float]:
    """Where each file starts on the log axis, and the total width (files end to end, with gaps)."""
    starts, x = {}, 0.0
    gap = max(sum(size for _, size in picture.file_sizes) * 0.01, 4)
    for number, size in picture.file_sizes:
        starts[number] = x
        x += size + gap
    return starts, max(x - gap, 1)


def draw_tree_and_log(picture: TreeAndLog, *, title: str | None = None, highlight: set[LSN] | None = None,
                      show_records: bool = True, width: float = 11.0, height: float = 6.0) -> Figure:
    """Draw the tree above the log (see the module documentation); ``highlight`` LSNs get a thick outline."""
    highlight = highlight or set()
    fig = new_figure(width, height)
    tree_ax = fig.add_axes((0.02, 0.36, 0.96, 0.54))
    log_ax = fig.add_axes((0.04, 0.08, 0.92, 0.16))
    view = picture.view
    positions = _tree_positions(view)
    leaves = max(sum(1 for n in view.nodes() if n.is_bin), 1)
    box_w = min(0.9 / leaves, 0.16)
    box_h = 0.16 if view.root.level > 2 else 0.24
    for node in view.nodes():
        x, y = positions[node.node_id]
        for child in node.children:
            cx, cy = positions[child.node_id]
            tree_ax.plot([x, cx], [y - box_h / 2, cy + box_h / 2], color="#90a4ae", lw=0.8, zorder=1)
    for node in view.nodes():
        x, y = positions[node.node_id]
        kind = node_kind(node.is_bin)
        edge = DIRTY if node.dirty else "#37474f"
        tree_ax.add_patch(Rectangle((x - box_w / 2, y - box_h / 2), box_w, box_h, facecolor=colour(kind),
                                    edgecolor=edge, lw=2.0 if node.dirty else 0.9,
                                    linestyle="-" if node.resident else "--", alpha=0.9, zorder=2))
        keys = [k.decode("utf-8", "replace") for k in node.keys] if node.is_bin else []
        shown = keys if len(keys) <= 4 else keys[:3] + ["..."]
        deleted = [d for d in node.known_deleted]
        if node.is_bin and any(deleted):
            shown = [f"{k}*" if d else k for k, d in zip(keys, deleted)][:4]
        label = f"{kind} {node.node_id}\n{node.lsn}" + ("\n" + " ".join(shown) if shown else "")
        tree_ax.text(x, y, label, ha="center", va="center", fontsize=6.5, zorder=3)
    tree_ax.set_xlim(0, 1)
    tree_ax.set_ylim(-box_h, 1 + box_h)
    tree_ax.axis("off")

    starts, total = _log_x(picture)
    seen: dict[str, str] = {}
    for box in picture.boxes:
        x0 = starts[box.lsn.file] + box.lsn.offset
        fill = OBSOLETE if box.obsolete else colour(box.type_name)
        seen[box.type_name] = colour(box.type_name)
        log_ax.add_patch(Rectangle((x0, 0), box.size, 1, facecolor=fill, hatch=HATCHES.get(box.provisional),
                                   edgecolor="#c62828" if box.lsn in highlight else "white",
                                   lw=2.2 if box.lsn in highlight else 0.4))
    for number, size in picture.file_sizes:
        log_ax.text(starts[number] + size / 2, -0.35, f"{number:08x}.jdb ({size} B)", ha="center", va="top",
                    fontsize=7)
    log_ax.set_xlim(0, total)
    log_ax.set_ylim(-0.6, 1.05)
    log_ax.axis("off")

    def connect(lsn: LSN, xy: tuple[float, float], line: str, lw: float) -> None:
        box = picture.box(lsn)
        if box is None:
            return
        target = (starts[lsn.file] + lsn.offset + box.size / 2, 1.0)
        fig.add_artist(ConnectionPatch(xyA=xy, coordsA=tree_ax.transData, xyB=target, coordsB=log_ax.transData,
                                       color=line, lw=lw, alpha=0.55))

    for node in view.nodes():
        x, y = positions[node.node_id]
        if not node.lsn.is_null:
            connect(node.lsn, (x, y - box_h / 2), "#455a64", 0.8)
        if node.is_bin and show_records:
            for i, (lsn, deleted) in enumerate(zip(node.slot_lsns, node.known_deleted)):
                if not deleted:
                    offset = (i + 0.5) / max(len(node.slot_lsns), 1) - 0.5
                    connect(lsn, (x + offset * box_w, y - box_h / 2), "#8d6e63", 0.5)
    handles = [Patch(facecolor=c, label=n) for n, c in seen.items()]
    handles += [Patch(facecolor=OBSOLETE, label="obsolete"), Patch(facecolor="white", edgecolor="black", hatch="//",
                                                                   label="provisional YES"),
                Patch(facecolor="white", edgecolor="black", hatch="..", label="BEFORE_CKPT_END")]
    fig.legend(handles=handles, loc="lower center", ncol=min(8, len(handles)), fontsize=6.5, frameon=False)
    if title:
        fig.suptitle(title, x=0.02, ha="left", fontsize=10)
    return fig


def tree_graph(picture: TreeAndLog, show_log: bool = True):
    """The tree as a graphviz digraph: a record node per IN/BIN with a field per slot (key and LSN),
    and, below it, the log as one strip of cells (obsolete entries grey) that the slots point into."""
    import graphviz

    graph = graphviz.Digraph("tree", graph_attr={"rankdir": "TB", "fontsize": "10", "nodesep": "0.15", "ordering": "out"},
                             node_attr={"shape": "record", "fontsize": "9", "fontname": "Helvetica"})
    index = {box.lsn: i for i, box in enumerate(picture.boxes)}
    for node in picture.view.nodes():
        kind = node_kind(node.is_bin)
        fields = []
        for i, (key, lsn) in enumerate(zip(node.keys, node.slot_lsns)):
            mark = "*" if node.is_bin and node.known_deleted[i] else ""
            shown = key.decode("utf-8", "replace") or "-inf"
            fields.append(f"<s{i}> {_escape(shown)}{mark}\\n{lsn}")
        label = f"{{{kind} {node.node_id} @ {node.lsn}|{{{'|'.join(fields) or 'empty'}}}}}"
        style = {"color": DIRTY, "penwidth": "2"} if node.dirty else {}
        if not node.resident:
            style["style"] = "dashed"
        graph.node(f"n{node.node_id}", label, **style)
        for i, child in enumerate(node.children):
            graph.edge(f"n{node.node_id}:s{i}", f"n{child.node_id}")
    if not show_log:
        return graph
    cells = []
    for i, box in enumerate(picture.boxes):
        fill = OBSOLETE if box.obsolete else colour(box.type_name)
        cells.append(f'<TD PORT="e{i}" BGCOLOR="{fill}">{box.type_name}<BR/>'
                     f'<FONT POINT-SIZE="7">{box.lsn.file:x}/{box.lsn.offset:x}</FONT></TD>')
    graph.node("log", "<<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\"><TR>" + "".join(cells)
               + "</TR></TABLE>>", shape="plaintext")
    for node in picture.view.nodes():
        if node.is_bin:
            for i, (lsn, deleted) in enumerate(zip(node.slot_lsns, node.known_deleted)):
                if not deleted and lsn in index:
                    graph.edge(f"n{node.node_id}:s{i}", f"log:e{index[lsn]}", color="#8d6e63", arrowsize="0.5")
        if not node.lsn.is_null and node.lsn in index:
            graph.edge(f"n{node.node_id}", f"log:e{index[node.lsn]}", color="#455a64", style="dotted",
                       arrowsize="0.5")
    return graph


def _escape(text: str) -> str:
    for ch in "{}|<>\"":
        text = text.replace(ch, "\\" + ch)
    return text


def draw_utilization(env: Environment, *, title: str | None = None, width: float = 8.0, height: float = 3.0) -> Figure:
    """Bytes per log file: live nodes, and what is obsolete (what a cleaner could reclaim)."""
    report = env.utilization_report()
    fig = new_figure(width, height)
    ax = fig.add_axes((0.1, 0.2, 0.85, 0.65))
    names = [f"{s.file_number:08x}" for s in report]
    live = [s.live_size for s in report]
    obsolete = [s.obsolete_size for s in report]
    positions = range(len(report))
    ax.bar(positions, live, color="#4e79a7", label="live")
    ax.bar(positions, obsolete, bottom=live, color=OBSOLETE, label="obsolete")
    for i, summary in enumerate(report):
        ax.text(i, summary.total_size, f"{summary.utilization:.0%}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(list(positions), names, fontsize=7)
    ax.set_ylabel("bytes", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7, frameon=False, loc="upper right")
    if title:
        fig.suptitle(title, x=0.02, ha="left", fontsize=10)
    return fig


__all__ = ["colour", "LogBox", "TreeAndLog", "tree_and_log", "draw_tree_and_log", "tree_graph", "draw_utilization"]
