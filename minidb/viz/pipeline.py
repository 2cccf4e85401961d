"""Pictures of the data pipeline's analyses (``minidb spark analyze``, notebook 15).

Pure functions: each takes plain rows (tuples or anything indexable, as
``DataFrame.collect()`` returns them, in the column order of the analysis in
:mod:`minidb.spark.analytics`) and returns a fixed-size Figure. No Spark is
needed to draw, so the pictures are tested on hand-made rows.

- :func:`draw_entry_types_per_file` — one bar per log file, stacked by entry
  type (rows of ``entries_by_file``);
- :func:`draw_transaction_sizes` — how many transactions have n entries, by
  outcome (rows of ``transaction_sizes``);
- :func:`draw_checkpoint_intervals` — bytes from each checkpoint's start to
  its end, and between checkpoint starts (rows of ``checkpoints``);
- :func:`draw_vlsn_streams` — each environment's VLSN range, its gaps and
  repeats, and the first VLSN where the group diverges;
- :func:`entry_types_view` — the callback of notebook 15's closing control
  (:func:`entry_types_explorer`): one environment's files, by entries or bytes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import ScaledTranslation

from minidb.viz.style import BAD, FALLBACK, SMALL, TITLE, WIDTH, new_figure, type_colour

OUTCOME_COLOURS = {"commit": "#59a14f", "abort": "#e15759", "open": "#bab0ac"}
MAX_FILES = 40
DODGE_IN = 0.07  # how far apart (inches) the markers of environments with equal values are drawn
MIN_BAR_IN = 0.06  # the narrowest bar drawn (inches): a one-VLSN gap is no sliver


def _no_data(fig: Figure, ax, what: str) -> None:
    ax.text(0.5, 0.5, f"no {what} in these logs", ha="center", va="center", fontsize=TITLE, color="#757575",
            transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])


def draw_entry_types_per_file(rows: Iterable[Sequence], measure: str = "entries",
                              title: str | None = None) -> Figure:
    """Rows ``(env, file, type_name, entries, bytes, ...)``: a bar per file, stacked by type.

    ``measure`` is ``entries`` or ``bytes``. At most :data:`MAX_FILES` files
    are drawn (the first, in environment and file order); the title says so.
    """
    if measure not in ("entries", "bytes"):
        raise ValueError(f"measure must be entries or bytes, not {measure!r}")
    index = 3 if measure == "entries" else 4
    per_file: dict[tuple[str, int], dict[str, int]] = defaultdict(dict)
    types: list[str] = []
    for row in rows:
        env, number, type_name = row[0], int(row[1]), row[2] if row[2] is not None else "unreadable"
        per_file[(env, number)][type_name] = per_file[(env, number)].get(type_name, 0) + int(row[index] or 0)
        if type_name not in types:
            types.append(type_name)
    files = sorted(per_file)
    shown = files[:MAX_FILES]
    height = max(3.0, 1.2 + 0.2 * len(shown))  # a 9 pt label per bar
    fig = new_figure(WIDTH, height)
    ax = fig.add_axes((0.16, 0.65 / height, 0.56, 1 - 1.1 / height))
    if not shown:
        _no_data(fig, ax, "entries")
        return fig
    labels = [f"{env} #{number}" for env, number in shown]
    left = [0] * len(shown)
    for type_name in types:
        values = [per_file[f].get(type_name, 0) for f in shown]
        ax.barh(range(len(shown)), values, left=left, color=type_colour(type_name), label=type_name,
                edgecolor="white", linewidth=0.4)
        left = [a + b for a, b in zip(left, values, strict=True)]
    ax.set_yticks(range(len(shown)))
    ax.set_yticklabels(labels, fontsize=SMALL)
    ax.invert_yaxis()
    ax.set_xlabel(f"{measure} in the file", fontsize=SMALL)
    ax.tick_params(axis="x", labelsize=SMALL)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=SMALL, frameon=False, title="entry type",
              title_fontsize=SMALL)
    more = f" (first {len(shown)} of {len(files)} files)" if len(files) > len(shown) else ""
    fig.suptitle((title or f"Entry types per log file, by {measure}") + more, x=0.02, ha="left", fontsize=TITLE)
    return fig


def draw_transaction_sizes(rows: Iterable[Sequence], title: str | None = None) -> Figure:
    """Rows ``(outcome, entries, transactions)``: side-by-side bars per outcome."""
    counts: dict[str, dict[int, int]] = defaultdict(dict)
    for outcome, entries, transactions in (tuple(r)[:3] for r in rows):
        counts[outcome][int(entries)] = counts[outcome].get(int(entries), 0) + int(transactions)
    fig = new_figure(WIDTH, 4)
    ax = fig.add_axes((0.08, 0.14, 0.9, 0.74))
    if not counts:
        _no_data(fig, ax, "transactions")
        return fig
    outcomes = [o for o in ("commit", "abort", "open") if o in counts] + sorted(set(counts) - set(OUTCOME_COLOURS))
    sizes = sorted({n for per in counts.values() for n in per})
    width = 0.8 / len(outcomes)
    for i, outcome in enumerate(outcomes):
        xs = [n - 0.4 + width * (i + 0.5) for n in sizes]
        ax.bar(xs, [counts[outcome].get(n, 0) for n in sizes], width=width,
               color=OUTCOME_COLOURS.get(outcome, FALLBACK[i % len(FALLBACK)]),
               label=f"{outcome} ({sum(counts[outcome].values())})")
    ax.set_xlabel("entries per transaction (updates plus the commit or abort)", fontsize=SMALL)
    ax.set_ylabel("transactions", fontsize=SMALL)
    ax.tick_params(labelsize=SMALL)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.legend(fontsize=SMALL, frameon=False)
    fig.suptitle(title or "Transaction sizes", x=0.02, ha="left", fontsize=TITLE)
    return fig


def draw_checkpoint_intervals(rows: Iterable[Sequence], title: str | None = None) -> Figure:
    """Rows ``(env, ckpt, start_lsn, end_lsn, complete, duration_bytes, interval_bytes)``:
    left, the bytes each checkpoint took; right, the bytes between checkpoint starts."""
    per_env: dict[str, list[tuple[int, int | None, int | None]]] = defaultdict(list)
    for row in rows:
        per_env[row[0]].append((int(row[1]), row[5], row[6]))
    fig = new_figure(WIDTH, 4)
    left = fig.add_axes((0.08, 0.14, 0.38, 0.7))
    right = fig.add_axes((0.58, 0.14, 0.38, 0.7))
    if not per_env:
        _no_data(fig, left, "checkpoints")
        _no_data(fig, right, "checkpoints")
        return fig
    for i, (env, points) in enumerate(sorted(per_env.items())):
        colour = FALLBACK[i % len(FALLBACK)]
        # Environments often agree: each is moved sideways by its own few points (a dodge), so that equal
        # values show side by side instead of one marker hiding the others.
        dodge = ScaledTranslation(DODGE_IN * (i - (len(per_env) - 1) / 2), 0, fig.dpi_scale_trans)
        done = [(c, d) for c, d, _ in points if d is not None]
        left.plot([c for c, _ in done], [d for _, d in done], "o-", color=colour, ms=4, lw=1, label=env,
                  transform=left.transData + dodge)
        unfinished = [c for c, d, _ in points if d is None]
        left.plot(unfinished, [0] * len(unfinished), "x", color=BAD, ms=5, transform=left.transData + dodge)
        spaced = [(c, g) for c, _, g in points if g is not None]
        right.plot([c for c, _ in spaced], [g for _, g in spaced], "o-", color=colour, ms=4, lw=1, label=env,
                   transform=right.transData + dodge)
    left.set_title("CkptStart to CkptEnd (x: never ended)", fontsize=SMALL)
    right.set_title("from the previous CkptStart", fontsize=SMALL)
    for ax in (left, right):
        ax.set_xlabel("checkpoint number", fontsize=SMALL)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("log bytes", fontsize=SMALL)
        ax.tick_params(labelsize=SMALL)
        ax.set_ylim(bottom=0)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    if len(per_env) <= 8:
        right.legend(fontsize=SMALL, frameon=False, loc="lower right")
    fig.suptitle(title or "Checkpoint intervals", x=0.02, ha="left", fontsize=TITLE)
    return fig


def draw_vlsn_streams(streams: Iterable[Sequence], gaps: Iterable[Sequence] = (),
                      duplicates: Iterable[Sequence] = (), divergence: Iterable[Sequence] = (),
                      title: str | None = None) -> Figure:
    """Each environment's VLSN stream as a bar from its first to its last VLSN.

    ``streams`` rows ``(env, entries, first_vlsn, last_vlsn, ...)``; ``gaps``
    rows ``(env, gap_start, gap_end, missing)`` (red marks); ``duplicates``
    rows ``(env, vlsn, ...)`` (black ticks); ``divergence`` the rows of
    ``first_divergence`` ``(vlsn, env, lsn, type_name, item_checksum,
    holders, envs_present, in_majority)``: a dashed line at that VLSN, the
    diverging environments' bars hatched from there on.
    """
    streams = sorted((tuple(r) for r in streams), key=lambda r: r[0])
    fig = new_figure(WIDTH, 3.8)
    ax = fig.add_axes((0.1, 0.24, 0.87, 0.6))
    if not streams:
        _no_data(fig, ax, "replicated entries")
        return fig
    rows = {r[0]: i for i, r in enumerate(streams)}
    span = max(r[3] for r in streams) - min(r[2] for r in streams) + 1
    least = span * MIN_BAR_IN / (0.87 * WIDTH)  # the VLSNs of the narrowest bar worth drawing
    divergence = [tuple(r) for r in divergence]
    split = divergence[0][0] if divergence else None
    diverged = {r[1] for r in divergence if not r[7]}
    for env, i in rows.items():
        first, last = streams[i][2], streams[i][3]
        ax.barh(i, max(last - first + 1, least), left=first - 0.5, height=0.5, color="#4e79a7", alpha=0.8)
        if split is not None and env in diverged and last >= split:
            ax.barh(i, max(last - split + 1, least), left=split - 0.5, height=0.5, color="#f28e2b", hatch="//",
                    edgecolor="white")
    for env, start, end, *_ in (tuple(r) for r in gaps):
        if env in rows:  # a gap of one VLSN is drawn wide enough to see (its label gives its VLSNs)
            wide = max(end - start + 1, least)
            ax.barh(rows[env], wide, left=(start + end) / 2 - wide / 2, height=0.7, color=BAD)
            ax.text(start, rows[env] + 0.42, f"gap {start}" + (f"..{end}" if end != start else ""),
                    fontsize=SMALL, color=BAD, ha="center")
    for env, vlsn, *_ in (tuple(r) for r in duplicates):
        if env in rows:
            ax.plot([vlsn, vlsn], [rows[env] - 0.38, rows[env] + 0.38], color="black", lw=1.5)
            ax.text(vlsn, rows[env] - 0.58, f"twice {vlsn}", fontsize=SMALL, ha="center")
    if split is not None:
        ax.axvline(split - 0.5, color="#f28e2b", ls="--", lw=1.2)
        ax.text(split, len(rows) - 0.35, f"first divergence: VLSN {split}", fontsize=SMALL, color="#c4650f")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(list(rows), fontsize=SMALL)
    ax.invert_yaxis()
    ax.set_ylim(len(rows) - 0.2, -0.9)
    ax.set_xlabel("VLSN", fontsize=SMALL)
    ax.tick_params(axis="x", labelsize=SMALL)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    handles = [Patch(color="#4e79a7", label="entries"), Patch(color=BAD, label="missing (gap)")]
    if split is not None:
        handles.append(Patch(facecolor="#f28e2b", hatch="//", edgecolor="white", label="diverged"))
    fig.legend(handles=handles, loc="lower right", ncol=3, fontsize=SMALL, frameon=False)
    fig.suptitle(title or "VLSN streams of the replication group", x=0.02, ha="left", fontsize=TITLE)
    return fig


EVERY = "every environment"


def entry_types_view(rows: Sequence[Sequence], env: str = EVERY, measure: str = "entries") -> Figure:
    """The explorer's callback: the entry types per file of one environment (or :data:`EVERY`), by ``measure``.

    ``rows`` are ``entries_by_file`` rows; an environment none of them names is a ValueError that lists
    the ones they do.
    """
    rows = [tuple(r) for r in rows]
    envs = sorted({r[0] for r in rows})
    if env != EVERY and env not in envs:
        raise ValueError(f"no environment {env!r} in these rows (they hold {', '.join(envs) or 'none'})")
    chosen = rows if env == EVERY else [r for r in rows if r[0] == env]
    return draw_entry_types_per_file(chosen, measure, title=f"Entry types per log file of {env}, by {measure}")


def entry_types_explorer(rows: Sequence[Sequence]):
    """The control at the end of notebook 15: pick an environment and a measure,
    see its files' entry types (:func:`entry_types_view`). ``rows`` are ``entries_by_file`` rows, collected,
    so the control needs no Spark."""
    from functools import partial

    import ipywidgets as widgets

    from minidb.viz.widgets import Explorer, show_figure

    rows = [tuple(r) for r in rows]
    envs = sorted({r[0] for r in rows})
    pick = partial(entry_types_view, rows)
    controls = {
        "env": widgets.Dropdown(options=[EVERY, *envs], value=EVERY,
                                description="environment"),
        "measure": widgets.ToggleButtons(options=["entries", "bytes"], value="entries", description="measure"),
    }
    return Explorer(pick, controls, show_figure)
