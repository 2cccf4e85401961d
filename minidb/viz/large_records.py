"""Pictures of one large record: its slot, its index pages and its data pages (chunks).

:func:`large_record_layout` reads a record through the storage manager's
public API into plain data; :func:`draw_large_record` draws it, top to
bottom, one row per level:

- the record's **slot** on its file page: the tag (shape, header and body
  lengths) and what the body area holds: the body (SMALL), the chunks as
  ``(first page, pages)`` (LARGE_0) or an index page number (LARGE_1,
  LARGE_2);
- LARGE_2: the **root** index page; LARGE_1 and LARGE_2: the **index pages**
  listing data pages (the leaves), each with an arrow from the page that
  lists it;
- the **data pages**, labelled with their page number and the bytes they
  hold; under LARGE_0, a bar under each chunk (a run of contiguous pages).

Each kind of page has its colour (:data:`minidb.viz.style.PAGE_KIND_COLOURS`).
The figure has a fixed size; records with more data pages than
:data:`MAX_PAGES` show the first ones and a "+ N more" cell.
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

from minidb.pagestore import RecFlags, RecordId, StorageManager
from minidb.pagestore.pages.rectag import page_runs
from minidb.viz.style import PAGE_KIND_COLOURS, SMALL, TEXT, TITLE, WIDTH, dark, new_figure

MAX_PAGES = 12
HEIGHT = 4.2


@dataclass(frozen=True)
class LargeRecordPicture:
    """What the picture shows of one record."""

    rid: str
    shape: str  # SMALL, LARGE_0, LARGE_1, LARGE_2
    hdr_len: int
    body_len: int
    pages: tuple[int, ...]  # data pages in body order
    page_bytes: tuple[int, ...]  # bytes each data page holds
    chunks: tuple[tuple[int, int], ...]  # LARGE_0: (first page, pages)
    leaves: tuple[tuple[int, tuple[int, ...]], ...]  # index pages listing data pages, with their lists
    root: int | None  # LARGE_2: the root index page


def large_record_layout(sm: StorageManager, rid: RecordId) -> LargeRecordPicture:
    """Read record ``rid`` (in a transaction of its own) into plain data."""
    layout = sm.files.large_layout(rid)
    with sm.transaction(durable=False) as t:
        rec = sm.read_rec(t, rid)
    size = sm.files.chunk_size
    body_len = len(rec.body)
    held = tuple(min(size, body_len - i * size) for i in range(len(layout.pages)))
    start, leaves = 0, []
    if layout.flags in (RecFlags.LARGE_1, RecFlags.LARGE_2):
        fan = len(layout.pages) if layout.flags == RecFlags.LARGE_1 else sm.files.index_fanout
        for leaf in layout.leaves:
            leaves.append((leaf, tuple(layout.pages[start:start + fan])))
            start += fan
    return LargeRecordPicture(str(rid), layout.flags.name, len(rec.hdr), body_len, tuple(layout.pages), held,
                              tuple(page_runs(layout.pages, sm.volume.ext_sz)) if layout.flags == RecFlags.LARGE_0
                              else (), tuple(leaves),
                              layout.root)


def _box(ax, x: float, y: float, w: float, h: float, kind: str, text: str, fontsize: float = SMALL) -> None:
    colour = PAGE_KIND_COLOURS[kind]
    ax.add_patch(Rectangle((x, y), w, h, facecolor=colour, edgecolor="#424242", lw=0.8))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize,
            color="white" if dark(colour) else "black")


def _arrow(ax, start: tuple[float, float], end: tuple[float, float]) -> None:
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=9, color="#424242", lw=0.9,
                                 shrinkA=0, shrinkB=0))


def _slot_text(pic: LargeRecordPicture) -> str:
    tag = f"{pic.rid}  {pic.shape}  header {pic.hdr_len} B, body {pic.body_len} B"
    if pic.shape == "SMALL":
        return f"{tag}\nthe body is in the slot"
    if pic.shape == "LARGE_0":
        shown = " ".join(f"({first}, {count})" for first, count in pic.chunks[:6])
        more = f" + {len(pic.chunks) - 6} more" if len(pic.chunks) > 6 else ""
        return f"{tag}\nchunks (first page, pages): {shown}{more}"
    top = pic.root if pic.shape == "LARGE_2" else pic.leaves[0][0]
    return f"{tag}\n{'root index' if pic.shape == 'LARGE_2' else 'index'} page {top}"


def draw_large_record(pic: LargeRecordPicture, *, title: str | None = None) -> Figure:
    """The record's slot, index pages and data pages (see the module documentation)."""
    fig = new_figure(WIDTH, HEIGHT)
    ax = fig.add_axes((0.01, 0.02, 0.98, 0.86 if title else 0.96))
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 4)
    ax.set_axis_off()
    rows = {"slot": 3.1, "root": 2.25, "leaf": 1.4, "data": 0.3}
    _box(ax, 15, rows["slot"], 70, 0.75, "file", _slot_text(pic), TEXT)
    shown = pic.pages[:MAX_PAGES]
    cells = len(shown) + (1 if len(pic.pages) > MAX_PAGES else 0)
    width = 100 / max(cells, 8)
    left = (100 - width * cells) / 2
    where = {page: left + i * width for i, page in enumerate(shown)}
    for i, page in enumerate(shown):
        _box(ax, where[page] + 0.3, rows["data"], width - 0.6, 0.7, "lgdata", f"{page}\n{pic.page_bytes[i]} B")
    if len(pic.pages) > MAX_PAGES:
        ax.text(left + len(shown) * width + width / 2, rows["data"] + 0.35, f"+ {len(pic.pages) - MAX_PAGES}\nmore",
                ha="center", va="center", fontsize=SMALL)
    slot_bottom = (50, rows["slot"])
    if pic.shape == "LARGE_0":
        for first, count in pic.chunks:
            if first not in where:
                continue
            x0 = where[first]
            x1 = min(x0 + count * width, left + len(shown) * width)
            ax.add_patch(Rectangle((x0 + 0.3, rows["data"] - 0.2), x1 - x0 - 0.6, 0.12,
                                   facecolor=PAGE_KIND_COLOURS["chunk"], edgecolor="none"))
            _arrow(ax, slot_bottom, (x0 + width / 2, rows["data"] + 0.7))
    if pic.leaves:
        leaf_w = 100 / max(len(pic.leaves), 6)
        leaf_left = (100 - leaf_w * len(pic.leaves)) / 2
        for i, (leaf, listed) in enumerate(pic.leaves):
            x = leaf_left + i * leaf_w
            _box(ax, x + 0.5, rows["leaf"], leaf_w - 1, 0.55, "lgindex", f"index {leaf}")
            parent = (50, rows["root"]) if pic.root is not None else slot_bottom
            _arrow(ax, parent, (x + leaf_w / 2, rows["leaf"] + 0.55))
            for page in listed:
                if page in where:
                    _arrow(ax, (x + leaf_w / 2, rows["leaf"]), (where[page] + width / 2, rows["data"] + 0.7))
    if pic.root is not None:
        _box(ax, 38, rows["root"], 24, 0.55, "lgindex", f"root index {pic.root}")
        _arrow(ax, slot_bottom, (50, rows["root"] + 0.55))
    if title:
        fig.suptitle(title, x=0.01, ha="left", fontsize=TITLE)
    return fig
