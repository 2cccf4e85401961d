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
from minidb.viz.style import SMALL, TITLE, WIDTH, new_figure, title_lines
from minidb.viz.xctlog import LogRow, lanes_height, lanes_of, plot_xct_log

TABLES_HEIGHT = 2.9  # inches: three tables of up to ten rows
TABLE_ROWS = 10


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
    ax.set_title(title, fontsize=SMALL, loc="left", weight="bold")
    if not rows:
        ax.text(0.02, 0.85, "(empty)", fontsize=SMALL, transform=ax.transAxes, va="top")
        return
    shown = rows[:TABLE_ROWS] if len(rows) <= TABLE_ROWS else rows[:TABLE_ROWS - 1]
    table = ax.table(cellText=[list(r) for r in shown], colLabels=columns, loc="upper left",
                     cellLoc="left", colLoc="left")
    table.auto_set_font_size(False)
    table.set_fontsize(SMALL)
    table.auto_set_column_width(list(range(len(columns))))
    for cell in table.get_celld().values():
        cell.set_height(1 / (TABLE_ROWS + 1.5))
    if len(rows) > len(shown):
        ax.text(0.02, 0.0, f"... and {len(rows) - len(shown)} more", fontsize=SMALL, transform=ax.transAxes)


def draw_recovery(picture: RecoveryPicture, *, title: str | None = None, width: float = WIDTH) -> Figure:
    """The log on top, the three tables below (see the module documentation)."""
    tids = list(picture.lanes) if picture.lanes else lanes_of(list(picture.rows))
    title = title_lines(title, width) if title else None
    title_count = title.count("\n") + 1 if title else 0
    log_height = lanes_height(len(tids), len(picture.rows), width, len({r.type_name for r in picture.rows}),
                              title_count)
    height = log_height + TABLES_HEIGHT
    fig = new_figure(width, height)
    plot_xct_log(fig, list(picture.rows), tids, top=height - 0.35 - 0.22 * title_count, faded=picture.faded,
                 outlined=picture.outlined, marks=picture.marks)
    axes = [fig.add_axes((0.02 + x, 0.05 / height, w, (TABLES_HEIGHT - 0.35) / height))
            for x, w in ((0.0, 0.4), (0.43, 0.24), (0.69, 0.3))]
    _table(axes[0], "transaction table", ["tid", "state", "last LSN", "undo-next"], list(picture.xct_table))
    _table(axes[1], "dirty page table", ["page", "rec LSN"], list(picture.dirty_pages))
    _table(axes[2], "page LSNs", ["page", "on disk", "in pool"], list(picture.page_lsns))
    if title:
        fig.suptitle(title, x=0.02, ha="left", fontsize=TITLE)
    return fig


def lsn_text(lsn: LSN | None) -> str:
    return "" if lsn is None else str(lsn)
