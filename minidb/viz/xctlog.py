"""Pictures of the page store's log as transactions see it: one lane per transaction, CLRs and their undo-next.

:func:`log_rows` reads page-store entries into plain data (:class:`LogRow`);
:func:`draw_xct_log` draws them:

- entries left to right in log order (one column each, not to scale), one
  horizontal *lane* per transaction (checkpoints and entries of no
  transaction in the top lane), each entry a box coloured by its type and
  labelled with a short name;
- each transaction's backward chain (``txn_prev_lsn``) as grey arcs above
  its lane;
- compensation entries (CLRs) hatched, with their ``undo_nxt`` as a red
  dashed arc below the lane: where a rollback continues, past the entry the
  CLR compensates (a CLR whose ``undo_nxt`` is NULL ends the rollback: a red
  dot);
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
from minidb.viz.style import new_figure, type_colour

SHORT = {
    "create_ext_list": "ext+", "free_ext_list": "ext-", "set_ext_next": "next", "set_ext_prev": "prev",
    "alloc_pages_in_ext": "alloc", "free_pages_in_ext": "pfree", "store_operation": "store",
    "xct_abort": "abort", "xct_freeing_space": "freeing", "xct_end": "end", "compensate": "comp",
    "chkpt_begin": "ck-b", "chkpt_bf_tab": "ck-pg", "chkpt_xct_tab": "ck-xt", "chkpt_end": "ck-e",
    "page_format": "fmt", "rec_insert": "ins", "rec_remove": "rem", "rec_splice": "splice",
    "clr_rec_insert": "CLR ins", "clr_rec_remove": "CLR rem", "clr_rec_splice": "CLR spl",
}


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


def draw_xct_log(rows: list[LogRow], *, title: str | None = None, faded: frozenset = frozenset(),
                 outlined: dict | None = None, marks: dict[str, LSN] | None = None, width: float = 11.0,
                 lanes: list[int] | None = None) -> Figure:
    """Draw the entries in lanes (see the module documentation)."""
    tids = lanes if lanes is not None else lanes_of(rows)
    height = lanes_height(len(tids))
    fig = new_figure(width, height)
    ax = fig.add_axes((0.07, 1.0 / height, 0.91, 1 - 1.6 / height))
    plot_xct_log(ax, rows, tids, title=title, faded=faded, outlined=outlined, marks=marks)
    return fig


def lanes_of(rows: list[LogRow]) -> list[int]:
    return sorted({0} | {r.tid for r in rows})


def lanes_height(lanes: int) -> float:
    """The height in inches :func:`draw_xct_log` gives ``lanes`` lanes (with labels and legend)."""
    return 1.6 + 0.55 * lanes


def plot_xct_log(ax: Any, rows: list[LogRow], tids: list[int], *, title: str | None = None,
                 faded: frozenset = frozenset(), outlined: dict | None = None,
                 marks: dict[str, LSN] | None = None) -> None:
    """Draw the lanes into ``ax`` (a legend of the entry types goes above it)."""
    outlined = outlined or {}
    lane = {tid: i for i, tid in enumerate(tids)}
    column = {row.lsn: i for i, row in enumerate(rows)}
    seen: dict[str, str] = {}
    for i, row in enumerate(rows):
        y = len(tids) - 1 - lane.get(row.tid, 0)
        colour = type_colour(row.type_name)
        seen[row.type_name] = colour
        edge = outlined.get(row.lsn)
        ax.add_patch(Rectangle((i + 0.08, y + 0.2), 0.84, 0.6, facecolor=colour,
                               edgecolor=edge or ("#c62828" if row.is_clr else "white"),
                               lw=2.6 if edge else (1.2 if row.is_clr else 0.5),
                               hatch="//" if row.is_clr else None, alpha=0.25 if row.lsn in faded else 1.0))
        ax.text(i + 0.5, y + 0.5, SHORT.get(row.type_name, row.type_name), ha="center", va="center",
                fontsize=5.5, rotation=90, alpha=0.4 if row.lsn in faded else 1.0)
        if row.prev is not None and not row.prev.is_null and row.prev in column:
            j = column[row.prev]
            ax.add_patch(FancyArrowPatch((i + 0.3, y + 0.8), (j + 0.7, y + 0.8), connectionstyle="arc3,rad=0.35",
                                         arrowstyle="-|>", mutation_scale=6, color="#9e9e9e", lw=0.6))
        if row.is_clr:
            if row.undo_nxt.is_null:
                ax.plot([i + 0.5], [y + 0.08], "o", color="#c62828", ms=3)
            elif row.undo_nxt in column:
                j = column[row.undo_nxt]
                ax.add_patch(FancyArrowPatch((i + 0.5, y + 0.2), (j + 0.5, y + 0.2), connectionstyle="arc3,rad=0.4",
                                             arrowstyle="-|>", mutation_scale=7, color="#c62828", lw=1.0,
                                             linestyle="--"))
    for name, lsn in (marks or {}).items():
        if lsn is None or lsn.is_null:
            continue
        x = next((i for i, row in enumerate(rows) if row.lsn >= lsn), len(rows))
        ax.axvline(x, color="#1b5e20", lw=1.2, ls=":")
        ax.text(x + 0.05, len(tids) - 0.02, name, fontsize=7, color="#1b5e20", va="top")
    ax.set_xlim(0, max(len(rows), 1))
    ax.set_ylim(-0.1, len(tids))
    ax.set_yticks([len(tids) - 1 - i + 0.5 for i in range(len(tids))])
    ax.set_yticklabels(["no txn" if t == 0 else f"T{t}" for t in tids], fontsize=8)
    step = max(1, len(rows) // 40)
    ax.set_xticks([i + 0.5 for i in range(0, len(rows), step)])
    ax.set_xticklabels([str(rows[i].lsn) for i in range(0, len(rows), step)], rotation=90, fontsize=5.5)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    handles = [Patch(facecolor=c, label=n) for n, c in seen.items()]
    if handles:
        ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=min(8, len(handles)),
                  fontsize=5.5, frameon=False, title=title, title_fontsize=8, alignment="left")
