"""Pictures of a slotted page, byte by byte.

:func:`page_layout` reads a :class:`~minidb.pagestore.SlottedPage` into plain
data: one :class:`Region` per stretch of bytes (the header, each record, each
hole left by a freed record, the gap, each slot-table entry, the footer),
plus the slot states and the space accounting of the header.
:func:`draw_page` draws it as a grid, one cell per byte (a 512-byte page is
16 rows of 32 bytes), read left to right, top to bottom:

- the header and footer in grey, each record in its slot's colour, labelled
  with its slot number where it starts;
- holes (bytes of freed records, waiting to be coalesced) hatched pink;
- the gap (contiguous free space) white;
- slot-table entries coloured like their record when in use, orange when the
  slot is *reserved* (freed by a transaction not yet known to be over: only a
  rollback may refill it), white when free; a reserved slot's line in the
  text says how long its record was, since the bytes still reserved are
  ``nrsvd`` (the reserving transaction may have used its own);
- to the right, the space accounting: ``nfree``, ``nrsvd``, the youngest
  reserving transaction and its ``xct_rsvd``, the contiguous gap.
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from minidb.pagestore import SlottedPage
from minidb.pagestore.pages.page import FOOTER_SIZE, HEADER_SIZE, SLOT_SIZE
from minidb.viz.style import FALLBACK, SMALL, TITLE, WIDTH, fits, new_figure

COLOURS = {
    "header": "#9e9e9e",
    "footer": "#616161",
    "hole": "#f8bbd0",
    "gap": "#ffffff",
    "reserved": "#ff9800",
    "free slot": "#eeeeee",
}


# The log's palette without its orange and pink, which mean "reserved" and "hole" here.
SLOT_COLOURS = [c for c in FALLBACK if c not in ("#f28e2b", "#ff9da7")]


def slot_colour(slot: int) -> str:
    return SLOT_COLOURS[slot % len(SLOT_COLOURS)]


@dataclass(frozen=True)
class Region:
    start: int
    length: int
    kind: str  # header | record | hole | gap | slot | footer
    slot: int | None = None
    state: str = ""  # for slot entries: in use | reserved | free


@dataclass(frozen=True)
class PageLayout:
    size: int
    pid: str
    tag: str
    lsn: str
    regions: tuple[Region, ...]
    slots: tuple[tuple[int, str, int, int], ...]  # (slot, state, offset, length)
    nfree: int
    nrsvd: int
    xct_rsvd: int
    rsvd_tid: int
    contiguous: int

    def count(self, kind: str) -> int:
        return sum(r.length for r in self.regions if r.kind == kind)


def page_layout(page: SlottedPage) -> PageLayout:
    """The page as regions of bytes (reads only)."""
    size = page.size
    regions = [Region(0, HEADER_SIZE, "header")]
    slots = []
    records = []
    for slot in range(page.nslots):
        offset, length = page.slot_entry(slot)
        state = page.slot_state(slot)
        slots.append((slot, state, offset, length))
        if offset:
            records.append((offset, length, slot))
    position = HEADER_SIZE
    for offset, length, slot in sorted(records):
        if offset > position:
            regions.append(Region(position, offset - position, "hole"))
        regions.append(Region(offset, length, "record", slot))
        position = offset + length
    if page.record_end > position:
        regions.append(Region(position, page.record_end - position, "hole"))
    table = page.slot_table_start
    regions.append(Region(page.record_end, table - page.record_end, "gap"))
    for slot, state, _, _ in reversed(slots):
        regions.append(Region(size - FOOTER_SIZE - SLOT_SIZE * (slot + 1), SLOT_SIZE, "slot", slot, state))
    regions.append(Region(size - FOOTER_SIZE, FOOTER_SIZE, "footer"))
    space = page.space_view()
    return PageLayout(size, str(page.pid), page.tag.name, str(page.lsn), tuple(r for r in regions if r.length),
                      tuple(slots), space.nfree, space.nrsvd, space.xct_rsvd, space.rsvd_tid, space.contiguous)


def _region_colour(region: Region) -> str:
    if region.kind == "record":
        return slot_colour(region.slot or 0)
    if region.kind == "slot":
        if region.state == "in use":
            return slot_colour(region.slot or 0)
        return COLOURS["reserved"] if region.state == "reserved" else COLOURS["free slot"]
    return COLOURS[region.kind]


def draw_page(layout: PageLayout, *, title: str | None = None, columns: int = 32) -> Figure:
    """One cell per byte, ``columns`` bytes a row (see the module documentation)."""
    rows = -(-layout.size // columns)
    grid = [[(1.0, 1.0, 1.0)] * columns for _ in range(rows)]
    for region in layout.regions:
        rgb = to_rgb(_region_colour(region))
        for byte in range(region.start, region.start + region.length):
            grid[byte // columns][byte % columns] = rgb
    fig = new_figure(WIDTH, 4.6)
    ax = fig.add_axes((0.08, 0.17, 0.56, 0.73))
    ax.imshow(grid, interpolation="nearest", aspect="equal", extent=(0, columns, rows, 0))
    for x in range(0, columns + 1, 4):  # faint lines every 4 bytes and every row: count bytes by eye
        ax.axvline(x, color="#bdbdbd", lw=0.3)
    for y in range(rows + 1):
        ax.axhline(y, color="#bdbdbd", lw=0.3)
    for region in layout.regions:
        if region.kind == "hole":
            for byte in range(region.start, region.start + region.length):
                ax.add_patch(Rectangle((byte % columns, byte // columns), 1, 1, fill=False, hatch="////",
                                       edgecolor="#c2185b", lw=0))
        label = None
        if region.kind == "record":
            label = f"slot {region.slot}"
        elif region.kind == "header":
            label = "header"
        elif region.kind == "slot" and region.state == "reserved":
            label = "R"
        if label:
            start = region.start
            room = min(region.length, columns - start % columns)
            if not fits(ax, label, room - 0.2) and region.length - room >= columns / 4:
                start += room  # a record that wraps: label it where its next row begins
                room = min(region.length - room, columns)
            if not fits(ax, label, room - 0.2):
                label = label.removeprefix("slot ")
            ax.text(start % columns + 0.1, start // columns + 0.55, label, fontsize=SMALL,
                    va="center", ha="left", color="black")
    ax.set_xticks(range(0, columns + 1, 8))
    ax.set_yticks(range(0, rows + 1, 2))
    ax.set_yticklabels([str(r * columns) for r in range(0, rows + 1, 2)], fontsize=SMALL)
    ax.tick_params(labelsize=SMALL)
    ax.set_xlabel("byte in row", fontsize=SMALL)
    ax.set_ylabel("row offset", fontsize=SMALL)
    text = [
        f"{layout.pid}  {layout.tag}",
        f"page LSN {layout.lsn}",
        "",
        f"slots: {len(layout.slots)}",
    ]
    for slot, state, offset, length in layout.slots:
        # A reserved slot keeps its freed record's length, but the bytes may have been used since by
        # the reserving transaction itself: what is still reserved is nrsvd below, not this length.
        where = f"@{offset} +{length}" if offset else (f"(was {length} B)" if length else "")
        text.append(f"  {slot}: {state} {where}")
    text += [
        "",
        f"nfree     {layout.nfree:4d}  (gap + holes)",
        f"  gap     {layout.contiguous:4d}",
        f"  holes   {layout.count('hole'):4d}",
        f"nrsvd     {layout.nrsvd:4d}",
        f"rsvd_tid  {layout.rsvd_tid:4d}",
        f"xct_rsvd  {layout.xct_rsvd:4d}",
    ]
    fig.text(0.66, 0.9, "\n".join(text), va="top", ha="left", fontsize=SMALL, family="monospace")
    handles = [Patch(facecolor=COLOURS[k], edgecolor="#9e9e9e", label=k, hatch="////" if k == "hole" else None)
               for k in ("header", "hole", "gap", "reserved", "footer")]
    fig.legend(handles=handles, loc="lower left", ncol=5, fontsize=SMALL, frameon=False, bbox_to_anchor=(0.07, 0.0))
    if title:
        fig.suptitle(title, x=0.02, ha="left", fontsize=TITLE)
    return fig
