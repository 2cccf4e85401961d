"""Pictures of the log store: a tree above its log, utilization per file.

:func:`tree_and_log` reads an environment (without changing it) into plain
data: the tree of one database (every node, resident or not, as
:mod:`minidb.logstore.tools.inspect` sees it) and every entry of the log, each
marked *in use* (some tree points at it), *obsolete* (the utilization
tracker says so) or neither. :func:`draw_tree_and_log` draws it:

- the tree on top, one row per level: one box per node, filled by node type
  with the tree family's colours of :mod:`minidb.viz.style` (IN dark purple,
  BIN light purple), labelled ``BIN 4``, its LSN and its keys; a red outline
  marks a dirty node. A node that is not in memory is only a reference in its
  parent's slot: it is drawn as a dashed, empty box with its LSN and no keys.
  A level too wide for the column at that size keeps one row: its boxes
  become narrow (the name, then one key a line, the LSN left to the log's
  label, :func:`tree_rows`) instead of wrapping into a second row whose
  parent lines would cross;
- the log below, one cell per entry in log order, each file starting a new
  row: coloured by type, hatched when provisional (``//`` YES, ``..``
  BEFORE_CKPT_END), grey when obsolete, and labelled underneath with its
  offset in its file (hex, as in an LSN ``0x<file>/0x<offset>``);
- no lines from the tree into the log (they tangled as soon as the tree had
  a few nodes): the cell of every node's current version carries the node's
  number, and the cell of every LN a BIN in memory points at carries the
  record's key where it fits (``show_records``).

The legend lists exactly what the picture draws. :func:`tree_graph` is the
same tree as a graphviz digraph (record-shaped nodes, one field per slot
with its LSN); :func:`draw_utilization` draws live and obsolete bytes per file.
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from minidb.log import LSN
from minidb.logstore.env import Environment
from minidb.logstore.tools.inspect import NodeView, TreeView, tree_view
from minidb.logstore.tree.in_node import node_kind
from minidb.viz.style import SMALL, TITLE, WIDTH, dark, new_figure, text_width, title_lines, type_colour

OBSOLETE = "#d9d9d9"


def colour(type_name: str) -> str:
    """An entry type's colour: the shared table of :mod:`minidb.viz.style` (tree nodes purple, records blue)."""
    return type_colour(type_name)


DIRTY = "#ff0000"  # outlines only; far from every entry type's colour (Abort's red included)
EVICTED = "#757575"  # the dashed outline of a node that is not in memory
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
    from minidb.logstore.tools.inspect import live_lsns

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


def _tree_order(view: TreeView) -> dict[int, float]:
    """A left-to-right order for every node: leaves in key order, parents centred over their children."""
    leaves = [n for n in view.nodes() if n.is_bin]
    order: dict[int, float] = {leaf.node_id: float(i) for i, leaf in enumerate(leaves)}

    def place(node: NodeView) -> float:
        if node.is_bin:
            return order[node.node_id]
        xs = [place(child) for child in node.children]
        order[node.node_id] = sum(xs) / len(xs) if xs else 0.0
        return order[node.node_id]

    place(view.root)
    return order


def _node_label(node: NodeView, narrow: bool = False) -> str:
    """``BIN 4``, its LSN and up to four keys, two a line (``dave*``: known deleted); no keys when the
    node is not in memory (only its parent's reference to it is). ``narrow``: a BIN without its LSN (its
    log cell carries its number) and one key a line."""
    if narrow and node.is_bin:
        if not node.resident:
            return f"BIN {node.node_id}\nnot in\nmemory"
        keys = _keys(node)
        return "\n".join([f"BIN {node.node_id}", *(keys if len(keys) <= 4 else keys[:3] + ["..."])])
    lines = [f"{node_kind(node.is_bin)} {node.node_id}", str(node.lsn)]
    if not node.resident:
        return "\n".join(lines + ["not in memory"])
    keys = _keys(node) if node.is_bin else []
    shown = keys if len(keys) <= 4 else keys[:3] + ["..."]
    lines += [" ".join(shown[i:i + 2]) for i in range(0, len(shown), 2)]
    return "\n".join(lines)


def _keys(node: NodeView) -> list[str]:
    keys = [k.decode("utf-8", "replace") for k in node.keys]
    if any(node.known_deleted):
        keys = [f"{k}*" if d else k for k, d in zip(keys, node.known_deleted, strict=True)]
    return keys


BOX_GAP, BOX_PAD = 8.0, 10.0  # points between two boxes of a row, and around a label
NARROW_GAP, NARROW_PAD = 4.0, 6.0  # the same for a level of narrow boxes


def node_labels(view: TreeView, width_pt: float) -> dict[int, str]:
    """Each node's label: the full one, or the narrow one for BINs when a level would not fit one row."""
    nodes = view.nodes()
    full = {n.node_id: _node_label(n) for n in nodes}
    box_w = max(text_width(label) for label in full.values()) + BOX_PAD
    widest = max(sum(1 for n in nodes if n.level == level) for level in {n.level for n in nodes})
    if widest * (box_w + BOX_GAP) <= width_pt:
        return full
    return {n.node_id: _node_label(n, narrow=True) if n.is_bin else full[n.node_id] for n in nodes}


def level_widths(view: TreeView, width_pt: float) -> dict[int, tuple[float, float]]:
    """Per level: its boxes' width and the gap between them, in points (narrow labels, narrow boxes)."""
    labels = node_labels(view, width_pt)
    widths = {}
    for level in {n.level for n in view.nodes()}:
        members = [n for n in view.nodes() if n.level == level]
        narrow = any(labels[n.node_id] != _node_label(n) for n in members)
        pad, gap = (NARROW_PAD, NARROW_GAP) if narrow else (BOX_PAD, BOX_GAP)
        widths[level] = (max(text_width(labels[n.node_id]) for n in members) + pad, gap)
    return widths


def tree_rows(view: TreeView, width_pt: float) -> tuple[list[list[NodeView]], float, float]:
    """The tree as rows of nodes, top to bottom, the widest box's width and each box's height in points.

    Each level is one row, left to right; when a level's boxes do not fit ``width_pt`` the BINs take their
    narrow labels (:func:`node_labels`, :func:`level_widths`), and only a level too wide even then wraps
    into more rows: the labels keep their size however wide the tree is.
    """
    nodes = view.nodes()
    labels = node_labels(view, width_pt)
    widths = level_widths(view, width_pt)
    box_h = max(label.count("\n") + 1 for label in labels.values()) * SMALL * 1.25 + 6
    order = _tree_order(view)
    rows: list[list[NodeView]] = []
    for level in sorted({n.level for n in nodes}, reverse=True):
        box_w, gap = widths[level]
        per_row = max(1, int(width_pt // (box_w + gap)))
        members = sorted((n for n in nodes if n.level == level), key=lambda n: order[n.node_id])
        rows += [members[i:i + per_row] for i in range(0, len(members), per_row)]
    return rows, max(w for w, _ in widths.values()), box_h


LOG_MARGIN = 52.0  # points left of the log rows, for the file names
CELL_H = 14.0  # a log cell's height, in points; its offset label goes underneath
LOG_ROW_H = CELL_H + SMALL * 1.3 + 6


def log_rows(picture: TreeAndLog, width_pt: float) -> tuple[list[list[LogBox]], float]:
    """The log's entries in rows of cells, each file starting a new row, and a cell's width in points."""
    cell_w = max([text_width(f"{b.lsn.offset:x}") for b in picture.boxes] + [20]) + 8
    per_row = max(1, int((width_pt - LOG_MARGIN) // cell_w))
    rows: list[list[LogBox]] = []
    for number, _ in picture.file_sizes:
        entries = [b for b in picture.boxes if b.lsn.file == number]
        rows += [entries[i:i + per_row] for i in range(0, len(entries), per_row)]
    return rows, cell_w


def legend_handles(picture: TreeAndLog) -> list[Patch]:
    """What the picture draws, and nothing else: node fills, entry types, obsolete, provisional, dirty, evicted."""
    nodes = picture.view.nodes()
    handles = [Patch(facecolor=colour(kind), edgecolor="#37474f", label=f"{kind} (node, entry)")
               for kind in ("IN", "BIN") if any(node_kind(n.is_bin) == kind and n.resident for n in nodes)
               or any(b.type_name == kind and not b.obsolete for b in picture.boxes)]
    named = {h.get_label().split(" ")[0] for h in handles}
    seen = {box.type_name: colour(box.type_name) for box in picture.boxes if not box.obsolete}
    handles += [Patch(facecolor=c, label=n) for n, c in seen.items() if n not in named]
    if any(b.obsolete for b in picture.boxes):
        handles.append(Patch(facecolor=OBSOLETE, label="obsolete"))
    for flag, hatch in HATCHES.items():
        if any(b.provisional == flag for b in picture.boxes):
            handles.append(Patch(facecolor="white", edgecolor="black", hatch=hatch, label=f"Provisional.{flag}"))
    if any(n.dirty for n in nodes):
        handles.append(Patch(fill=False, edgecolor=DIRTY, lw=2, label="dirty node (red outline)"))
    if any(not n.resident for n in nodes):
        handles.append(Patch(fill=False, edgecolor=EVICTED, linestyle="--", label="not in memory"))
    return handles


def draw_tree_and_log(picture: TreeAndLog, *, title: str | None = None, highlight: set[LSN] | None = None,
                      show_records: bool = True, width: float = WIDTH) -> Figure:
    """Draw the tree above the log (see the module documentation); ``highlight`` LSNs get a thick outline.

    The figure is ``width`` inches wide and as tall as the tree and the log need (see :func:`tree_rows`
    and :func:`log_rows`).
    """
    highlight = highlight or set()
    view = picture.view
    tree_w = width * 0.96 * 72
    rows, _, box_h = tree_rows(view, tree_w)
    labels = node_labels(view, tree_w)
    widths = level_widths(view, tree_w)
    row_gap = 26.0
    tree_h = len(rows) * box_h + (len(rows) - 1) * row_gap
    cells, cell_w = log_rows(picture, tree_w)
    log_h = len(cells) * LOG_ROW_H
    handles = legend_handles(picture)
    ncol = 4
    legend_in = 0.25 * -(-len(handles) // ncol) + 0.1
    title = title_lines(title, width) if title else None
    title_in = 0.15 + 0.22 * (title.count("\n") + 1) if title else 0.15
    height = title_in + tree_h / 72 + 0.5 + log_h / 72 + 0.1 + legend_in
    fig = new_figure(width, height)
    tree_ax = fig.add_axes((0.02, 1 - (title_in + tree_h / 72) / height, 0.96, tree_h / 72 / height))
    log_ax = fig.add_axes((0.02, (legend_in + 0.1) / height, 0.96, log_h / 72 / height))

    positions: dict[int, tuple[float, float]] = {}
    for r, row in enumerate(rows):
        y = tree_h - r * (box_h + row_gap) - box_h / 2
        for i, node in enumerate(row):
            positions[node.node_id] = ((i + 0.5) * tree_w / len(row), y)
    for node in view.nodes():
        x, y = positions[node.node_id]
        for child in node.children:
            cx, cy = positions[child.node_id]
            tree_ax.plot([x, cx], [y - box_h / 2, cy + box_h / 2], color="#90a4ae", lw=0.8, zorder=1)
    for node in view.nodes():
        x, y = positions[node.node_id]
        fill = colour(node_kind(node.is_bin)) if node.resident else "white"
        edge = DIRTY if node.dirty else ("#37474f" if node.resident else EVICTED)
        box_w = widths[node.level][0]
        tree_ax.add_patch(Rectangle((x - box_w / 2, y - box_h / 2), box_w, box_h, facecolor=fill,
                                    edgecolor=edge, lw=2.5 if node.dirty else 0.9,
                                    linestyle="-" if node.resident else "--", zorder=2))
        tree_ax.text(x, y, labels[node.node_id], ha="center", va="center", fontsize=SMALL, zorder=3,
                     color="white" if dark(fill) else "black")
    tree_ax.set_xlim(0, tree_w)
    tree_ax.set_ylim(-3, tree_h + 3)  # room for the outlines of the top and bottom rows
    tree_ax.axis("off")

    where: dict[LSN, tuple[float, float]] = {}  # each entry's cell: (left, bottom)
    first_row = {}
    for r, row in enumerate(cells):
        y = log_h - r * LOG_ROW_H - CELL_H
        first_row.setdefault(row[0].lsn.file, y)
        for i, box in enumerate(row):
            x0 = LOG_MARGIN + i * cell_w
            where[box.lsn] = (x0, y)
            fill = OBSOLETE if box.obsolete else colour(box.type_name)
            log_ax.add_patch(Rectangle((x0, y), cell_w, CELL_H, facecolor=fill, hatch=HATCHES.get(box.provisional),
                                       edgecolor="#c62828" if box.lsn in highlight else "white",
                                       lw=2.2 if box.lsn in highlight else 0.6))
            log_ax.text(x0 + cell_w / 2, y - 1.5, f"{box.lsn.offset:x}", ha="center", va="top", fontsize=SMALL,
                        color="#37474f")
    for number, size in picture.file_sizes:
        log_ax.text(LOG_MARGIN - 6, first_row[number] + CELL_H / 2, f"file {number:x}\n{size} B", ha="right",
                    va="center", fontsize=SMALL)
    log_ax.set_xlim(0, tree_w)
    log_ax.set_ylim(0, log_h)
    log_ax.axis("off")

    def tag(lsn: LSN, text: str) -> None:  # a name written into an entry's cell, where it fits
        if lsn in where and text_width(text) <= cell_w - 2:
            x0, y = where[lsn]
            fill = OBSOLETE if picture.box(lsn).obsolete else colour(picture.box(lsn).type_name)
            log_ax.text(x0 + cell_w / 2, y + CELL_H / 2, text, ha="center", va="center", fontsize=SMALL,
                        color="white" if dark(fill) else "black", weight="bold")

    for node in view.nodes():
        if not node.lsn.is_null:
            tag(node.lsn, str(node.node_id))
        if node.is_bin and node.resident and show_records:
            for key, lsn, deleted in zip(_keys(node), node.slot_lsns, node.known_deleted, strict=True):
                if not deleted:
                    tag(lsn, key)
    fig.legend(handles=handles, loc="lower center", ncol=ncol, fontsize=SMALL, frameon=False)
    if title:
        fig.suptitle(title, x=0.02, ha="left", fontsize=TITLE)
    return fig


GRAPH_ROW = 6  # nodes of one level side by side before the level wraps to a new row
LOG_ROW = 8  # log entries in one row of the log table


def tree_graph(picture: TreeAndLog, show_log: bool = True):
    """The tree as a graphviz digraph: a record node per IN/BIN with a field per slot (key and LSN;
    none for a node not in memory, drawn dashed), and, below it, the log as a table of cells (obsolete entries grey) that the slots point into.

    Laid out to fit a notebook column at its natural size (text 9 pt and more): each node's slots
    stack vertically, a level wraps to a new row after GRAPH_ROW nodes (invisible edges push the
    rest down), and the log table wraps after LOG_ROW entries.
    """
    import graphviz

    graph = graphviz.Digraph("tree", graph_attr={"rankdir": "TB", "fontsize": "10", "nodesep": "0.15",
                                                 "ranksep": "0.3", "ordering": "out", "size": f"{WIDTH},100"},
                             node_attr={"shape": "record", "fontsize": "10", "fontname": "Helvetica"})
    index = {box.lsn: i for i, box in enumerate(picture.boxes)}
    levels: dict[int, list[str]] = {}
    for node in picture.view.nodes():
        kind = node_kind(node.is_bin)
        fields = []
        for i, (key, lsn) in enumerate(zip(node.keys, node.slot_lsns, strict=True) if node.resident else ()):
            mark = "*" if node.is_bin and node.known_deleted[i] else ""
            shown = key.decode("utf-8", "replace") or "-inf"
            fields.append(f"<s{i}> {_escape(shown)}{mark} {lsn}")
        slots = "|".join(fields) or ("not in memory" if not node.resident else "empty")
        label = f"{{{kind} {node.node_id}\\n@ {node.lsn}|{slots}}}"
        style = {"color": DIRTY, "penwidth": "2"} if node.dirty else {}
        if not node.resident:
            style["style"] = "dashed"
        graph.node(f"n{node.node_id}", label, **style)
        levels.setdefault(node.level, []).append(f"n{node.node_id}")
        for i, child in enumerate(node.children):
            graph.edge(f"n{node.node_id}:s{i}", f"n{child.node_id}")
    for names in levels.values():
        for above, below in zip(names, names[GRAPH_ROW:], strict=False):
            graph.edge(above, below, style="invis")
    if not show_log:
        return graph
    cells = []
    for i, box in enumerate(picture.boxes):
        fill = OBSOLETE if box.obsolete else colour(box.type_name)
        ink = "white" if dark(fill) else "black"
        cells.append(f'<TD PORT="e{i}" BGCOLOR="{fill}"><FONT COLOR="{ink}">{box.type_name}<BR/>'
                     f'{box.lsn.file:x}/{box.lsn.offset:x}</FONT></TD>')
    rows = "".join("<TR>" + "".join(cells[i:i + LOG_ROW]) + "</TR>" for i in range(0, len(cells), LOG_ROW))
    graph.node("log", "<<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\">" + (rows or "<TR><TD>empty</TD></TR>")
               + "</TABLE>>", shape="plaintext")
    for node in picture.view.nodes():
        if node.is_bin and node.resident:
            for i, (lsn, deleted) in enumerate(zip(node.slot_lsns, node.known_deleted, strict=True)):
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
    ax = fig.add_axes((0.12, 0.15, 0.72, 0.65))
    names = [f"{s.file_number:08x}" for s in report]
    live = [s.live_size for s in report]
    obsolete = [s.total_size - s.live_size for s in report]  # with a file's own summaries, which go with it
    positions = range(len(report))
    ax.bar(positions, live, color="#4e79a7", label="live")
    ax.bar(positions, obsolete, bottom=live, color=OBSOLETE, label="obsolete")
    for i, summary in enumerate(report):
        ax.text(i, summary.total_size, f"{summary.utilization:.0%}", ha="center", va="bottom", fontsize=SMALL)
    ax.set_xticks(list(positions), names, fontsize=SMALL)
    ax.set_ylabel("bytes", fontsize=SMALL)
    ax.tick_params(labelsize=SMALL)
    ax.set_ylim(0, max([s.total_size for s in report] + [1]) * 1.15)  # room for the percentages
    ax.legend(fontsize=SMALL, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    if title:
        fig.suptitle(title, x=0.02, ha="left", fontsize=TITLE)
    return fig


__all__ = ["colour", "LogBox", "TreeAndLog", "tree_and_log", "draw_tree_and_log", "tree_graph", "draw_utilization"]
