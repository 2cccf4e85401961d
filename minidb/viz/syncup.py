"""Pictures of syncup and rollback: nodes' logs side by side, the matchpoint search, what was rolled back.

- :func:`node_log` reads a replicated environment's log (without changing
  it) into plain data: its replicated entries and its RollbackStart and
  RollbackEnd, in log order, each with its VLSN, type, LSN and whether it
  is INVISIBLE (rolled back), a record's key and data, and the LSN-neutral
  checksum of a replicated entry;
- :func:`draw_logs` draws one row per node, one box per entry in log order:
  coloured by entry type (the style's colours), greyed and hatched where
  the entry is INVISIBLE (its label stays dark on a white patch, readable
  through the hatch), with a thick border on each sync point (Commit,
  Abort, Matchpoint: where a syncup may end). Before any rollback a log's
  replicated entries are in VLSN order, so the rows line up by VLSN.
  ``compared`` marks the matchpoint search between the first two rows
  (the rejoining node above, the master's log below), one mark per question
  the replica asked: a green line where the checksums matched, a red dotted
  one where they did not, numbered in the order asked (each sync point then
  shows the first 4 hex digits of its checksum); ``acked`` marks the
  Commits acknowledged by a majority, given as (VLSN, checksum): a node
  that holds another Commit at that VLSN gets no mark.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from minidb.replication.syncup.syncup import entry_checksum
from minidb.replication.vlsn.range import SYNC_TYPES
from minidb.viz.style import (
    BAD,
    DURABLE,
    INVISIBLE_EDGE,
    INVISIBLE_FILL,
    INVISIBLE_HATCH,
    SMALL,
    TEXT,
    TITLE,
    WIDTH,
    dark,
    fits,
    new_figure,
    title_lines,
    type_colour,
)

ACK = "#ffffff"
SHORT = {"RollbackStart": "RbStart", "RollbackEnd": "RbEnd", "Matchpoint": "Match", "TermStart": "Term"}


@dataclass(frozen=True)
class Entry:
    vlsn: int | None  # None: RollbackStart/End (not replicated)
    type_name: str
    lsn: str
    invisible: bool
    record: str | None  # a record's key=data
    checksum: int | None  # the LSN-neutral item checksum of a replicated entry


@dataclass(frozen=True)
class NodeLog:
    name: str
    role: str  # "master", "replica", "killed", "rejoining", ...
    entries: tuple[Entry, ...]

    def column(self, vlsn: int) -> int | None:
        """Where the visible entry of ``vlsn`` is drawn (None: there is none)."""
        return next((i for i, e in enumerate(self.entries) if e.vlsn == vlsn and not e.invisible), None)


@dataclass(frozen=True)
class Compared:
    """One question of the matchpoint search: its number, the VLSN asked about, whether the checksums matched."""

    number: int
    vlsn: int
    match: bool


def node_log(env, role: str) -> NodeLog:
    """The picture's data, read from a :class:`~minidb.replication.ReplicatedEnvironment`."""
    entries = []
    for e in env.log.scan():
        if e.vlsn is not None or e.type_name in ("RollbackStart", "RollbackEnd"):
            key, data = e.values.get("key"), e.values.get("data")
            record = None if key is None else key.decode(errors="replace") + (
                "=" + data.decode(errors="replace") if isinstance(data, bytes) else "")
            entries.append(Entry(e.vlsn, e.type_name, str(e.lsn), e.header.invisible, record,
                                 entry_checksum(e) if e.vlsn is not None else None))
    return NodeLog(env.node_name, role, tuple(entries))


def _label(entry: Entry, checksums: bool) -> str:
    """VLSN, type, and the record (or, in a search, a sync point's checksum: its first 4 hex digits)."""
    head = f"v{entry.vlsn}" if entry.vlsn is not None else ""
    kind = SHORT.get(entry.type_name, entry.type_name)
    last = f"crc {entry.checksum:08x}"[:8] if checksums and entry.type_name in SYNC_TYPES else entry.record or ""
    return "\n".join(part for part in (head, kind, last) if part)


def draw_logs(logs: Sequence[NodeLog], title: str = "", compared: Sequence[Compared] = (),
              acked: Collection[tuple[int, int]] = ()) -> Figure:
    """One row per node, one box per entry (see the module documentation)."""
    columns = max([len(log.entries) for log in logs] + [6])
    gap = 0.9 if compared else 0.35  # room between the first two rows for the search's marks
    ys = [0.0]
    for _ in logs[1:]:
        ys.append(ys[-1] - 1.0 - (gap if len(ys) == 1 else 0.35))
    height = 1.6 + 0.85 * len(logs) + (0.5 if compared else 0)
    fig = new_figure(WIDTH, height)
    ax = fig.add_axes((0.15, 1.0 / height, 0.83, 1 - 1.55 / height))
    ax.set_xlim(-0.5, columns - 0.5)
    ax.set_ylim(min(ys) - 0.55, 0.55)
    ax.set_axis_off()
    for log, y in zip(logs, ys, strict=True):
        ax.text(-0.03, y, f"{log.name}\n({log.role})", ha="right", va="center", fontsize=TEXT,
                transform=ax.get_yaxis_transform())
        for x, entry in enumerate(log.entries):
            sync = entry.type_name in SYNC_TYPES
            if entry.invisible:
                face, edge, ink = INVISIBLE_FILL, INVISIBLE_EDGE, "#212121"  # dark text, on white: readable
            else:
                face, edge = type_colour(entry.type_name), "black" if sync else "#9e9e9e"
                ink = "white" if dark(face) else "black"
            ax.add_patch(Rectangle((x - 0.45, y - 0.45), 0.9, 0.9, facecolor=face, edgecolor=edge,
                                   linewidth=2.2 if sync else 0.6, hatch=INVISIBLE_HATCH if entry.invisible else None))
            label = _label(entry, bool(compared))
            while label and not fits(ax, label, 0.86, SMALL, 0.86):
                label = label.rsplit("\n", 1)[0] if "\n" in label else ""
            if label:
                ax.text(x, y, label, ha="center", va="center", fontsize=SMALL, color=ink,
                        bbox=dict(boxstyle="square,pad=0.15", facecolor="white", edgecolor="none")
                        if entry.invisible else None)  # the hatch stops at the label's edge
            if entry.type_name == "Commit" and (entry.vlsn, entry.checksum) in acked and not entry.invisible:
                ax.plot([x + 0.3], [y + 0.3], marker="v", color=ACK, markeredgecolor="black", markersize=7)
    if compared and len(logs) >= 2:
        middle = (ys[0] + ys[1]) / 2
        for c in compared:
            x = logs[0].column(c.vlsn)
            if x is None:
                continue
            ax.plot([x, x], [ys[0] - 0.45, ys[1] + 0.45], color=DURABLE if c.match else BAD, linewidth=1.2,
                    linestyle="-" if c.match else ":")
            ax.text(x + 0.08, middle, f"{c.number} {'=' if c.match else '≠'}", ha="left", va="center",
                    fontsize=TEXT, color=DURABLE if c.match else BAD, fontweight="bold")
    kinds = sorted({e.type_name for log in logs for e in log.entries if not e.invisible},
                   key=lambda k: [e.type_name for log in logs for e in log.entries].index(k))
    handles = [Patch(facecolor=type_colour(k), edgecolor="#9e9e9e", label=k) for k in kinds]
    if any(e.invisible for log in logs for e in log.entries):
        handles.append(Patch(facecolor=INVISIBLE_FILL, edgecolor=INVISIBLE_EDGE, hatch=INVISIBLE_HATCH,
                             label="INVISIBLE (rolled back)"))
    handles.append(Patch(facecolor="white", edgecolor="black", linewidth=2.2, label="sync point"))
    if compared:
        handles += [Line2D([], [], color=DURABLE, label="checksums match"),
                    Line2D([], [], color=BAD, linestyle=":", label="no match")]
    if acked:
        handles.append(Line2D([], [], marker="v", color="#616161", markerfacecolor=ACK, linestyle="",
                              label="acked by a majority"))
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 5), fontsize=SMALL, frameon=False)
    if title:
        fig.suptitle(title_lines(title), fontsize=TITLE)
    return fig


__all__ = ["Entry", "NodeLog", "Compared", "node_log", "draw_logs"]
