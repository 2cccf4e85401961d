"""Pictures of the page store's log as transactions see it: one lane per transaction, CLRs and their undo-next.

:func:`log_rows` reads page-store entries into plain data (:class:`LogRow`);
:func:`draw_xct_log` draws them:

- entries left to right in log order (one column each, not to scale, the
  LSN under it), one horizontal *lane* per transaction (checkpoints and
  entries of no transaction in the top lane), each entry a box coloured by
  its type and labelled with its type's code of two or three letters
  (:func:`box_code`; the legend pairs each code and colour with the type's
  name), so that no box has to be told apart by its colour alone; a long log wraps into
  several lines of columns, each with all the lanes, so that the labels keep
  a readable size at notebook width;
- each transaction's backward chain (``txn_prev_lsn``) as grey arcs above
  its lane;
- compensation entries (CLRs) hatched, with their ``undo_nxt`` as a red
  dashed arc below the lane: where a rollback continues, past the entry the
  CLR compensates (a CLR whose ``undo_nxt`` is NULL ends the rollback: a red
  dot); the longer an arc, the deeper it dips (into the lane below where
  that lane is empty under it), so that the nested arcs of one rollback
  stand apart;
- ``faded``: LSNs drawn pale (entries a crash lost); ``outlined``: LSN ->
  colour of a thick outline (what a restart pass did with the entry);
- ``marks``: labelled vertical lines at LSNs (the master, the redo LSN, the
  crash).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle

from minidb.log import LSN
from minidb.pagestore.ids import PageId
from minidb.viz.style import SMALL, TITLE, WIDTH, dark, fits, new_figure, points_per_unit, title_lines, type_colour

SHORT = {
    "create_ext_list": "ext+", "free_ext_list": "ext-", "set_ext_next": "next", "set_ext_prev": "prev",
    "alloc_pages_in_ext": "alloc", "free_pages_in_ext": "pfree", "store_operation": "store",
    "xct_abort": "abort", "xct_freeing_space": "freeing", "xct_end": "end", "compensate": "comp",
    "chkpt_begin": "ck-b", "chkpt_bf_tab": "ck-pg", "chkpt_xct_tab": "ck-xt", "chkpt_end": "ck-e",
    "page_format": "fmt", "rec_insert": "ins", "rec_remove": "rem", "rec_splice": "splice",
    "clr_rec_insert": "CLR ins", "clr_rec_remove": "CLR rem", "clr_rec_splice": "CLR spl",
}


# The label inside an entry's box: at most three letters (a CLR is hatched and keeps its action's code).
BOX_CODE = {
    "chkpt_begin": "CB", "chkpt_bf_tab": "CP", "chkpt_xct_tab": "CX", "chkpt_end": "CE", "page_image": "img",
    "store_operation": "sto", "create_ext_list": "ext", "free_ext_list": "fxl", "set_ext_next": "nxt",
    "set_ext_prev": "prv", "alloc_pages_in_ext": "alc", "free_pages_in_ext": "fre", "page_format": "fmt",
    "compensate": "cmp", "rec_insert": "ins", "rec_remove": "rem", "rec_splice": "spl", "xct_end": "end",
    "xct_abort": "abt", "xct_freeing_space": "frs", "clr_rec_insert": "ins", "clr_rec_remove": "rem",
    "clr_rec_splice": "spl", "btree_insert": "bti", "btree_remove": "btr", "btree_header": "bth",
}


def box_code(type_name: str) -> str:
    """The code an entry's box shows: :data:`BOX_CODE`, or the initials of the type's words (three at most)."""
    return BOX_CODE.get(type_name) or "".join(word[0] for word in type_name.split("_"))[:3]


@dataclass(frozen=True)
class LogRow:
    lsn: LSN
    type_name: str
    tid: int  # 0: no transaction
    prev: LSN | None
    undo_nxt: LSN | None  # for compensation entries
    page: PageId | None
    text: str

    @property
    def is_clr(self) -> bool:
        return self.undo_nxt is not None

    def __str__(self) -> str:
        return f"{self.lsn}  {'T%d' % self.tid if self.tid else '--':<4} {self.text}"


def describe(entry: Any) -> str:
    """One short line: type, page, and the fields that matter."""
    v = entry.values
    name = entry.type_name
    page = f" {PageId(v['vol'], v['store'], v['page'])}" if "page" in v and "vol" in v else ""
    parts = []
    if "slot" in v:
        parts.append(f"slot {v['slot']}")
    if name in ("rec_insert", "rec_remove", "clr_rec_insert", "clr_rec_remove"):
        parts.append(_bytes(v["data"]))
    if name in ("rec_splice", "clr_rec_splice"):
        parts.append(f"@{v['start']} {_bytes(v['old'])} -> {_bytes(v['new'])}")
    if name == "store_operation":
        parts.append(f"s{v['snum']} {v['op']}={v['value']}")
    if name in ("alloc_pages_in_ext", "free_pages_in_ext"):
        parts.append(f"x{v['ext']} pmap={v['pmap']:b}")
    if name in ("create_ext_list", "free_ext_list"):
        parts.append(f"s{v['snum']} exts={[i['ext'] for i in v['exts']]}")
    if name == "page_image":
        parts.append(f"{len(v['image'])} bytes")
    if name == "xct_end":
        parts.append("committed" if v["committed"] else "aborted")
    if name == "xct_freeing_space":
        parts.append(f"stores={[s['snum'] for s in v['stores']]} exts={[e['ext'] for e in v['exts']]}")
    if name == "chkpt_bf_tab":
        parts.append(f"{len(v['pages'])} dirty pages")
    if name == "chkpt_xct_tab":
        parts.append("xcts " + (", ".join(f"T{x['tid']}" for x in v["xcts"]) or "none"))
    if "undo_nxt" in v:
        parts.append(f"undo_nxt={v['undo_nxt']}")
    return f"{name}{page}" + (f" {' '.join(parts)}" if parts else "")


def _bytes(data: bytes) -> str:
    text = data.decode("latin-1")
    shown = "".join(c if 32 <= ord(c) < 127 else "." for c in text[:12])
    return repr(shown) + ("..." if len(data) > 12 else "")


def log_rows(log: Any, start: LSN | None = None) -> list[LogRow]:
    """The page store's entries of ``log`` from ``start`` (all by default)."""
    rows = []
    for entry in log.scan(start):
        entry_type = entry.entry_type
        if entry_type is None or entry_type.owner != "pagestore":
            continue
        v = entry.values
        page = PageId(v["vol"], v["store"], v["page"]) if entry_type.redoable else None
        rows.append(LogRow(entry.lsn, entry_type.name, v.get("txn_id", 0), v.get("txn_prev_lsn"),
                           v.get("undo_nxt") if entry_type.compensation else None, page, describe(entry)))
    return rows


# A column (one entry) is at least COLUMN points wide, a lane LANE inches high;
# a long log is wrapped into several lines of columns, each with every lane,
# so that no label has to shrink or turn on its side.
COLUMN = 20.0  # room for a three-letter code in each box
LANE = 0.26
LINE_EXTRA = 0.5  # inches per line for its LSN labels and the gap to the next
LEGEND_COLUMNS = 4


def line_length(entries: int, width: float) -> int:
    """Entries per line: as many as fit ``width`` at COLUMN points each, spread evenly over the lines."""
    fit = max(1, int(width * 0.86 * 72 // COLUMN))
    lines = max(1, -(-entries // fit))
    return max(1, -(-entries // lines))


def legend_rows(types: int) -> int:
    return -(-types // LEGEND_COLUMNS)


def lanes_height(lanes: int, entries: int = 0, width: float = WIDTH, types: int = 0, title_lines: int = 1) -> float:
    """The height in inches :func:`draw_xct_log` gives ``lanes`` lanes of ``entries`` entries
    (wrapped to ``width``), a legend of ``types`` types and a title of ``title_lines`` lines."""
    lines = max(1, -(-entries // line_length(entries, width))) if entries else 1
    return 0.35 + 0.22 * title_lines + lines * (LANE * lanes + LINE_EXTRA) + 0.25 * legend_rows(types) + 0.1


def draw_xct_log(rows: list[LogRow], *, title: str | None = None, faded: frozenset = frozenset(),
                 outlined: dict | None = None, marks: dict[str, LSN] | None = None, width: float = WIDTH,
                 lanes: list[int] | None = None) -> Figure:
    """Draw the entries in lanes (see the module documentation)."""
    tids = lanes if lanes is not None else lanes_of(rows)
    title = title_lines(title, width) if title else None
    height = lanes_height(len(tids), len(rows), width, len({r.type_name for r in rows}),
                          title.count("\n") + 1 if title else 0)
    fig = new_figure(width, height)
    plot_xct_log(fig, rows, tids, top=height - 0.35 - (0.22 * (title.count("\n") + 1) if title else 0),
                 faded=faded, outlined=outlined, marks=marks)
    if title:
        fig.suptitle(title, x=0.02, ha="left", fontsize=TITLE)
    return fig


def lanes_of(rows: list[LogRow]) -> list[int]:
    return sorted({0} | {r.tid for r in rows})


def plot_xct_log(fig: Figure, rows: list[LogRow], tids: list[int], *, top: float,
                 faded: frozenset = frozenset(), outlined: dict | None = None,
                 marks: dict[str, LSN] | None = None) -> float:
    """Draw the lanes into ``fig`` from ``top`` inches (from the bottom) down, one axes per line of
    entries, and the legend of entry types at the bottom of the figure; return where the lines end."""
    outlined = outlined or {}
    width, height = fig.get_size_inches()
    per_line = line_length(len(rows), width)
    lane = {tid: i for i, tid in enumerate(tids)}
    column = {row.lsn: i for i, row in enumerate(rows)}
    seen: dict[str, str] = {}
    lines = [rows[i:i + per_line] for i in range(0, len(rows), per_line)] or [[]]
    for number, line in enumerate(lines):
        first = number * per_line
        top -= LANE * len(tids) + 0.05
        ax = fig.add_axes((0.1, top / height, 0.86 * min(1.0, max(len(line), 1) / per_line) if line else 0.86,
                           LANE * len(tids) / height))
        top -= LINE_EXTRA - 0.05
        ax.set_xlim(first, first + max(len(line), 1))
        ax.set_ylim(-0.1, len(tids))
        depth = _undo_depths(line, first, column, lane)
        for i, row in enumerate(line, start=first):
            y = len(tids) - 1 - lane.get(row.tid, 0)
            colour = type_colour(row.type_name)
            seen[row.type_name] = colour
            edge = outlined.get(row.lsn)
            ax.add_patch(Rectangle((i + 0.08, y + 0.2), 0.84, 0.6, facecolor=colour,
                                   edgecolor=edge or ("#c62828" if row.is_clr else "white"),
                                   lw=2.6 if edge else (1.2 if row.is_clr else 0.5),
                                   hatch="//" if row.is_clr else None, alpha=0.25 if row.lsn in faded else 1.0))
            code = box_code(row.type_name)
            if fits(ax, code, 0.84, SMALL, 0.6):
                ax.text(i + 0.5, y + 0.5, code, ha="center", va="center", fontsize=SMALL,
                        color="white" if dark(colour) and row.lsn not in faded else "#212121",
                        alpha=0.6 if row.lsn in faded else 1.0,
                        bbox=dict(boxstyle="square,pad=0.05", facecolor=colour, edgecolor="none", alpha=0.8)
                        if row.is_clr else None)
            # prev arcs bend above the lane, undo-next arcs below it, each at most a third of a lane
            # high, so that neither reaches into another lane; one that points into an earlier line
            # ends at this line's left edge
            if row.prev is not None and not row.prev.is_null and row.prev in column:
                _arc(ax, i + 0.3, max(column[row.prev] + 0.7, first), y + 0.8, 1, "#9e9e9e", 0.6, "-")
            if row.is_clr:
                if row.undo_nxt.is_null:
                    ax.plot([i + 0.5], [y + 0.08], "o", color="#c62828", ms=4)
                elif row.undo_nxt in column:
                    _arc(ax, i + 0.5, max(column[row.undo_nxt] + 0.5, first), y + 0.2, -1, "#c62828", 1.0, "--",
                         depth[row.lsn])
        for name, lsn in (marks or {}).items():
            if lsn is None or lsn.is_null:
                continue
            x = next((i for i, row in enumerate(rows) if row.lsn >= lsn), len(rows))
            if first <= x < first + len(line) or (x == len(rows) and number == len(lines) - 1):
                ax.axvline(x, color="#1b5e20", lw=1.2, ls=":")
                right = x - first > 0.75 * per_line  # near the right edge: the name goes to the left
                ax.text(x - 0.1 if right else x + 0.1, len(tids) + 0.05, name, fontsize=SMALL, color="#1b5e20",
                        va="bottom", ha="right" if right else "left", clip_on=False)
        ax.set_yticks([len(tids) - 1 - i + 0.5 for i in range(len(tids))])
        ax.set_yticklabels(["no txn" if t == 0 else f"T{t}" for t in tids], fontsize=SMALL)
        ticks = [f"{r.lsn.file:x}/{r.lsn.offset:x}" for r in line]
        step = _tick_step(ax, ticks)
        ax.set_xticks([i + 0.5 for i in range(first, first + len(line), step)])
        ax.set_xticklabels(ticks[::step], fontsize=SMALL)
        ax.tick_params(axis="x", length=2, pad=1)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    handles = [Patch(facecolor=c, label=f"{box_code(n)} {n}") for n, c in seen.items()]
    if handles:
        fig.legend(handles=handles, loc="lower center", ncol=LEGEND_COLUMNS, fontsize=SMALL, frameon=False,
                   bbox_to_anchor=(0.5, (top - 0.25 * legend_rows(len(handles)) - 0.05) / height))
    return top - 0.25 * legend_rows(len(handles))


def _undo_depths(line: list[LogRow], first: int, column: dict[LSN, int], lane: dict[int, int]
                 ) -> dict[LSN, float]:
    """How deep (in lanes) each undo-next arc of a line dips: the longer the arc, the deeper, so that
    the nested arcs of a rollback stand apart instead of sharing one curve. An arc dips at most 0.38
    of a lane (the gap down to the next lane's boxes), or 1.2 lanes where the lane below has no entry
    under the arc (the last lane, or a transaction that logged nothing there)."""
    spans = {row.lsn: (max(column[row.undo_nxt], first), i) for i, row in enumerate(line, start=first)
             if row.is_clr and not row.undo_nxt.is_null and row.undo_nxt in column}
    depths: dict[LSN, float] = {}
    for this in {lane.get(row.tid, 0) for row in line if row.lsn in spans}:
        arcs = {row.lsn: spans[row.lsn] for row in line if row.lsn in spans and lane.get(row.tid, 0) == this}
        below = [i for i, row in enumerate(line, start=first) if lane.get(row.tid, 0) == this + 1]
        room = 0.38 if any(a <= i <= b for a, b in arcs.values() for i in below) else 1.2
        ranks = {n: k for k, n in enumerate(sorted({b - a for a, b in arcs.values()}))}
        top = max(len(ranks) - 1, 1)
        depths |= {lsn: 0.12 + (room - 0.12) * ranks[b - a] / top for lsn, (a, b) in arcs.items()}
    return depths


def _arc(ax: Any, x_from: float, x_to: float, y: float, side: int, colour: str, lw: float, style: str,
         height: float = 1 / 3) -> None:
    """A leftward arc ``height`` of a lane high (a third by default): above the lane (``side`` 1) or below it (-1).

    arc3's control point lies rad x the chord's length off its middle, and the curve reaches half
    way to it; so rad = 2 x height / length bounds the height whatever the length.
    """
    per_x, per_y = points_per_unit(ax)
    length = max(abs(x_from - x_to) * per_x, 1.0)
    rad = side * min(0.4, 2 * per_y * height / length)
    ax.add_patch(FancyArrowPatch((x_from, y), (x_to, y), connectionstyle=f"arc3,rad={rad:.3f}", arrowstyle="-|>",
                                 mutation_scale=7, color=colour, lw=lw, linestyle=style))


def _tick_step(ax: Any, labels: list[str]) -> int:
    """Label every k-th column, k as small as lets the labels stand side by side."""
    widest = max([len(label) for label in labels] + [1])
    return next(k for k in range(1, 100) if fits(ax, "0" * widest + "0", k))
