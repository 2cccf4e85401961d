"""Pictures of a page-store B+tree: its pages as a graphviz tree, and the log entries of a structure modification.

:func:`tree_picture` reads an index into plain data (:class:`TreePicture`:
per page its number, level, keys, children and sibling links), walking from
the root with one shared latch at a time. :func:`tree_graph` draws it with
graphviz: one box per page, the root on top, the leaves on one row in key
order; a page shows ``p<N>``, its level and its keys (an interior page one
field per child, ``-inf`` for the leftmost, whose keys lie below the first
separator); an arrow per child, and between neighbouring leaves the ``next``
link (solid) and the ``prev`` link (dashed), as the pages hold them. Pages
the last step changed are filled yellow; the keys whose key-value locks
transactions hold are filled orange, with the holders and modes. The text is 10 pt and the picture
at most a notebook column wide (``size``), so it is never scaled below 9 pt
while the tree has up to about a dozen leaves.

:func:`draw_smo_log` draws the log entries of one step as a strip of boxes
coloured by entry type (the B+tree's entries are the teal family of
:mod:`minidb.viz.style`), each with its short name and page number. A
*nested top action* (:func:`smo_spans`) is bracketed above its pieces: its
anchor is the transaction's last entry before the first piece (a green
line), and the ``compensate`` that closes it jumps back to the anchor (a red
dashed line below), so a rollback passes over every piece. A span a crash
cut has no ``compensate``: the strip marks the crash after its last piece.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from minidb.pagestore.btree.keyed import KeyedPage
from minidb.pagestore.buffer.latch import SH
from minidb.pagestore.ids import PageId, StoreId
from minidb.viz.style import BAD, SMALL, TITLE, WIDTH, dark, new_figure, title_lines, type_colour

CHANGED = "#fff59d"  # pages the last step changed
LOCKED = "#ffcc80"  # keys whose key-value lock a transaction holds
NEXT_LINK, PREV_LINK = "#1f5fbf", "#8d6e63"
SHORT = {
    "alloc_pages_in_ext": "alloc", "page_format": "fmt", "btree_header": "hdr", "page_insert": "ins",
    "page_remove": "rem", "page_link": "link", "btree_insert": "bt-ins", "btree_remove": "bt-rem",
    "compensate": "comp", "xct_end": "end", "xct_abort": "abort", "chkpt_begin": "ck-b", "chkpt_bf_tab": "ck-pg",
    "chkpt_xct_tab": "ck-xt", "chkpt_end": "ck-e", "free_pages_in_ext": "pfree", "store_operation": "store",
}


@dataclass(frozen=True)
class PagePicture:
    number: int
    level: int
    keys: tuple[Any, ...]  # a leaf's keys; an interior page's separators
    children: tuple[int, ...]  # an interior page's pid0, then each separator's child
    prev: int
    next: int

    @property
    def is_leaf(self) -> bool:
        return self.level == 1


@dataclass(frozen=True)
class TreePicture:
    """An index's pages, root first, level by level, left to right."""

    index: StoreId
    root: int
    pages: tuple[PagePicture, ...]

    @property
    def height(self) -> int:
        return self.pages[0].level

    def page(self, number: int) -> PagePicture:
        return next(p for p in self.pages if p.number == number)

    def leaves(self) -> list[PagePicture]:
        return [p for p in self.pages if p.is_leaf]

    def keys(self) -> list[Any]:
        return [k for leaf in self.leaves() for k in leaf.keys]


def tree_picture(sm: Any, index: StoreId) -> TreePicture:
    """Index ``index`` of storage manager ``sm`` as plain data (run it when no one changes the tree)."""
    ix = sm.indexes.index(index)
    pages: list[PagePicture] = []
    level = [ix.root.page]
    while level:
        below: list[int] = []
        for number in level:
            page = sm.bp.fix(PageId(index.vol, index.store, number), SH)
            try:
                kp = KeyedPage(page)
                if kp.is_leaf:
                    keys = tuple(ix.desc.decode(kp.leaf(i)[0]) for i in range(kp.count))
                    children: tuple[int, ...] = ()
                else:
                    keys = tuple(ix.desc.decode(kp.node(i)[1]) for i in range(kp.count))
                    children = tuple(kp.children())
                pages.append(PagePicture(number, kp.level, keys, children, page.prev, page.next))
            finally:
                sm.bp.unfix(page)
            below.extend(children)
        level = below
    return TreePicture(index, ix.root.page, tuple(pages))


def _html(text: object) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _key_cell(key: Any, lock: str | None) -> str:
    if lock is None:
        return f"<TR><TD>{_html(key)}</TD></TR>"
    return f'<TR><TD BGCOLOR="{LOCKED}">{_html(key)} <I>{_html(lock)}</I></TD></TR>'


def tree_graph(pic: TreePicture, *, title: str | None = None, changed: Sequence[int] = (),
               locks: Mapping[Any, str] | None = None, levels: int | None = None) -> Any:
    """The tree as a graphviz digraph (see the module documentation); ``locks``: key -> who holds its key-value
    lock in which mode (``"T2 SH"``), written in the key's cell, filled orange; ``"EOF"`` is the lock past the
    last key, a cell after the last leaf's keys; ``levels``: only the lowest ``levels`` levels (a bulk load's
    order: the leaves first, then each level above them)."""
    import graphviz

    locks = locks or {}
    pages = [p for p in pic.pages if levels is None or p.level <= levels]
    graph = graphviz.Digraph("btree", graph_attr={
        "rankdir": "TB", "fontsize": "11", "fontname": "Helvetica", "nodesep": "0.3", "ranksep": "0.45",
        "ordering": "out", "size": f"{WIDTH},6", "label": title or "", "labelloc": "t", "labeljust": "l"},
        node_attr={"shape": "plaintext", "fontsize": "10", "fontname": "Helvetica"},
        edge_attr={"arrowsize": "0.6"})
    for p in pages:
        fill = f' BGCOLOR="{CHANGED}"' if p.number in changed else ""
        name = f"p{p.number}" + (" (root)" if p.number == pic.root else "") + f" level {p.level}"
        if p.is_leaf:
            keys = [*p.keys, *(["EOF"] if "EOF" in locks and not p.next else [])]
            cells = "".join(_key_cell(k, locks.get(k)) for k in keys) or "<TR><TD>(empty)</TD></TR>"
            body = f"<TR><TD><B>{_html(name)}</B></TD></TR>{cells}"
        else:
            ports = "".join(f'<TD PORT="c{i}">{_html(k)}</TD>' for i, k in enumerate(("-inf", *p.keys)))
            body = f'<TR><TD COLSPAN="{len(p.keys) + 1}"><B>{_html(name)}</B></TD></TR><TR>{ports}</TR>'
        graph.node(f"p{p.number}", f'<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3"{fill}>'
                                   f"{body}</TABLE>>")
        for i, child in enumerate(p.children):
            graph.edge(f"p{p.number}:c{i}:s", f"p{child}")
    leaves = pic.leaves()
    with graph.subgraph() as row:
        row.attr(rank="same")
        for leaf in leaves:
            row.node(f"p{leaf.number}")
    for leaf in leaves:
        if leaf.next:
            graph.edge(f"p{leaf.number}", f"p{leaf.next}", color=NEXT_LINK, constraint="false", label="next",
                       fontsize="9", fontcolor=NEXT_LINK)
        if leaf.prev:
            graph.edge(f"p{leaf.number}", f"p{leaf.prev}", color=PREV_LINK, style="dashed", constraint="false",
                       label="prev", fontsize="9", fontcolor=PREV_LINK)
    return graph


# -- the log entries of a step -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Span:
    """Rows ``first`` .. ``last`` (indexes into the strip) are one nested top action's pieces."""

    first: int
    last: int
    label: str
    compensate: int | None  # the row of its compensate (None: a crash cut it)


def smo_spans(rows: Sequence[Any], root: PageId | None = None, cut: int = 0) -> list[Span]:
    """The structure modifications among ``rows`` (LogRows): each ``compensate`` whose jump back passes over
    entries that begin with a page allocation and hold no other ``compensate`` (a rollback's do: each follows
    one undo); ``cut`` > 0: the first ``cut`` rows are an SMO a crash cut before its ``compensate``."""
    spans = []
    if cut:
        spans.append(Span(0, cut - 1, "a split, cut by the crash: no compensate", None))
    for i, row in enumerate(rows):
        if row.type_name != "compensate" or row.undo_nxt is None:
            continue
        # the anchor is the transaction's last entry before the SMO (NULL: it had none)
        first = 0 if row.undo_nxt.is_null else next((j for j in range(i) if rows[j].lsn > row.undo_nxt), i)
        pieces = rows[first:i]
        if pieces and pieces[0].type_name in ("create_ext_list", "alloc_pages_in_ext") \
                and not any(r.type_name == "compensate" for r in pieces):  # not a rollback's compensate
            grows = rows[i - 1].type_name == "btree_header" and root is not None and rows[i - 1].page == root
            spans.append(Span(first, i - 1, "the root grows" if grows else "a split", i))
    return spans


PER_LINE = 12
BOX_W, LINE_H = 0.8, 1.0


def draw_smo_log(rows: Sequence[Any], *, title: str | None = None, spans: Sequence[Span] = (),
                 crash_after: int | None = None, width: float = WIDTH) -> Figure:
    """The entries as a strip of boxes, the nested top actions ``spans`` bracketed (see the module documentation);
    ``crash_after``: a crash line after that row (index)."""
    lines = max(1, -(-len(rows) // PER_LINE))
    types = list(dict.fromkeys(r.type_name for r in rows))
    legend_rows = -(-len(types) // 4)
    title = title_lines(title, width) if title else None
    top_pad = 0.3 + (0.22 * (title.count("\n") + 1) if title else 0)
    height = top_pad + lines * 1.15 + 0.28 * legend_rows + 0.1
    fig = new_figure(width, height)
    for n in range(lines):
        line = rows[n * PER_LINE:(n + 1) * PER_LINE]
        first = n * PER_LINE
        ax = fig.add_axes((0.02, (height - top_pad - (n + 1) * 1.15) / height, 0.96, 1.15 / height))
        ax.set_xlim(-0.3, PER_LINE)
        ax.set_ylim(-0.75, 1.05)
        ax.set_axis_off()
        for i, row in enumerate(line, start=first):
            x = i - first
            colour = type_colour(row.type_name)
            ax.add_patch(Rectangle((x + 0.1, 0), BOX_W, 0.55, facecolor=colour, edgecolor="#424242", lw=0.6))
            page = f"p{row.page.page}" if row.page is not None and row.page.store else ""
            ax.text(x + 0.5, 0.275, f"{SHORT.get(row.type_name, row.type_name[:6])}\n{page}".strip(), ha="center",
                    va="center", fontsize=SMALL, color="white" if dark(colour) else "black")
            ax.text(x + 0.5, -0.12, f"{row.lsn.offset:x}", ha="center", va="top", fontsize=SMALL, color="#616161")
        for span in spans:
            lo, hi = max(span.first, first), min(span.last, first + len(line) - 1)
            if lo > hi:
                continue
            ax.plot([lo - first + 0.1, hi - first + 0.9], [0.68, 0.68], color="#1b5e20", lw=1.6)
            if span.first >= first:
                ax.plot([lo - first + 0.03] * 2, [-0.05, 0.75], color="#1b5e20", lw=1.4, ls=":")
                ax.text(lo - first + 0.1, 0.74, f"anchor | {span.label}", ha="left", va="bottom", fontsize=SMALL,
                        color="#1b5e20")
            if span.compensate is not None and first <= span.compensate < first + len(line):
                start, end = max(span.first, first) - first + 0.1, span.compensate - first + 0.5
                ax.plot([end, end, start], [-0.3, -0.55, -0.55], color=BAD, lw=1.2, ls="--")
                ax.annotate("", xy=(start, -0.3), xytext=(start, -0.56),
                            arrowprops={"arrowstyle": "->", "color": BAD, "lw": 1.2})
        if crash_after is not None and first <= crash_after < first + len(line):
            x = crash_after - first + 1
            ax.plot([x, x], [-0.7, 1.0], color=BAD, lw=2)
            ax.text(x + 0.05, 0.95, "crash", ha="left", va="top", fontsize=SMALL, color=BAD)
    handles = [Patch(facecolor=type_colour(t), edgecolor="#424242", label=f"{SHORT.get(t, t)}: {t}") for t in types]
    if handles:
        fig.legend(handles=handles, loc="lower left", ncol=4, fontsize=SMALL, frameon=False,
                   bbox_to_anchor=(0.0, 0.0))
    if title:
        fig.suptitle(title, x=0.02, ha="left", fontsize=TITLE)
    return fig


__all__ = ["PagePicture", "TreePicture", "tree_picture", "tree_graph", "Span", "smo_spans", "draw_smo_log"]
