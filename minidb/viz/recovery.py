"""Pictures of restart: the log, the transaction table, the dirty page table and the page LSNs.

A :class:`RecoveryPicture` is plain data for one moment of a restart (after
the crash, after analysis, after redo, after undo, restarted): the log
rows (:mod:`minidb.viz.xctlog`) with what the pass did to them, and three
tables. :func:`draw_recovery` draws the log on top and the tables below:

- **transaction table**: tid, state, last LSN, undo-next;
- **dirty page table**: page, recovery LSN;
- **page LSNs**: for each page of interest, the LSN of its image *on disk*
  and of its copy *in the buffer pool* (blank if not cached): redo raises
  the pool's copy to the log's last entry for the page, and a page whose
  disk LSN is newer than an entry needs no redo of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from matplotlib.figure import Figure

from minidb.log import LSN
from minidb.viz.style import new_figure
from minidb.viz.xctlog import LogRow, lanes_height, lanes_of, plot_xct_log

TABLE_FONT = 7
TABLES_HEIGHT = 2.3


@dataclass(frozen=True)
class RecoveryPicture:
    phase: str
    rows: tuple[LogRow, ...]
    xct_table: tuple[tuple[str, str, str, str], ...]  # tid, state, last LSN, undo-next
    dirty_pages: tuple[tuple[str, str], ...]  # page, recovery LSN
    page_lsns: tuple[tuple[str, str, str], ...]  # page, on disk, in the pool
    faded: frozenset = frozenset()
    outlined: dict = field(default_factory=dict)
    marks: dict = field(default_factory=dict)
    lanes: tuple[int, ...] | None = None


def _table(ax, title: str, columns: list[str], rows: list[tuple[str, ...]]) -> None:
    ax.axis("off")
    ax.set_title(title, fontsize=8, loc="left")
    if not rows:
        ax.text(0.02, 0.85, "(empty)", fontsize=TABLE_FONT, transform=ax.transAxes, va="top")
        return
    table = ax.table(cellText=[list(r) for r in rows[:14]], colLabels=columns, loc="upper left",
                     cellLoc="left", colLoc="left")
    table.auto_set_font_size(False)
    table.set_fontsize(TABLE_FONT)
    table.scale(1.0, 1.05)
    if len(rows) > 14:
        ax.text(0.02, 0.0, f"... and {len(rows) - 14} more", fontsize=TABLE_FONT, transform=ax.transAxes)


def draw_recovery(picture: RecoveryPicture, *, title: str | None = None, width: float = 12.0) -> Figure:
    """The log on top, the three tables below (see the module documentation)."""
    tids = list(picture.lanes) if picture.lanes else lanes_of(list(picture.rows))
    log_height = lanes_height(len(tids))
    height = log_height + TABLES_HEIGHT
    fig = new_figure(width, height)
    top = fig.add_axes((0.06, (TABLES_HEIGHT + 0.9) / height, 0.92, (log_height - 1.5) / height))
    plot_xct_log(top, list(picture.rows), tids, title=title, faded=picture.faded, outlined=picture.outlined,
                 marks=picture.marks)
    axes = [fig.add_axes((0.02 + i * 0.33, 0.02, 0.31, (TABLES_HEIGHT - 0.3) / height)) for i in range(3)]
    _table(axes[0], "transaction table", ["tid", "state", "last LSN", "undo-next"], list(picture.xct_table))
    _table(axes[1], "dirty page table", ["page", "rec LSN"], list(picture.dirty_pages))
    _table(axes[2], "page LSNs", ["page", "on disk", "in pool"], list(picture.page_lsns))
    return fig


def lsn_text(lsn: LSN | None) -> str:
    return "" if lsn is None else str(lsn)
