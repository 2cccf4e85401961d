"""Pictures of a replication group's stream: what each node holds, by VLSN, and what was acknowledged.

- :func:`stream_picture` reads a group (without changing it) into plain data:
  the master's stream (each VLSN's entry type), and per replica the last VLSN
  it holds, the last Commit it acknowledged, what is in flight to it and
  whether it is cut off;
- :func:`draw_stream` draws it along the VLSN axis: one row per node, one
  cell per VLSN coloured by entry type where the node holds it (empty where
  it does not yet), a white mark on each Commit the master has counted an
  ack for from that replica, and the lag (VLSNs behind the master) at the
  row's end.
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import MaxNLocator

from minidb.viz.style import BAD, SMALL, TEXT, TITLE, WIDTH, new_figure, title_lines, type_colour

MISSING = "#f5f5f5"
ACK = "#ffffff"


@dataclass(frozen=True)
class NodeRow:
    name: str
    role: str  # "master" or "replica"
    last: int  # the last VLSN it holds
    acked: int  # the last Commit VLSN the master counted an ack for (replicas)
    in_flight: int  # frames on their way to it
    cut_off: bool


@dataclass(frozen=True)
class StreamPicture:
    types: tuple[str, ...]  # the master's entry type of VLSN 1, 2, ...
    rows: tuple[NodeRow, ...]

    @property
    def last(self) -> int:
        return len(self.types)


def stream_picture(group) -> StreamPicture:
    """The picture's data, read from an :class:`~minidb.replication.group.driver.InMemoryGroup`."""
    master = group.master
    types = tuple(master.vlsn_index.find(v).type_name for v in range(1, master.range.last + 1))
    rows = [NodeRow(master.node_name, "master", master.range.last, 0, 0, False)]
    for name, env in sorted(group.envs.items()):
        if env is master:
            continue
        feeder = group.feeders.get(name)
        rows.append(NodeRow(name, "replica", env.range.last, feeder.acked_vlsn if feeder else 0,
                            len(group.net.pending(dst=name)), group.net.partitioned(master.node_name, name)))
    return StreamPicture(types, tuple(rows))


def draw_stream(picture: StreamPicture, title: str = "") -> Figure:
    """One row per node, one cell per VLSN (see the module documentation)."""
    count = max(picture.last, 1)
    height = 1.0 + 0.55 * len(picture.rows)
    fig = new_figure(WIDTH, height)
    ax = fig.add_axes((0.15, 0.5 / height + 0.12, 0.68, 1 - 1.1 / height - 0.12))
    for y, row in enumerate(reversed(picture.rows)):
        for vlsn in range(1, count + 1):
            held = vlsn <= row.last and vlsn <= picture.last
            colour = type_colour(picture.types[vlsn - 1]) if held else MISSING
            ax.add_patch(Rectangle((vlsn - 0.5, y - 0.35), 1, 0.7, facecolor=colour, edgecolor="#9e9e9e",
                                   linewidth=0.5))
            if row.role == "replica" and vlsn <= row.acked and picture.types[vlsn - 1] == "Commit":
                ax.plot([vlsn], [y], marker="v", color=ACK, markersize=7)
        label = f"{row.name}" + (" (master)" if row.role == "master" else "")
        ax.text(-0.01, y, label, ha="right", va="center", fontsize=TEXT, transform=ax.get_yaxis_transform())
        if row.role == "replica":
            lag = picture.last - row.last
            trouble = ", ".join((["cut off"] if row.cut_off else [])
                                + ([f"{row.in_flight} in flight"] if row.in_flight else []))
            note = f"lag {lag}" + (f"\n{trouble}" if trouble else "")
            ax.text(1.01, y, note, ha="left", va="center", fontsize=SMALL, color=BAD if row.cut_off else "black",
                    transform=ax.get_yaxis_transform())
    ax.set_xlim(0.5, count + 0.5)
    ax.set_ylim(-0.6, len(picture.rows) - 0.4)
    ax.set_yticks([])
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("VLSN", fontsize=SMALL)
    ax.tick_params(labelsize=SMALL)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    kinds = sorted(set(picture.types), key=picture.types.index)
    handles = [Patch(facecolor=type_colour(k), edgecolor="#9e9e9e", label=k) for k in kinds]
    handles.append(Patch(facecolor=MISSING, edgecolor="#9e9e9e", label="not held yet"))
    handles.append(Line2D([], [], marker="v", color="#616161", markerfacecolor=ACK, linestyle="",
                          label="ack counted by the master"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.45 if len(picture.rows) < 4 else -0.3),
              ncol=len(handles), fontsize=SMALL, frameon=False)
    if title:
        fig.suptitle(title_lines(title), fontsize=TITLE)
    return fig


__all__ = ["NodeRow", "StreamPicture", "stream_picture", "draw_stream"]
