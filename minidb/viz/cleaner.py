"""Pictures of the log cleaner and the data eraser (``notebooks/11_cleaner_eraser.ipynb``).

Pure drawing functions over the demo's data (:mod:`minidb.viz.cleaner_demo`):

- :func:`draw_utilization`: one bar per log file, its live bytes under its
  obsolete bytes (the utilization tracker's counts); cleaned files hatched,
  deleted files an empty outline, the file being written marked;
- :func:`draw_cleanings`: each cleaned file's entries in log order, live or
  obsolete, and an arrow from each migrated LN to its new place at the end of
  the log;
- :func:`draw_file_timeline`: every file's state after every step (written,
  cleaned and waiting for a CkptEnd, deleted);
- :func:`draw_hexdump`: a region of a log file before and after the eraser,
  the bytes it overwrote highlighted (:func:`draw_crash_hexdump` after a crash);
- :func:`draw_eraser_cycle`: an eraser cycle's plan, each file's six work
  components placed on the cycle's hours by the throttle.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle
from matplotlib.path import Path

from minidb.io import SimDisk
from minidb.log.files import file_name
from minidb.log.header import read_header
from minidb.viz.style import BAD, SMALL, TEXT, TITLE, WIDTH, fits, new_figure, title_lines

LIVE_COLOUR, OBSOLETE_COLOUR, ERASED_COLOUR = "#59a14f", "#bab0ac", "#f28e2b"
STATE_COLOURS = {"written": "#4e79a7", "being written": "#76b7b2", "cleaned, waiting for CkptEnd": "#edc948",
                 "deleted": "#ffffff"}
COMPONENT_NAMES = {1: "1 read (VLSN index)", 2: "2 read, choose entries", 3: "3 touch + fsync (18%)",
                   4: "4 type bytes + fsync (16%)", 5: "5 erased forms (50%)", 6: "6 last fsync (16%)"}
COMPONENT_COLOURS = {1: "#9c755f", 2: "#b07aa1", 3: "#4e79a7", 4: "#e15759", 5: "#f28e2b", 6: "#59a14f"}
HOUR = 3_600_000


def _title(fig: Figure, title: str | None) -> None:
    if title:
        fig.suptitle(title_lines(title), fontsize=TITLE, y=0.98)


def draw_utilization(snapshot, *, title: str | None = None) -> Figure:
    """One bar per file: live bytes (bottom) and obsolete bytes (top); the state of each file."""
    fig = new_figure(WIDTH, 3.6)
    ax = fig.add_axes((0.08, 0.16, 0.66, 0.68))
    files = snapshot.files
    top = max([f.live + f.obsolete for f in files] + [1])
    for f in files:
        if f.state == "deleted":
            ax.add_patch(Rectangle((f.number - 0.35, 0), 0.7, top, fill=False, ls="--", ec="#9e9e9e", lw=0.8))
            continue
        hatch = "//" if f.state.startswith("cleaned") else None
        edge = "#212121" if f.state == "being written" else "#424242"
        ax.bar(f.number, f.live, 0.7, color=LIVE_COLOUR, edgecolor=edge, hatch=hatch, lw=1.6 if edge == "#212121" else 0.8)
        ax.bar(f.number, f.obsolete, 0.7, bottom=f.live, color=OBSOLETE_COLOUR, edgecolor=edge, hatch=hatch,
               lw=1.6 if edge == "#212121" else 0.8)
    ax.set_xlim(0.4, max(f.number for f in files) + 0.6 if files else 1.6)
    ax.set_ylim(0, top * 1.05)
    ax.set_xticks([f.number for f in files])
    ax.tick_params(labelsize=SMALL)
    ax.set_xlabel("log file", fontsize=TEXT)
    ax.set_ylabel("bytes", fontsize=TEXT)
    handles = [Patch(facecolor=LIVE_COLOUR, edgecolor="#424242", label="live bytes"),
               Patch(facecolor=OBSOLETE_COLOUR, edgecolor="#424242", label="obsolete bytes"),
               Patch(facecolor="white", edgecolor="#424242", hatch="//", label="cleaned, waiting"),
               Patch(facecolor="white", edgecolor="#9e9e9e", ls="--", label="deleted"),
               Patch(facecolor="white", edgecolor="#212121", lw=1.6, label="being written")]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=SMALL, frameon=False)
    fig.text(0.76, 0.2, f"total utilization\n{snapshot.total_utilization:.0%} (the cleaner\nworks under 50%)",
             fontsize=SMALL, va="bottom")
    _title(fig, title)
    return fig


def draw_cleanings(cleanings: Sequence, *, title: str | None = None) -> Figure:
    """Each cleaned file's entries (live green, obsolete grey) and, below, each file at the end of the log
    where migrated LNs were written again (the log may have moved on to a new file during the run), an arrow
    from each old place to its new one. An arrow never crosses a box: it runs down into the gap under its
    row, along the right margin to the gap over its target's row, and into the target (straight along the
    gap when the target's row is the next one)."""
    moved = {e.moved_to: e for c in cleanings for e in c.entries if e.moved_to is not None}
    ends = sorted({lsn.file for lsn in moved})
    rows = len(cleanings) + max(len(ends), 1)
    height = 0.7 + 0.62 * rows
    fig = new_figure(WIDTH, height)
    ax = fig.add_axes((0.14, 0.03, 0.84, (height - (0.55 if title else 0.1)) / height))
    width = max([sum(e.size for e in c.entries) for c in cleanings] + [1])
    margin = width * 0.012  # room right of the rows for the arrows' way down
    ax.set_xlim(0, width + margin * (len(moved) + 1))
    ax.set_ylim(-0.1, rows)
    ax.set_axis_off()

    def box(x: float, y: float, entry, colour: str) -> None:
        ax.add_patch(Rectangle((x, y), entry.size, 0.6, facecolor=colour, edgecolor="#424242", lw=0.8))
        label = entry.type_name if entry.type_name != "FileHeader" else "Header"
        if fits(ax, label, entry.size * 0.95, SMALL, 0.6):
            ax.text(x + entry.size / 2, y + 0.3, label, ha="center", va="center", fontsize=SMALL)

    end_row = {number: len(ends) - 1 - k + 0.1 for k, number in enumerate(ends)}  # the y of each end file
    for number, y_end in end_row.items():
        said = f"end of the log\n(file {number})" if number == ends[-1] else f"file {number}\n(the end then)"
        ax.text(-width * 0.01, y_end + 0.3, said, ha="right", va="center", fontsize=SMALL)
        ax.add_patch(Rectangle((0, y_end), width, 0.6, fill=False, ls="--", edgecolor="#9e9e9e", lw=0.8))
    for lsn, entry in moved.items():
        box(min(lsn.offset, width - entry.size), end_row[lsn.file], entry, LIVE_COLOUR)
    arrow = 0
    for row, cleaning in enumerate(cleanings):
        y = rows - 1 - row + 0.1
        ax.text(-width * 0.01, y + 0.3, f"file {cleaning.file_number}", ha="right", va="center", fontsize=SMALL)
        x = 0.0
        for entry in cleaning.entries:
            box(x, y, entry, LIVE_COLOUR if entry.live else OBSOLETE_COLOUR)
            new = entry.moved_to
            if new is not None:
                arrow += 1
                source = x + entry.size / 2
                target = min(new.offset, width - entry.size) + entry.size / 2
                y_target = end_row[new.file] + 0.6
                lane = 0.08 + 0.06 * (arrow % 4)  # arrows in one gap keep apart
                if round(y - 1 - (y_target - 0.6)) == 0:  # the target's row is the next one down
                    points = [(source, y), (source, y - lane), (target, y - lane), (target, y_target)]
                else:
                    side = width + margin * arrow
                    points = [(source, y), (source, y - lane), (side, y - lane), (side, y_target + lane),
                              (target, y_target + lane), (target, y_target)]
                ax.add_patch(FancyArrowPatch(path=Path(points), arrowstyle="-|>", mutation_scale=12, color=BAD,
                                             lw=1.4))
            x += entry.size
    _title(fig, title)
    return fig


def draw_file_timeline(snapshots: Sequence, *, title: str | None = None) -> Figure:
    """Rows: log files; columns: steps; each cell the file's state after that step."""
    numbers = sorted({f.number for s in snapshots for f in s.files})
    fig = new_figure(WIDTH, 1.4 + 0.24 * len(numbers))
    ax = fig.add_axes((0.08, 0.14, 0.62, 0.72))
    for col, snapshot in enumerate(snapshots):
        for f in snapshot.files:
            ax.add_patch(Rectangle((col, f.number - 0.45), 0.9, 0.9, facecolor=STATE_COLOURS[f.state],
                                   edgecolor="#9e9e9e", lw=0.5))
    ax.set_xlim(-0.2, len(snapshots))
    ax.set_ylim(max(numbers, default=1) + 0.6, min(numbers, default=1) - 0.6)
    ax.set_xticks([i + 0.45 for i in range(len(snapshots))], [str(s.step) for s in snapshots])
    ax.set_yticks(numbers)
    ax.tick_params(labelsize=SMALL, length=0)
    ax.set_xlabel("step", fontsize=TEXT)
    ax.set_ylabel("log file", fontsize=TEXT)
    handles = [Patch(facecolor=colour, edgecolor="#9e9e9e", label=state) for state, colour in STATE_COLOURS.items()]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=SMALL, frameon=False)
    _title(fig, title)
    return fig


def hex_rows(data: bytes, start: int, stop: int) -> list[tuple[int, bytes]]:
    """The 16-byte rows of ``data`` covering ``start`` to ``stop``: (offset, bytes)."""
    first = start - start % 16
    return [(offset, data[offset: min(offset + 16, len(data))]) for offset in range(first, min(stop, len(data)), 16)]


def draw_hexdump(panels: Sequence[tuple[str, bytes]], start: int, stop: int, marked: Sequence[tuple[int, int]], *,
                 title: str | None = None) -> Figure:
    """``panels`` (caption, a file's bytes), each the rows from ``start`` to ``stop``; ``marked`` byte
    ranges (from, to) highlighted."""
    rows = len(hex_rows(panels[0][1], start, stop))
    per_panel = rows + 1.6
    height = 0.55 + 0.2 * per_panel * len(panels)
    fig = new_figure(WIDTH, height)
    ax = fig.add_axes((0.01, 0.01, 0.98, (height - 0.5) / height if title else 0.98))
    ax.set_xlim(0, 80)
    ax.set_ylim(per_panel * len(panels), 0)
    ax.set_axis_off()

    def is_marked(offset: int) -> bool:
        return any(a <= offset < b for a, b in marked)

    for p, (caption, data) in enumerate(panels):
        y0 = p * per_panel
        ax.text(0, y0 + 0.5, caption, fontsize=TEXT, va="center", weight="bold")
        for r, (offset, chunk) in enumerate(hex_rows(data, start, stop)):
            y = y0 + 1.5 + r
            ax.text(0, y, f"{offset:04x}", fontsize=SMALL, family="monospace", va="center")
            for i, byte in enumerate(chunk):
                x = 6 + 3 * i + (1 if i >= 8 else 0)
                if is_marked(offset + i):
                    ax.add_patch(Rectangle((x - 0.3, y - 0.5), 2.6, 1.0, facecolor="#ffd54f", lw=0))
                ax.text(x, y, f"{byte:02x}", fontsize=SMALL, family="monospace", va="center")
                char = chr(byte) if 32 <= byte < 127 else "."
                ax.text(57 + 1.3 * i, y, char, fontsize=SMALL, family="monospace", va="center",
                        color="#000000" if is_marked(offset + i) else "#616161")
    _title(fig, title)
    return fig


def entry_extent(data: bytes, offset: int) -> tuple[int, int, int]:
    """(start, end of header, end) of the entry at ``offset`` in a file's bytes."""
    header, problem = read_header(data, offset)
    if header is None:
        raise ValueError(f"no entry at 0x{offset:x}: {problem}")
    return offset, offset + header.size, offset + header.entry_size


def erasure_region(erasure) -> tuple[int, int, int, list[tuple[int, int]]]:
    """The first erased entry: (file, start, stop, highlighted ranges: its checksum, type byte and item, the
    bytes the erased form rewrites)."""
    lsn = erasure.erased[0]
    start, item, end = entry_extent(erasure.before[lsn.file], lsn.offset)
    return lsn.file, start, end, [(start, start + 5), (item, end)]


def draw_erasure(erasure, *, title: str | None = None) -> Figure:
    """The first entry the eraser erased, before and after the cycle."""
    number, start, stop, marked = erasure_region(erasure)
    return draw_hexdump([(f"file {number} before the cycle", erasure.before[number]),
                         (f"file {number} after the cycle", erasure.after[number])], start, stop, marked,
                        title=title)


def draw_crash_hexdump(erasure, image: SimDisk, *, title: str | None = None) -> Figure:
    """The same entry on a disk that crashed during the cycle (and was not reopened yet)."""
    number, start, stop, marked = erasure_region(erasure)
    name = file_name(number)
    data = image.open(name).read_all() if image.exists(name) else b""
    return draw_hexdump([(f"file {number} before the cycle", erasure.before[number]),
                         (f"file {number} on the crashed disk", data)], start, stop, marked, title=title)


def draw_eraser_cycle(erasure, *, title: str | None = None) -> Figure:
    """The throttle's plan: each file's components 1-6 placed on the cycle's hours (earliest ends), as bars
    across the whole width (the legend under them), so that even a short fsync is wide enough to see."""
    files = list(erasure.lengths)
    legend_in = 0.25 * -(-len(COMPONENT_NAMES) // 3)
    height = 1.3 + legend_in + 0.32 * len(files)
    fig = new_figure(WIDTH, height)
    ax = fig.add_axes((0.1, (legend_in + 0.55) / height, 0.87, 0.32 * len(files) / height))
    hours = (erasure.end_ms - erasure.start_ms) / HOUR
    previous = float(erasure.start_ms)
    for planned in erasure.plan:
        x0, x1 = (previous - erasure.start_ms) / HOUR, (planned.end_ms - erasure.start_ms) / HOUR
        ax.barh(planned.file, x1 - x0, left=x0, height=0.7, color=COMPONENT_COLOURS[planned.component],
                edgecolor="white", lw=0.4, label=COMPONENT_NAMES[planned.component])
        previous = planned.end_ms
    ax.set_xlim(0, hours)
    ax.set_ylim(len(files) - 0.4, -0.6)
    ax.set_yticks(range(len(files)), [f"file {n}" for n in files])
    ax.tick_params(labelsize=SMALL)
    ax.set_xlabel("hours into the cycle", fontsize=TEXT)
    handles = [Patch(facecolor=COMPONENT_COLOURS[c], label=name) for c, name in COMPONENT_NAMES.items()]
    fig.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.08, 0.0), ncol=3, fontsize=SMALL,
               frameon=False)
    _title(fig, title)
    return fig


__all__ = ["draw_utilization", "draw_cleanings", "draw_file_timeline", "draw_hexdump", "draw_erasure",
           "draw_crash_hexdump", "draw_eraser_cycle", "hex_rows", "erasure_region"]
