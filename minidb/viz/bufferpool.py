"""Pictures of the buffer pool: frames around a clock face, and the clock's passes.

:func:`draw_buffer_pool` takes the pool's frames as plain data
(:meth:`~minidb.pagestore.BufferPool.frame_views`), the clock hand and,
optionally, the last victim choice (:class:`~minidb.pagestore.ClockChoice`):

- the frames sit around a circle; each box shows the frame number, the page
  it holds, its pin count and latch mode, its recovery LSN and page LSN;
- a dirty frame is filled red, a clean one white; a pinned frame has a thick
  blue border; a filled dot at its corner is a set reference bit, a hollow
  dot a clear one;
- the arrow in the middle is the clock hand (the next frame it examines);
- to the right, if a choice is given, a table of the sweep: one row per
  pass, one column per frame, what the hand did there (``ref`` cleared the
  reference bit, ``pin`` skipped a pinned frame, ``dirty`` skipped a dirty
  frame in pass 1, ``VICTIM``).
"""

from __future__ import annotations

import math

from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch

from minidb.pagestore import ClockChoice, FrameView
from minidb.viz.style import BAD, SMALL, TITLE, WIDTH, new_figure

DIRTY = "#ffcdd2"
PINNED = "#1565c0"
SHORT = {"pinned": "pin", "ref cleared": "ref", "dirty, skipped": "dirty", "victim": "VICTIM"}


def _frame_text(view: FrameView) -> str:
    if view.pid is None:
        return f"frame {view.index}\n(empty)"
    rec = str(view.rec_lsn) if view.rec_lsn is not None else "-"
    return (f"frame {view.index}\n{view.pid}\npin {view.pin_count} {view.latch}\n"
            f"rec {rec}\nLSN {view.page_lsn}")


def draw_buffer_pool(views: list[FrameView], hand: int, *, title: str | None = None,
                     choice: ClockChoice | None = None, highlight: int | None = None) -> Figure:
    """The pool as a clock face, and the last sweep (see the module documentation)."""
    fig = new_figure(WIDTH, 5.6)
    ax = fig.add_axes((0.0, 0.02, 0.56, 0.88))
    n = len(views)
    radius = 2.3
    centre = (0.0, 0.0)
    ax.add_patch(Circle(centre, radius * 0.55, fill=False, edgecolor="#bdbdbd", lw=0.8, ls="--"))
    for view in views:
        angle = math.pi / 2 - 2 * math.pi * view.index / n
        x, y = radius * math.cos(angle), radius * math.sin(angle)
        edge = BAD if view.index == highlight else (PINNED if view.pin_count else "#616161")
        width = 2.6 if view.index == highlight or view.pin_count else 0.9
        ax.add_patch(FancyBboxPatch((x - 0.8, y - 0.62), 1.6, 1.24, boxstyle="round,pad=0.05",
                                    facecolor=DIRTY if view.dirty else "white", edgecolor=edge, lw=width))
        ax.text(x, y, _frame_text(view), ha="center", va="center", fontsize=SMALL, family="monospace")
        ax.add_patch(Circle((x + 0.72, y + 0.55), 0.08, facecolor="black" if view.referenced else "white",
                            edgecolor="black", lw=0.8))
    angle = math.pi / 2 - 2 * math.pi * hand / n
    ax.add_patch(FancyArrowPatch(centre, (radius * 0.55 * math.cos(angle), radius * 0.55 * math.sin(angle)),
                                 arrowstyle="-|>", mutation_scale=14, color="black", lw=2))
    ax.text(0, -0.35, "hand", ha="center", va="center", fontsize=SMALL)
    ax.set_xlim(-3.2, 3.2)
    ax.set_ylim(-3.05, 3.05)
    ax.set_aspect("equal")
    ax.set_axis_off()
    lines = ["red: dirty   blue border: pinned", "dot: reference bit set (hollow: clear)", ""]
    if choice is not None:
        lines.append("last victim choice:")
        header = "pass " + " ".join(f"{'f' + str(i):>6}" for i in range(n))
        lines.append(header)
        for pass_no in sorted({s.pass_no for s in choice.steps}):
            cells = {s.frame: SHORT[s.action] for s in choice.steps if s.pass_no == pass_no}
            lines.append(f"{pass_no:>4} " + " ".join(f"{cells.get(i, ''):>6}" for i in range(n)))
        victim = "none: every frame is pinned" if choice.victim is None else f"frame {choice.victim}"
        lines += ["", f"victim: {victim}", f"bits cleared: {list(choice.cleared)}", f"hand now at: {choice.hand}"]
    fig.text(0.57, 0.86, "\n".join(lines), va="top", ha="left", fontsize=SMALL, family="monospace")
    if title:
        fig.suptitle(title, x=0.02, ha="left", fontsize=TITLE)
    return fig
