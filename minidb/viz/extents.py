"""Pictures of a volume's extent map: extents as blocks of pages, coloured by store.

:func:`extent_map_layout` reads a mounted :class:`~minidb.pagestore.Volume`
(through its public API) into plain data; :func:`draw_extent_map` draws it:

- one block per extent, ``ext_sz`` cells wide (one cell per page, labelled
  with the page number), ``per_row`` blocks a row, labelled ``x(1.e)``;
- a page *allocated* to a store is filled with the store's colour; a page
  *reserved* for it (its extent is the store's, its bit is clear) is a pale
  tint of that colour; a free extent is white; store 0 (the header, extent
  map and store map) is grey;
- each store's extent list as arrows from an extent to its ``next``, routed
  through the gutters under the rows and the gaps between blocks, never across a
  block (:func:`link_path`);
- extents listed in ``highlight`` (those the last operation touched) get a
  thick red outline.
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle
from matplotlib.path import Path

from minidb.pagestore import Volume
from minidb.viz.style import BAD, SMALL, TITLE, WIDTH, new_figure, text_width, tint

STORE_COLOURS = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#e15759", "#76b7b2", "#edc948", "#9c755f",
                 "#d37295", "#8cd17d"]
STORE0 = "#9e9e9e"


def store_colour(snum: int) -> str:
    return STORE0 if snum == 0 else STORE_COLOURS[(snum - 1) % len(STORE_COLOURS)]


@dataclass(frozen=True)
class ExtentCell:
    ext: int
    owner: int
    pmap: int
    next: int
    free: bool


@dataclass(frozen=True)
class ExtentMap:
    vid: int
    ext_sz: int
    extents: tuple[ExtentCell, ...]
    stores: tuple[tuple[int, int, str], ...]  # (store number, first extent, deleting state)

    def owned_by(self, snum: int) -> list[int]:
        return [c.ext for c in self.extents if c.owner == snum and not c.free]


def extent_map_layout(volume: Volume) -> ExtentMap:
    first_data = volume.header.first_data_ext
    cells = tuple(ExtentCell(ext, link.owner, link.pmap, link.next, link.owner == 0 and ext >= first_data)
                  for ext, link in enumerate(volume.extlinks()))
    stores = tuple((s.store, volume.store_node(s.store).first_ext, volume.store_node(s.store).deleting_state.name)
                   for s in volume.stores())
    return ExtentMap(volume.vid, volume.ext_sz, cells, stores)


def draw_extent_map(layout: ExtentMap, *, title: str | None = None, highlight: tuple[int, ...] = (),
                    per_row: int | None = None, show_links: bool = True) -> Figure:
    """The extent map as a grid (see the module documentation).

    ``per_row`` defaults to as many extents (at most 8) as fit the width with
    every page number readable.
    """
    ext_sz = layout.ext_sz
    gap = 0.7
    block = ext_sz + gap
    if per_row is None:
        cell = text_width(str(len(layout.extents) * ext_sz)) + 4
        per_row = max(1, min(8, int(WIDTH * 0.96 * 72 / (cell * block))))
    rows = -(-len(layout.extents) // per_row)
    handles = _legend_handles(layout)
    ncol = min(4, len(handles))
    legend_rows = -(-len(handles) // ncol)
    bottom = 0.15 + 0.25 * legend_rows
    height = bottom + 0.6 + 0.95 * rows
    fig = new_figure(WIDTH, height)
    ax = fig.add_axes((0.02, bottom / height, 0.96, 1 - (bottom + 0.5) / height))
    place = {}
    for cell in layout.extents:
        row, col = divmod(cell.ext, per_row)
        x0, y0 = col * block, (rows - 1 - row) * 1.6
        place[cell.ext] = (x0, y0)
        colour = store_colour(cell.owner)
        for i in range(ext_sz):
            allocated = bool(cell.pmap >> i & 1)
            face = "white" if cell.free else (colour if allocated else tint(colour, 0.55))
            ax.add_patch(Rectangle((x0 + i, y0), 1, 1, facecolor=face, edgecolor="#757575", lw=0.5))
            if ext_sz <= 8:
                ax.text(x0 + i + 0.5, y0 + 0.5, str(cell.ext * ext_sz + i), ha="center", va="center",
                        fontsize=SMALL, color="white" if allocated and not cell.free else "#424242")
        edge = BAD if cell.ext in highlight else "black"
        ax.add_patch(Rectangle((x0, y0), ext_sz, 1, fill=False, edgecolor=edge,
                               lw=2.2 if cell.ext in highlight else 0.9))
        ax.text(x0 + ext_sz / 2, y0 + 1.18, f"x({layout.vid}.{cell.ext})", ha="center", va="center", fontsize=SMALL)
    if show_links:
        for cell in layout.extents:
            if cell.free or not cell.next or cell.next not in place:
                continue
            ax.add_patch(FancyArrowPatch(path=link_path(place[cell.ext], place[cell.next], ext_sz, gap),
                                         arrowstyle="-|>", mutation_scale=8, color=store_colour(cell.owner),
                                         lw=1.0))
    ax.set_xlim(-0.3, per_row * block)
    ax.set_ylim(-0.6, (rows - 1) * 1.6 + 1.5)
    ax.set_axis_off()
    fig.legend(handles=handles, loc="lower center", ncol=ncol, fontsize=SMALL, frameon=False)
    if title:
        fig.suptitle(title, x=0.02, ha="left", fontsize=TITLE)
    return fig


GUTTER = 0.17  # how far under its row of blocks a link runs (above the next row's labels)


def link_path(start: tuple[float, float], end: tuple[float, float], ext_sz: int, gap: float) -> Path:
    """An extent link that crosses no block: down from the end of the first extent into the gutter under its
    row, along it (and, to another row, down the gap right of the first extent to that row's gutter), then up
    into the start of the next extent."""
    (x0, y0), (x1, y1) = start, end
    points = [(x0 + ext_sz - 0.3, y0), (x0 + ext_sz - 0.3, y0 - GUTTER)]
    if y1 != y0:
        side = x0 + ext_sz + gap / 2
        points += [(side, y0 - GUTTER), (side, y1 - GUTTER)]
    points += [(x1 + 0.3, y1 - GUTTER), (x1 + 0.3, y1)]
    return Path(points)


def _legend_handles(layout: ExtentMap) -> list[Patch]:
    handles = [Patch(facecolor=STORE0, label="s(%d.0) maps" % layout.vid)]
    for snum, _first, deleting in layout.stores:
        label = f"s({layout.vid}.{snum})" + (" deleting" if deleting != "NOT_DELETING" else "")
        handles.append(Patch(facecolor=store_colour(snum), label=label))
    handles.append(Patch(facecolor=tint(STORE_COLOURS[0], 0.55), edgecolor="#757575", label="pale: reserved page"))
    handles.append(Patch(facecolor="white", edgecolor="#757575", label="free extent"))
    return handles
