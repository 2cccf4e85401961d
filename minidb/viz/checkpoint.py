"""Pictures of the checkpointer: the dirty map by level, the ten steps, the seed's cases.

- :func:`draw_dirty_map` — one row per level (the mapping tree's levels last,
  as JE numbers them above all others), one box per IN in the map, and the
  highest flush level of every database;
- :func:`draw_checkpoint` — the ten steps as a row of numbered boxes (those
  done filled), and under step 5 every IN the checkpoint logged, in order,
  coloured by its Provisional value (YES, BEFORE_CKPT_END, NO);
- :func:`draw_seed_case` — one of the seed's BEFORE_CKPT_END cases as it ran
  in the engine: its entries in log order with their real LSNs, which
  version of BIN-A recovery put in the tree, and whether the old version's
  obsolete count was right.
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle

from minidb.logstore.cases import SeedCase
from minidb.logstore.checkpointer import STEP_NAMES, CheckpointResult
from minidb.logstore.dirty_map import MAPPING_RANK, DirtyMapSnapshot
from minidb.logstore.tree.in_node import node_kind
from minidb.viz.logstore import OBSOLETE, colour
from minidb.viz.style import BAD, new_figure

PROVISIONAL_COLOURS = {"YES": "#fdd49e", "BEFORE_CKPT_END": "#fc8d59", "NO": "#b30000"}


def draw_dirty_map(snapshot: DirtyMapSnapshot, db_names: dict[int, str], *, title: str | None = None,
                   width: float = 10.0, height: float = 3.6) -> Figure:
    fig = new_figure(width, height)
    ax = fig.add_axes((0.16, 0.08, 0.6, 0.78))
    rows = list(snapshot.levels)
    for row, (rank, level, refs) in enumerate(rows):
        y = len(rows) - 1 - row
        label = f"{'mapping tree ' if rank == MAPPING_RANK else ''}level {level}"
        ax.text(-0.02, y + 0.4, label, ha="right", va="center", fontsize=8)
        for i, ref in enumerate(refs):
            kind = node_kind(ref.is_bin)
            ax.add_patch(Rectangle((i * 1.1, y), 1, 0.8, facecolor=colour(kind), edgecolor="#37474f", lw=0.8))
            ax.text(i * 1.1 + 0.5, y + 0.4, f"{ref.describe()}\n{db_names.get(ref.db_id, ref.db_id)}",
                    ha="center", va="center", fontsize=6.5)
    widest = max([len(refs) for _, _, refs in rows] + [7])
    ax.set_xlim(0, widest * 1.1)
    ax.set_ylim(-0.2, max(len(rows), 1))
    ax.axis("off")
    if not rows:
        ax.text(0.5, 0.5, "no dirty INs", ha="center", va="center", fontsize=9)
    side = fig.add_axes((0.78, 0.08, 0.2, 0.78))
    side.axis("off")
    lines = [f"{db_names.get(d, d)}: {lvl}" for d, lvl in snapshot.highest_flush_levels]
    side.text(0, 1, "highest flush level\n" + "\n".join(lines), va="top", fontsize=8)
    side.text(0, 0, f"state: {snapshot.state.name}", va="bottom", fontsize=8)
    if title:
        fig.suptitle(title, x=0.02, ha="left", fontsize=10)
    return fig


def draw_checkpoint(result: CheckpointResult, *, current_step: int | None = None, title: str | None = None,
                    width: float = 11.0, height: float = 3.8) -> Figure:
    """The ten steps (done ones filled, up to ``current_step``) and the INs step 5 logged."""
    done_up_to = 10 if current_step is None else current_step
    fig = new_figure(width, height)
    ax = fig.add_axes((0.02, 0.55, 0.96, 0.33))
    for step in range(1, 11):
        x = (step - 1) * 1.0
        filled = step <= done_up_to
        ax.add_patch(Rectangle((x, 0), 0.92, 1, facecolor="#4e79a7" if filled else "white", edgecolor="#4e79a7"))
        ax.text(x + 0.46, 0.62, str(step), ha="center", va="center", fontsize=10, weight="bold",
                color="white" if filled else "#4e79a7")
        ax.text(x + 0.46, 0.25, STEP_NAMES[step].replace(": ", ":\n").replace(" the ", "\nthe "), ha="center",
                va="center", fontsize=5.5, color="white" if filled else "#37474f")
    ax.set_xlim(-0.05, 10)
    ax.set_ylim(-0.05, 1.05)
    ax.axis("off")
    low = fig.add_axes((0.02, 0.1, 0.96, 0.38))
    logged = result.logged if done_up_to >= 5 else []
    for i, item in enumerate(logged):
        low.add_patch(Rectangle((i, 0), 0.9, 1, facecolor=PROVISIONAL_COLOURS[item.provisional.name],
                                edgecolor="#37474f", lw=0.6))
        low.text(i + 0.45, 0.5, f"{node_kind(item.is_bin)} {item.node_id}\nlevel {item.level}\n{item.db_name}", ha="center",
                 va="center", fontsize=5, color="white" if item.provisional.name == "NO" else "black")
    low.set_xlim(-0.05, max(len(logged), 12))
    low.set_ylim(-0.05, 1.05)
    low.axis("off")
    handles = [Patch(facecolor=c, edgecolor="#37474f", label=f"Provisional.{n}") for n, c in PROVISIONAL_COLOURS.items()]
    fig.legend(handles=handles, loc="lower right", ncol=3, fontsize=7, frameon=False)
    heading = title or (f"checkpoint {result.checkpoint_id}: CkptStart {result.ckpt_start_lsn}, "
                        f"CkptEnd {result.ckpt_end_lsn}; INs logged by step 5, in order")
    fig.suptitle(heading, x=0.02, ha="left", fontsize=9)
    return fig


def draw_seed_case(case: SeedCase, *, width: float = 11.0, height: float = 2.8) -> Figure:
    """The case's entries in log order; the version of BIN-A the recovered tree uses; the verdict."""
    return draw_seed_cases([case], width=width, height=height)


def draw_seed_cases(cases: list[SeedCase], *, width: float = 11.0, height: float | None = None) -> Figure:
    """Several seed cases, one strip each, top to bottom."""
    rows = len(cases)
    fig = new_figure(width, height or 2.8 * rows)
    for row, case in enumerate(cases):
        top = 1 - row / rows
        _draw_case(fig, case, top, 1 / rows)
    return fig


def _draw_case(fig: Figure, case: SeedCase, top: float, band: float) -> None:
    ax = fig.add_axes((0.02, top - band * 0.72, 0.96, band * 0.5))
    names = list(case.marks)
    a_old = case.marks["050 BIN-A"]
    for i, name in enumerate(names):
        lsn = case.marks[name]
        kind = name.split(" ", 1)[1]
        type_name = {"BIN-A": "IN" if case.a_level > 1 else "BIN", "IN-B": "IN"}.get(kind, kind)
        fill = OBSOLETE if (lsn == a_old and case.old_a_counted_obsolete) else colour(type_name)
        hatch = {"YES": "//", "BEFORE_CKPT_END": ".."}.get(case.a_provisional.name) if name == "200 BIN-A" else None
        in_use = lsn == case.active_a
        wrong = in_use and lsn == a_old and case.old_a_counted_obsolete
        ax.add_patch(Rectangle((i * 1.2, 0), 1, 1, facecolor=fill, hatch=hatch,
                               edgecolor=BAD if wrong else ("#1b5e20" if in_use else "#37474f"),
                               lw=3 if in_use else 0.8))
        ax.text(i * 1.2 + 0.5, 0.62, name, ha="center", va="center", fontsize=7.5, weight="bold")
        ax.text(i * 1.2 + 0.5, 0.3, str(lsn), ha="center", va="center", fontsize=6.5)
        if in_use:
            ax.add_patch(FancyArrowPatch((i * 1.2 + 0.5, 1.45), (i * 1.2 + 0.5, 1.05), arrowstyle="-|>",
                                         mutation_scale=9, color="#1b5e20"))
            ax.text(i * 1.2 + 0.5, 1.55, "the recovered tree uses this A", ha="center", va="bottom", fontsize=7,
                    color="#1b5e20")
    ax.text(len(names) * 1.2, 0.5, "crash and recover", ha="left", va="center", fontsize=8, style="italic")
    ax.set_xlim(-0.1, len(names) * 1.2 + 2.2)
    ax.set_ylim(-0.1, 2.0)
    ax.axis("off")
    verdict = ("correct: BIN-A at 050 is obsolete and not in use" if case.correct and case.old_a_counted_obsolete
               else "correct: BIN-A at 050 is in use and not counted obsolete" if case.correct
               else "INCORRECT: BIN-A at 050 is in use, yet counted obsolete")
    fig.text(0.02, top - band * 0.92, f"A logged at 200 with Provisional.{case.a_provisional.name}. {verdict}.",
             fontsize=9, color="#1b5e20" if case.correct else BAD)
    bug = " (evictor with the bug option)" if case.bug else ""
    fig.text(0.02, top - band * 0.1, f"seed case {case.number}{bug}", fontsize=10, va="top")


__all__ = ["draw_dirty_map", "draw_checkpoint", "draw_seed_case", "draw_seed_cases", "PROVISIONAL_COLOURS"]
