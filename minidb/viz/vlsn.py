"""Pictures of the VLSN index: buckets and their mappings, the index along the stream, recovery, the trade-off.

- :func:`index_picture` reads an index (without changing it) into plain data:
  the range and, per bucket, its file, span, kept mappings, holes, and
  whether it is closed, flushed (clean) or a ghost;
- :func:`draw_buckets` draws a few buckets VLSN by VLSN, as the JE documentation draws its
  example: one column per VLSN with its LSN, filled where a bucket keeps a
  mapping (a stride offset, or the last mapping), hatched red at holes, and
  a lookup with its LTE and GTE mappings and the scans from them;
- :func:`draw_index` draws a whole index along the VLSN axis: one bar per
  bucket coloured by log file (hatched while not yet flushed, dashed for a
  ghost), ticks at its mappings, and the range's landmarks; its legend
  (:func:`index_legend`) names only the kinds of bucket drawn;
- :func:`draw_recovery_case` draws the JE documentation's recovery log as it ran, and the
  flushed, re-tracked and merged ranges;
- :func:`draw_tradeoff` draws mappings kept and log entries scanned per
  lookup against the stride.
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle
from matplotlib.ticker import MaxNLocator

from minidb.log import LSN
from minidb.replication.cases import WorkedRecoveryCase
from minidb.replication.vlsn.bucket import VLSNBucket
from minidb.replication.vlsn.index import VLSNIndex
from minidb.replication.vlsn.range import VLSNRange
from minidb.viz.style import BAD, FALLBACK, SMALL, TEXT, TITLE, WIDTH, fits, new_figure

STRIDE_COLOUR = "#4e79a7"
LAST_COLOUR = "#f28e2b"
UNKEPT = "#eeeeee"
HOLE = BAD
LTE_COLOUR = "#59a14f"
GTE_COLOUR = "#b07aa1"


def file_colour(file_number: int) -> str:
    return FALLBACK[file_number % len(FALLBACK)]


@dataclass(frozen=True)
class BucketView:
    file_number: int
    first: int
    last: int
    stride: int
    mappings: tuple[tuple[int, LSN], ...]
    holes: tuple[int, ...]
    closed: bool
    flushed: bool
    ghost: bool

    @property
    def size(self) -> int:
        return len(self.mappings)


@dataclass(frozen=True)
class IndexPicture:
    range: VLSNRange
    buckets: tuple[BucketView, ...]

    @property
    def mappings(self) -> int:
        return sum(b.size for b in self.buckets)


def bucket_view(bucket: VLSNBucket) -> BucketView:
    return BucketView(bucket.file_number, bucket.first, bucket.last, bucket.stride, tuple(bucket.mappings()),
                      tuple(bucket.holes()), bucket.closed, not bucket.dirty, bucket.is_ghost)


def index_picture(index: VLSNIndex) -> IndexPicture:
    """The index as plain data (nothing changes)."""
    return IndexPicture(index.range, tuple(bucket_view(b) for b in index.tracker.buckets()))


# -- buckets, VLSN by VLSN -------------------------------------------------------------------------------
def draw_buckets(buckets: list[VLSNBucket], truth: dict[int, LSN] | None = None, *, lookup: int | None = None,
                 decimal: bool = True, title: str | None = None, width: float = WIDTH, height: float = 4.2) -> Figure:
    """The buckets' VLSNs as columns; kept mappings filled; holes hatched; a lookup's LTE and GTE."""
    views = [bucket_view(b) for b in buckets]
    first = min([v.first for v in views] + list(truth or {}))
    last = max([v.last for v in views] + list(truth or {}))
    fig = new_figure(width, height)
    ax = fig.add_axes((0.02, 0.12, 0.96, 0.76))
    columns = range(first, last + 1)

    def where(lsn: LSN) -> str:
        return f"{lsn.file}/{lsn.offset}" if decimal else str(lsn)

    kept: dict[int, tuple[str, LSN]] = {}
    for view in views:
        for vlsn, lsn in view.mappings:
            kind = "last" if vlsn == view.last and (vlsn - view.first) % view.stride else "stride"
            kept[vlsn] = (kind, lsn)
    holes = {h for v in views for h in v.holes}
    for vlsn in columns:
        x = vlsn - first
        kind, lsn = kept.get(vlsn, (None, None))
        face = {"stride": STRIDE_COLOUR, "last": LAST_COLOUR}.get(kind, UNKEPT)
        ax.add_patch(Rectangle((x + 0.05, 1.0), 0.9, 0.9, facecolor=face, edgecolor="#37474f",
                               hatch="xx" if vlsn in holes else None, lw=0.8))
        ax.text(x + 0.5, 1.62, f"VLSN {vlsn}", ha="center", va="center", fontsize=SMALL, weight="bold",
                color="white" if kind else "#37474f")
        label = where(lsn) if lsn is not None else ("hole" if vlsn in holes else "not kept")
        ax.text(x + 0.5, 1.25, label, ha="center", va="center", fontsize=SMALL,
                color="white" if kind else (HOLE if vlsn in holes else "#757575"))
        if truth and vlsn in truth:
            ax.text(x + 0.5, 0.78, f"log: {where(truth[vlsn])}", ha="center", va="center", fontsize=SMALL)
    for i, view in enumerate(views):
        x0, x1 = view.first - first + 0.05, view.last - first + 0.95
        y = 2.05 + 0.5 * (i % 2)
        ax.plot([x0, x0, x1, x1], [y - 0.08, y, y, y - 0.08], color=file_colour(view.file_number), lw=1.5)
        offsets = "[" + ", ".join(str(lsn.offset) if decimal else hex(lsn.offset) for v, lsn in view.mappings
                                  if (v - view.first) % view.stride == 0) + "]"
        state = "ghost" if view.ghost else ("closed" if view.closed else "open")
        ax.text((x0 + x1) / 2, y + 0.07, f"bucket file {view.file_number}, stride {view.stride}: first {view.first}, "
                f"last {view.last}\noffsets {offsets}, {state}", ha="center", va="bottom", fontsize=SMALL)
    if lookup is not None:
        _draw_lookup(ax, views, lookup, first)
    ax.set_xlim(-0.1, len(columns) + 0.1)
    ax.set_ylim(0.0, 3.3)
    ax.axis("off")
    kinds = {kind for kind, _ in kept.values()}
    drawn = [("stride" in kinds, Patch(facecolor=STRIDE_COLOUR, label="kept: on a stride (an offset)")),
             ("last" in kinds, Patch(facecolor=LAST_COLOUR, label="kept: the bucket's last mapping")),
             (any(v not in kept and v not in holes for v in columns),
              Patch(facecolor=UNKEPT, edgecolor="#37474f", label="not kept (scan the log)")),
             (bool(holes & set(columns)),
              Patch(facecolor=UNKEPT, edgecolor="#37474f", hatch="xx", label="hole (out-of-order put)"))]
    handles = [patch for shown, patch in drawn if shown]  # the legend names only what is drawn
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=SMALL, frameon=False)
    if title:
        fig.suptitle(title, x=0.02, ha="left", fontsize=TITLE)
    return fig


def _draw_lookup(ax, views: list[BucketView], vlsn: int, first: int) -> None:
    below = [v for view in views for v, _ in view.mappings if v <= vlsn]
    above = [v for view in views for v, _ in view.mappings if v >= vlsn]
    target = vlsn - first + 0.5
    ax.add_patch(Rectangle((vlsn - first + 0.02, 0.97), 0.96, 0.96, fill=False, edgecolor="black", lw=2.5))
    if below:
        lte = max(below) - first + 0.5
        ax.add_patch(FancyArrowPatch((lte, 0.55), (target, 0.55), arrowstyle="-|>", mutation_scale=10,
                                     color=LTE_COLOUR, lw=1.6, connectionstyle="arc3,rad=0.0"))
        ax.text(lte, 0.4, f"get_lte_lsn({vlsn}): {max(below)}, scan forward", ha="left", va="center", fontsize=SMALL,
                color=LTE_COLOUR)
    if above:
        gte = min(above) - first + 0.5
        ax.add_patch(FancyArrowPatch((gte, 0.2), (target, 0.2), arrowstyle="-|>", mutation_scale=10,
                                     color=GTE_COLOUR, lw=1.6))
        ax.text(gte, 0.07, f"get_gte_lsn({vlsn}): {min(above)}, scan backward", ha="right", va="center",
                fontsize=SMALL, color=GTE_COLOUR)


# -- a whole index -------------------------------------------------------------------------------------------
def index_legend(picture: IndexPicture) -> list[Patch]:
    """The kinds of bucket :func:`draw_index` draws for ``picture``, and only those."""
    real = [view for view in picture.buckets if not view.ghost]
    kinds = [(any(v.flushed for v in real), Patch(facecolor="#bbbbbb", edgecolor="#37474f", label="flushed to _vlsn_index")),
             (any(not v.flushed for v in real),
              Patch(facecolor="#bbbbbb", edgecolor="#37474f", hatch="///", label="not flushed yet")),
             (len(real) < len(picture.buckets),
              Patch(facecolor="white", edgecolor="#37474f", linestyle="--", label="ghost bucket"))]
    return [patch for drawn, patch in kinds if drawn]


def draw_index(picture: IndexPicture, *, title: str | None = None, vlsn_span: tuple[int, int] | None = None,
               width: float = WIDTH, height: float = 3.8) -> Figure:
    """Buckets as bars along the VLSN axis, coloured by file; the range's first, last and landmarks."""
    fig = new_figure(width, height)
    ax = fig.add_axes((0.05, 0.25, 0.92, 0.56))
    r = picture.range
    lo, hi = vlsn_span or ((r.first, r.last) if not r.is_empty else (1, 10))
    ax.set_xlim(lo - 1, hi + 1)
    for i, view in enumerate(picture.buckets):
        y = 0.15 + 0.35 * (i % 2)
        face = "white" if view.ghost else file_colour(view.file_number)
        ax.add_patch(Rectangle((view.first - 0.45, y), view.last - view.first + 0.9, 0.3, facecolor=face,
                               edgecolor="#37474f", lw=1.6 if not view.closed else 0.8,
                               linestyle="--" if view.ghost else "-",
                               hatch=None if view.flushed else "///", alpha=0.9))
        for vlsn, _ in view.mappings:
            ax.plot([vlsn, vlsn], [y + 0.3, y + 0.38], color="black", lw=0.8)
        for vlsn in view.holes:
            ax.plot([vlsn], [y + 0.34], marker="x", color=HOLE, ms=5)
        label = "ghost" if view.ghost else f"file {view.file_number}"
        shown = max(view.first, lo - 1), min(view.last, hi + 1)  # the part of the bar inside the span
        if not fits(ax, label, shown[1] - shown[0] + 0.9):
            label = str(view.file_number) if fits(ax, str(view.file_number), shown[1] - shown[0] + 0.9) else ""
        ax.text(sum(shown) / 2, y + 0.15, label, ha="center", va="center", fontsize=SMALL)
    for level, (name, value, colour) in enumerate((("first", r.first, "#37474f"), ("last", r.last, "#37474f"),
                                                   ("last_sync", r.last_sync, "#1b5e20"),
                                                   ("last_txn_end", r.last_txn_end, "#0d47a1"))):
        if value and lo - 1 <= value <= hi + 1:  # one level of labels each, so that landmarks at one VLSN do not overprint
            ax.axvline(value, color=colour, lw=0.9, ls=":")
            ax.text(value, 0.93 + 0.17 * level, f"{name} {value}", ha="right" if value > (lo + hi) / 2 else "left",
                    va="bottom", fontsize=SMALL, color=colour)
    ax.set_ylim(0, 1.65)
    ax.set_yticks([])
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("VLSN", fontsize=SMALL)
    ax.tick_params(labelsize=SMALL)
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    handles = index_legend(picture)
    if handles:
        fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=SMALL, frameon=False)
    open_buckets = sum(1 for b in picture.buckets if not b.closed)
    heading = title or "the VLSN index"
    fig.suptitle(f"{heading}\nrange {r}; {len(picture.buckets)} buckets ({open_buckets} open), "
                 f"{picture.mappings} mappings; ticks: mappings kept, x: holes", x=0.02, ha="left", fontsize=TEXT)
    return fig


# -- the JE documentation's recovery example ---------------------------------------------------------------------------------
def draw_recovery_case(case: WorkedRecoveryCase, *, width: float = WIDTH, height: float = 3.6) -> Figure:
    """The JE documentation's log in order with the engine's LSNs; the flushed, re-tracked and merged ranges."""
    assert case.merge is not None
    fig = new_figure(width, height)
    ax = fig.add_axes((0.02, 0.52, 0.96, 0.32))
    marks = list(case.marks.items())
    ax.set_xlim(-0.05, len(marks) * 1.25 + 1.2)
    for i, (label, lsn) in enumerate(marks):
        number, text = label.split(" ", 1)
        colour = {"VLSN": "#59a14f", "VLSNIndex": "#f28e2b"}.get(text.split(" ")[0], "#4e79a7")
        ax.add_patch(Rectangle((i * 1.25, 0), 1.15, 1, facecolor=colour, edgecolor="#37474f"))
        words = text.split(" ")
        if not fits(ax, text, 1.05, fontsize=SMALL * 1.1):  # bold: a little wider
            text = " ".join(words[:1]) + "\n" + " ".join(words[1:])
            if not fits(ax, text, 1.05, fontsize=SMALL * 1.1):
                text = "\n".join(words)
        ax.text(i * 1.25 + 0.575, 0.68, f"{number}\n{text}", ha="center", va="center", fontsize=SMALL, color="white",
                weight="bold")
        ax.text(i * 1.25 + 0.575, 0.15, str(lsn), ha="center", va="center", fontsize=SMALL, color="white")
    ax.text(len(marks) * 1.25 + 0.1, 0.5, "crash", ha="left", va="center", fontsize=10, color=BAD, weight="bold")
    ax.set_xlim(-0.05, len(marks) * 1.25 + 1.2)
    ax.set_ylim(-0.05, 1.05)
    ax.axis("off")
    low = fig.add_axes((0.17, 0.08, 0.78, 0.36))
    m = case.merge
    rows = [("flushed at 400", m.flushed_range, "#f28e2b"), ("re-tracked from 200", m.recovered_range, "#59a14f"),
            ("merged", m.merged_range, "#4e79a7")]
    lo = max(1, m.merged_range.last - 9)
    for i, (label, r, colour) in enumerate(rows):
        y = 2 - i
        if not r.is_empty:
            start = max(r.first, lo)
            low.add_patch(Rectangle((start - 0.4, y - 0.3), r.last - start + 0.8, 0.6, facecolor=colour,
                                    edgecolor="#37474f"))
            low.text(r.last + 0.6, y, f"VLSNs {r.first}..{r.last}", ha="left", va="center", fontsize=SMALL)
        low.text(lo - 1.2, y, label, ha="right", va="center", fontsize=SMALL)
    low.set_xlim(lo - 1, m.merged_range.last + 3)
    low.set_ylim(-0.6, 2.6)
    low.set_yticks([])
    low.set_xticks(range(lo, m.merged_range.last + 1))
    low.tick_params(labelsize=SMALL)
    for side in ("left", "right", "top"):
        low.spines[side].set_visible(False)
    fig.suptitle(f"the JE documentation's recovery example in the engine; after recovery the next VLSN is {case.next_vlsn}",
                 x=0.02, ha="left", fontsize=TITLE)
    return fig


# -- the space/time trade-off -----------------------------------------------------------------------------------
def draw_tradeoff(points: list[tuple[int, int, float, int]], current: int, *, total_vlsns: int,
                  title: str | None = None, width: float = WIDTH, height: float = 3.2) -> Figure:
    """``points``: (stride, mappings kept, mean entries scanned, max entries scanned) per stride."""
    fig = new_figure(width, height)
    left = fig.add_axes((0.07, 0.18, 0.38, 0.65))
    right = fig.add_axes((0.57, 0.18, 0.38, 0.65))
    strides = [p[0] for p in points]
    left.plot(strides, [p[1] for p in points], marker="o", color=STRIDE_COLOUR)
    left.axhline(total_vlsns, color="#9e9e9e", ls=":", lw=1)
    left.set_ylim(top=total_vlsns * 1.18)  # room for the line's label
    left.text(strides[-1], total_vlsns, f"every mapping: {total_vlsns}", ha="right", va="bottom", fontsize=SMALL)
    right.plot(strides, [p[2] for p in points], marker="o", color=LTE_COLOUR, label="mean")
    right.plot(strides, [p[3] for p in points], ls="--", color=GTE_COLOUR, label="max")  # a line: its points would
    # sit on the mean's where the two agree
    for p in points:
        if p[0] == current:
            left.plot([p[0]], [p[1]], marker="o", ms=12, mfc="none", mec="black", mew=2)
            right.plot([p[0]], [p[2]], marker="o", ms=12, mfc="none", mec="black", mew=2)
            left.annotate(f"{p[1]} mappings", (p[0], p[1]), textcoords="offset points", xytext=(8, 8), fontsize=SMALL)
            right.annotate(f"{p[2]:.1f} entries", (p[0], p[2]), textcoords="offset points", xytext=(8, 8),
                           fontsize=SMALL)
    for ax, label in ((left, "mappings kept (space)"), (right, "log entries read per lookup (time)")):
        ax.set_xscale("log")
        ax.set_xticks(strides)
        ax.set_xticklabels([str(s) for s in strides])
        ax.minorticks_off()
        ax.set_xlabel("stride", fontsize=SMALL)
        ax.set_ylabel(label, fontsize=SMALL)
        ax.tick_params(labelsize=SMALL)
    right.legend(fontsize=SMALL, frameon=False)
    if title:
        fig.suptitle(title, x=0.02, ha="left", fontsize=TITLE)
    return fig


__all__ = ["BucketView", "IndexPicture", "bucket_view", "index_picture", "draw_buckets", "draw_index", "index_legend",
           "draw_recovery_case", "draw_tradeoff", "file_colour"]
