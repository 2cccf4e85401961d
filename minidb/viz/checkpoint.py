"""Pictures of the checkpointer: the dirty map by level, the ten steps, the JE documentation's cases.

- :func:`draw_dirty_map` — one row per level (the mapping tree's levels last,
  as JE numbers them above all others), one box per IN in the map, and the
  highest flush level of every database;
- :func:`draw_checkpoint` — the ten steps as a row of numbered boxes (those
  done filled), and under step 5 every IN the checkpoint logged, in order,
  coloured by its Provisional value (YES, BEFORE_CKPT_END, NO);
- :func:`draw_worked_case` — one of the JE documentation's BEFORE_CKPT_END cases as it ran
  in the engine: its entries in log order with their real LSNs, which
  version of A recovery put in the tree, and whether the old version's
  obsolete count was right. The documentation calls A "BIN-A"; in cases 1
  and 2 the engine's A is a level-2 IN (only middle levels are logged
  BEFORE_CKPT_END), so the strips and :func:`case_summary` name A by what it
  is (``IN-A`` or ``BIN-A``) and fill it with that node type's colour, as
  the legend says.
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle

from minidb.log import LSN
from minidb.logstore.cases import WorkedCase
from minidb.logstore.checkpoint.records import MAPPING_RANK, STEP_NAMES, CheckpointResult, DirtyMapSnapshot
from minidb.logstore.tree.in_node import node_kind
from minidb.viz.logstore import OBSOLETE, colour
from minidb.viz.style import BAD, SMALL, TEXT, TITLE, WIDTH, fits, new_figure, text_width, tint, title_lines

CASE_HEIGHT = 2.3  # inches per worked case: heading, arrow, boxes, their names, two lines of verdict
PROVISIONAL_COLOURS = {"YES": "#fdd49e", "BEFORE_CKPT_END": "#fc8d59", "NO": "#b30000"}


def _grid(count: int, box_w: float, width_pt: float) -> int:
    """How many boxes ``box_w`` points wide (and a gap) fit in a row ``width_pt`` wide."""
    return max(1, min(count, int(width_pt // (box_w * 1.1))))


def draw_dirty_map(snapshot: DirtyMapSnapshot, db_names: dict[int, str], *, title: str | None = None,
                   width: float = WIDTH, height: float | None = None) -> Figure:
    """One row per level (wrapped when the level's INs do not fit), and each database's highest flush level."""
    rows = list(snapshot.levels)
    labels = [[f"{ref.describe()}\n{db_names.get(ref.db_id, ref.db_id)}" for ref in refs] for _, _, refs in rows]
    box_w = max([text_width(label) for level in labels for label in level] + [40]) + 10
    box_h = 2 * SMALL * 1.25 + 8
    grid_w = width * 0.58 * 72
    per_row = _grid(max([len(level) for level in labels] + [1]), box_w, grid_w)
    lines = [max(1, -(-len(level) // per_row)) for level in labels]
    grid_h = sum(lines) * (box_h + 6) + 6
    height = height or 0.5 + max(grid_h / 72, 1.2) + 0.1
    fig = new_figure(width, height)
    ax = fig.add_axes((0.2, 0.1 / height, 0.58, 1 - 0.6 / height))
    ax.set_xlim(0, grid_w)
    ax.set_ylim(0, max(grid_h, 1.2 * 72))
    top = max(grid_h, 1.2 * 72) - 6
    for (rank, level, refs), level_labels, count in zip(rows, labels, lines, strict=True):
        name = f"{'mapping tree ' if rank == MAPPING_RANK else ''}level {level}"
        ax.text(-8, top - box_h / 2, name, ha="right", va="center", fontsize=SMALL)
        for i, (ref, label) in enumerate(zip(refs, level_labels, strict=True)):
            line, col = divmod(i, per_row)
            x, y = col * box_w * 1.1, top - (line + 1) * (box_h + 6) + 6
            ax.add_patch(Rectangle((x, y), box_w, box_h, facecolor=tint(colour(node_kind(ref.is_bin))),
                                   edgecolor="#37474f", lw=0.8))
            ax.text(x + box_w / 2, y + box_h / 2, label, ha="center", va="center", fontsize=SMALL)
        top -= count * (box_h + 6)
    ax.axis("off")
    if not rows:
        ax.text(grid_w / 2, 0.6 * 72, "no dirty INs", ha="center", va="center", fontsize=SMALL)
    side = fig.add_axes((0.8, 0.1 / height, 0.19, 1 - 0.6 / height))
    side.axis("off")
    flush = [f"{db_names.get(d, d)}: {lvl}" for d, lvl in snapshot.highest_flush_levels]
    side.text(0, 1, "highest flush level\n" + "\n".join(flush), va="top", fontsize=SMALL)
    side.text(0, 0, f"state:\n{snapshot.state.name}", va="bottom", fontsize=SMALL)
    if title:
        fig.suptitle(title, x=0.02, ha="left", fontsize=TITLE)
    return fig


def draw_checkpoint(result: CheckpointResult, *, current_step: int | None = None, title: str | None = None,
                    width: float = WIDTH, height: float | None = None) -> Figure:
    """The ten steps (done ones filled, up to ``current_step``) in two rows of five, and the INs step 5
    logged, in order, wrapped into rows."""
    done_up_to = 10 if current_step is None else current_step
    logged = result.logged if done_up_to >= 5 else []
    labels = [f"{node_kind(item.is_bin)} {item.node_id}\nlevel {item.level}\n{item.db_name}" for item in logged]
    row_w = width * 0.96 * 72
    box_w = max([text_width(label) for label in labels] + [40]) + 8
    box_h = 3 * SMALL * 1.25 + 6
    per_row = _grid(max(len(labels), 1), box_w, row_w)
    lines = max(1, -(-len(labels) // per_row))
    low_h = lines * (box_h + 6)
    heading = title or (f"checkpoint {result.checkpoint_id}: CkptStart {result.ckpt_start_lsn}, "
                        f"CkptEnd {result.ckpt_end_lsn}; INs logged by step 5, in order")
    heading = title_lines(heading, width)
    title_in = 0.2 + 0.22 * (heading.count("\n") + 1)
    steps_in = 1.5
    height = height or title_in + steps_in + 0.15 + low_h / 72 + 0.45
    fig = new_figure(width, height)
    ax = fig.add_axes((0.02, 1 - (title_in + steps_in) / height, 0.96, steps_in / height))
    for step in range(1, 11):
        row, col = divmod(step - 1, 5)
        x, y = col * 1.0, (1 - row) * 1.0
        filled = step <= done_up_to
        ax.add_patch(Rectangle((x, y), 0.95, 0.9, facecolor="#4e79a7" if filled else "white", edgecolor="#4e79a7"))
        ax.text(x + 0.475, y + 0.45, f"{step}. {STEP_NAMES[step]}", ha="center", va="center", fontsize=SMALL,
                color="white" if filled else "#37474f", wrap=False)
    ax.set_xlim(-0.02, 5)
    ax.set_ylim(-0.05, 1.95)
    ax.axis("off")
    low = fig.add_axes((0.02, 0.45 / height, 0.96, low_h / 72 / height))
    for i, (item, label) in enumerate(zip(logged, labels, strict=True)):
        line, col = divmod(i, per_row)
        x, y = col * box_w * 1.1, low_h - (line + 1) * (box_h + 6) + 3
        low.add_patch(Rectangle((x, y), box_w, box_h, facecolor=PROVISIONAL_COLOURS[item.provisional.name],
                                edgecolor="#37474f", lw=0.6))
        low.text(x + box_w / 2, y + box_h / 2, label, ha="center", va="center", fontsize=SMALL,
                 color="white" if item.provisional.name == "NO" else "black")
    low.set_xlim(0, row_w)
    low.set_ylim(0, low_h)
    low.axis("off")
    handles = [Patch(facecolor=c, edgecolor="#37474f", label=f"Provisional.{n}") for n, c in PROVISIONAL_COLOURS.items()]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=SMALL, frameon=False)
    fig.suptitle(heading, x=0.02, ha="left", fontsize=TITLE)
    return fig


def a_name(case: WorkedCase) -> str:
    """The documentation's BIN-A named by what it is in the engine: ``IN-A`` above level 1."""
    return "BIN-A" if case.a_level == 1 else "IN-A"


def case_summary(case: WorkedCase) -> str:
    """The case's summary, with A named by what it is (see :func:`a_name`)."""
    return case.summary().replace("BIN-A ", f"{a_name(case):<6}")  # the columns stay aligned


def _case_boxes(case: WorkedCase) -> list[tuple[str, str, LSN, str | None, str]]:
    """Each entry of the case: (order, name, LSN, fill type, hatch, outline) in log order."""
    a_old = case.marks["050 BIN-A"]
    boxes = []
    for mark, lsn in case.marks.items():
        order, kind = mark.split(" ", 1)
        type_name = {"BIN-A": "BIN" if case.a_level == 1 else "IN", "IN-B": "IN"}.get(kind, kind)
        fill = "obsolete" if (lsn == a_old and case.old_a_counted_obsolete) else type_name
        hatch = {"YES": "//", "BEFORE_CKPT_END": ".."}.get(case.a_provisional.name) if mark == "200 BIN-A" else None
        in_use = lsn == case.active_a
        outline = ("wrong" if lsn == a_old and case.old_a_counted_obsolete else "in use") if in_use else "plain"
        boxes.append((order, kind.replace("BIN-A", a_name(case)), lsn, fill, hatch, outline))
    return boxes


OUTLINES = {"plain": ("#37474f", 0.8), "in use": ("#1b5e20", 3), "wrong": (BAD, 3)}


def case_legend(cases: list[WorkedCase]) -> list[Patch]:
    """What the strips of ``cases`` draw, and nothing else."""
    boxes = [box for case in cases for box in _case_boxes(case)]
    fills = dict.fromkeys(box[3] for box in boxes)
    handles = [Patch(facecolor=OBSOLETE if f == "obsolete" else colour(f), edgecolor="#37474f",
                     label="counted obsolete" if f == "obsolete" else f) for f in fills]
    for hatch, flag in (("//", "YES"), ("..", "BEFORE_CKPT_END")):
        if any(box[4] == hatch for box in boxes):
            handles.append(Patch(facecolor="white", edgecolor="black", hatch=hatch, label=f"Provisional.{flag}"))
    for outline, label in (("in use", "used by the recovered tree"), ("wrong", "used, yet counted obsolete")):
        if any(box[5] == outline for box in boxes):
            edge, lw = OUTLINES[outline]
            handles.append(Patch(fill=False, edgecolor=edge, lw=lw, label=label))
    return handles


def draw_worked_case(case: WorkedCase, *, width: float = WIDTH, height: float | None = None) -> Figure:
    """The case's entries in log order; the version of A the recovered tree uses; the verdict."""
    return draw_worked_cases([case], width=width, height=height)


def draw_worked_cases(cases: list[WorkedCase], *, width: float = WIDTH, height: float | None = None) -> Figure:
    """Several worked cases, one strip each, top to bottom, and one legend under them."""
    handles = case_legend(cases)
    ncol = 4
    legend_in = 0.25 * -(-len(handles) // ncol) + 0.1
    rows = len(cases)
    height = height or CASE_HEIGHT * rows + legend_in
    fig = new_figure(width, height)
    band = (1 - legend_in / height) / rows
    for row, case in enumerate(cases):
        _draw_case(fig, case, 1 - row * band, band)
    fig.legend(handles=handles, loc="lower center", ncol=ncol, fontsize=SMALL, frameon=False)
    return fig


def _draw_case(fig: Figure, case: WorkedCase, top: float, band: float) -> None:
    """One case in a band of the figure: boxes in log order, each named underneath (so a hatch never
    hides its name), in points so the names keep their size."""
    ax = fig.add_axes((0.02, top - band * 0.75, 0.96, band * 0.5))
    ax.set_xlim(0, fig.get_figwidth() * 0.96 * 72)
    ax.set_ylim(-2.6, 2.0)  # box from 0 to 1; names below, the arrow above
    boxes = _case_boxes(case)
    box_w = max(max(text_width(order), text_width(kind)) for order, kind, *_ in boxes) + 12
    for i, (order, kind, lsn, fill, hatch, outline) in enumerate(boxes):
        edge, lw = OUTLINES[outline]
        x = i * (box_w + 6)
        ax.add_patch(Rectangle((x, 0), box_w, 1, facecolor=OBSOLETE if fill == "obsolete" else colour(fill),
                               hatch=hatch, edgecolor=edge, lw=lw))
        name = f"{order} {kind}"
        ax.text(x + box_w / 2, -0.15, name if fits(ax, name, box_w) else f"{order}\n{kind}",
                ha="center", va="top", fontsize=SMALL, weight="bold")
        ax.text(x + box_w / 2, -1.75, str(lsn), ha="center", va="top", fontsize=SMALL)
        if outline != "plain":
            ax.add_patch(FancyArrowPatch((x + box_w / 2, 1.75), (x + box_w / 2, 1.05), arrowstyle="-|>",
                                         mutation_scale=9, color=edge))
            ax.text(x + box_w / 2 + 6, 1.4, "the recovered tree uses this A", ha="left", va="center",
                    fontsize=SMALL, color=edge)
    ax.axis("off")
    a = a_name(case)
    verdict = (f"correct: {a} at 050 is obsolete and not in use" if case.correct and case.old_a_counted_obsolete
               else f"correct: {a} at 050 is in use and not counted obsolete" if case.correct
               else f"INCORRECT: {a} at 050 is in use, yet counted obsolete")
    fig.text(0.02, top - band * 0.8, f"A logged at 200 with Provisional.{case.a_provisional.name}, then a crash "
             f"and recovery.\n{verdict}.", fontsize=SMALL, va="top", color="#1b5e20" if case.correct else BAD)
    bug = " (evictor with the bug option)" if case.bug else ""
    level = "a level-2 IN" if case.a_level > 1 else "a BIN"
    fig.text(0.02, top - band * 0.04, f"worked case {case.number}{bug}: A is {level}", fontsize=TEXT, va="top",
             weight="bold")


__all__ = ["draw_dirty_map", "draw_checkpoint", "draw_worked_case", "draw_worked_cases", "case_summary", "a_name",
           "case_legend", "PROVISIONAL_COLOURS"]
