"""Pictures of the shared log: files as strips, entries as coloured boxes.

:func:`log_layout` reads a log (read-only, from any disk) into plain data:
for each file, its entries (offset, size, type, flags, prev offset), the
bad part at its end if any (torn, unwritten, corrupt), and, on a simulated
disk, how much of it is durable. :func:`draw_log` draws that data:

- one horizontal strip per file, bytes to scale, each entry a box coloured
  by its type and labelled with its offset;
- provisional entries hatched (``//`` YES, ``..`` BEFORE_CKPT_END),
  replicated entries outlined in black, invisible entries faded;
- the ``prev`` chain as arcs from each entry back to the one before it;
- a red hatched box for a bad tail, labelled with its verdict;
- a green line where the durable (fsynced) bytes end.
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle

from minidb.io import Disk, SimDisk
from minidb.log import file_name, inspect_file, log_file_numbers, read_file, type_by_code
from minidb.viz.style import BAD, DURABLE, SMALL, TITLE, WIDTH, dark, fits, new_figure, type_colour


@dataclass(frozen=True)
class EntryBox:
    file: int
    offset: int
    size: int
    type_name: str
    prev: int
    provisional: str  # NO | YES | BEFORE_CKPT_END
    replicated: bool
    invisible: bool
    vlsn: int | None

    @property
    def lsn(self) -> str:
        return f"0x{self.file:x}/0x{self.offset:x}"


@dataclass(frozen=True)
class FileStrip:
    number: int
    size: int
    entries: tuple[EntryBox, ...]
    bad_offset: int | None = None
    bad_kind: str | None = None  # torn | unwritten | foreign | corrupt
    problem: str | None = None
    durable_size: int | None = None  # only known on a simulated disk

    @property
    def name(self) -> str:
        return file_name(self.number)


def _type_name(code: int) -> str:
    if code == 0xFF:
        return "Erased"
    entry_type = type_by_code(code)
    return entry_type.name if entry_type else f"0x{code:02x}"


def log_layout(disk: Disk) -> list[FileStrip]:
    """Every log file of ``disk`` as a :class:`FileStrip` (reads, never writes)."""
    strips = []
    for number in log_file_numbers(disk):
        buf = read_file(disk, number)
        seen = inspect_file(buf, number)
        boxes = tuple(
            EntryBox(number, offset, h.entry_size, _type_name(h.type_code), h.prev_offset,
                     h.provisional.name, h.replicated, h.invisible, h.vlsn)
            for offset, h in seen.entries
        )
        durable = None
        if isinstance(disk, SimDisk):
            durable = len(disk.durable_bytes(file_name(number)))
        strips.append(FileStrip(number, seen.size, boxes, seen.bad_offset,
                                seen.verdict.kind if seen.verdict else None, seen.problem, durable))
    return strips


def draw_log(
    strips: list[FileStrip],
    *,
    title: str | None = None,
    scale: int | None = None,
    show_chain: bool = True,
    highlight: str | None = None,
    width: float = WIDTH,
) -> Figure:
    """Draw files as strips (see the module documentation).

    ``scale`` is the byte width of a strip (default: the largest file);
    ``highlight`` is an LSN string (``0x1/0x26``) whose entry gets a thick
    red outline.
    """
    rows = max(1, len(strips))
    height = 1.6 + 1.2 * rows
    fig = new_figure(width, height)
    ax = fig.add_axes((0.13, 1.05 / height, 0.85, 1 - 1.5 / height))
    span = scale or max([s.size for s in strips] + [1])
    ax.set_xlim(0, span * 1.01)
    ax.set_ylim(-0.45, rows - 1 + 0.95)
    seen_types: dict[str, str] = {}
    for row, strip in enumerate(strips):
        y = rows - 1 - row
        ax.add_patch(Rectangle((0, y), span, 0.5, facecolor="#f5f5f5", edgecolor="#bdbdbd", lw=0.8))
        for box in strip.entries:
            colour = type_colour(box.type_name)
            seen_types[box.type_name] = colour
            hatch = {"YES": "//", "BEFORE_CKPT_END": ".."}.get(box.provisional)
            edge = "#c62828" if highlight == box.lsn else ("black" if box.replicated else "white")
            ax.add_patch(Rectangle(
                (box.offset, y), box.size, 0.5, facecolor=colour, edgecolor=edge,
                lw=2.5 if highlight == box.lsn else (1.5 if box.replicated else 0.6),
                hatch=hatch, alpha=0.35 if box.invisible else 1.0,
            ))
            label = f"0x{box.offset:x}"
            if fits(ax, label, box.size * 0.92):
                ax.text(box.offset + box.size / 2, y + 0.25, label, ha="center", va="center", fontsize=SMALL,
                        color="white" if dark(colour) else "black")
            if show_chain and box.offset > 0:
                ax.add_patch(FancyArrowPatch(
                    (box.offset + 2, y + 0.52), (box.prev + 2, y + 0.52),
                    connectionstyle="arc3,rad=0.45", arrowstyle="-|>", mutation_scale=7,
                    color="#546e7a", lw=0.7,
                ))
        if strip.bad_offset is not None:
            bad_len = strip.size - strip.bad_offset
            ax.add_patch(Rectangle((strip.bad_offset, y), max(bad_len, span * 0.004), 0.5,
                                   facecolor="white", edgecolor=BAD, hatch="xx", lw=1.2))
            ax.text(strip.bad_offset + bad_len / 2, y - 0.14, f"{strip.bad_kind} ({bad_len} B)",
                    ha="center", va="center", fontsize=SMALL, color=BAD)
        if strip.durable_size is not None:
            ax.plot([strip.durable_size] * 2, [y - 0.08, y + 0.58], color=DURABLE, lw=1.6)
            ax.text(strip.durable_size, y - 0.32, "fsynced", ha="center", va="center",
                    fontsize=SMALL, color=DURABLE)
        ax.text(-span * 0.01, y + 0.25, f"{strip.name}\n{strip.size} B", ha="right",
                va="center", fontsize=SMALL)
    ax.set_yticks([])
    ax.set_xlabel("byte offset in file", fontsize=SMALL)
    ax.tick_params(labelsize=SMALL)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    handles = [Patch(facecolor=c, label=n) for n, c in seen_types.items()]
    if handles:
        fig.legend(handles=handles, loc="lower center", ncol=min(6, len(handles)), fontsize=SMALL,
                   frameon=False)
    if title:
        fig.suptitle(title, x=0.02, ha="left", fontsize=TITLE)
    return fig
