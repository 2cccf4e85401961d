"""The map of minidb for ``notebooks/00_start_here.ipynb``: its layers, and which notebook shows which.

:data:`NOTEBOOKS` lists every notebook (file stem, layer, what it teaches,
what to read first); :func:`notebook_table` prints it as a Markdown table and
:func:`draw_layers` draws the layers bottom up, each box naming its package,
what it holds and its notebooks. Invariants of the picture: imports only
point down (a layer uses the ones below it, ``tests/test_layers.py``); the
page store and the log store sit side by side on the same floor, because they
never import each other; replication sits on the log store only (it never
imports the page store); an arrow goes from a box to each layer it uses
(:attr:`Layer.uses`, and through it the layers below that one), straight down
through no other box; the front ends share one bar, because each uses both
engines; every notebook of :data:`NOTEBOOKS` appears in exactly one box.
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from minidb.viz.style import FALLBACK, SMALL, TEXT, TITLE, WIDTH, new_figure, tint


@dataclass(frozen=True)
class Notebook:
    stem: str  # the file name without .ipynb
    layer: str  # the key of the layer whose box names it
    teaches: str
    read_first: str


NOTEBOOKS: tuple[Notebook, ...] = (
    Notebook("00_start_here", "viz", "the layers, the notebooks, how the controls and exercises work", "nothing"),
    Notebook("01_log", "log", "the shared log: files, entries, LSNs, the prev chain; a crash and the torn tail",
             "00"),
    Notebook("02_pages", "pagestore", "slotted pages: header, records, slot table, footer; space reservation", "01"),
    Notebook("03_volume_extents", "pagestore", "a volume of pages, extents and stores, the extent maps", "02"),
    Notebook("04_buffer_pool", "pagestore", "frames, fix and unfix, pins and latches, clock replacement, "
             "the write-ahead rule", "03"),
    Notebook("05_locks", "pagestore", "lock modes and their tables, the lock hierarchy, queues, durations", "04"),
    Notebook("05b_deadlocks", "pagestore", "lock escalation, deadlocks found by Dreadlocks, false positives",
             "05"),
    Notebook("06_transactions_records", "pagestore", "transactions, savepoints, rollback with CLRs; "
             "files of records", "05"),
    Notebook("07_btree", "pagestore", "B+trees: the root growing, leaf splits as nested top actions, logical undo "
             "after a split, lazy deletion, a crash in a split", "06"),
    Notebook("08_aries_recovery", "pagestore", "ARIES restart: analysis, redo, undo after a crash", "06"),
    Notebook("16_log_space", "pagestore", "a log of bounded size: reservations, a refused transaction, "
             "scavenging; two-phase commit through a crash; large records", "08"),
    Notebook("18_rtree", "pagestore", "R*-trees: boxes on a map, forced reinsertion before a split, a search "
             "that prunes, a crash in a split", "07, 08"),
    Notebook("09_logstore_tree", "logstore", "the log store: a B+tree of INs, BINs and LNs that lives in the log",
             "01"),
    Notebook("10_checkpointer", "logstore", "the checkpointer: the dirty map, provisional logging, recovery", "09"),
    Notebook("10b_je_eviction_bug", "logstore", "appendix to 10: JE's eviction bug (a BIN logged "
             "BEFORE_CKPT_END), and a cleaner that trusts the counts", "10"),
    Notebook("11_cleaner_eraser", "logstore", "the log cleaner: utilization, live or obsolete, migration, deletion "
             "after CkptEnd; the data eraser: cycles, its throttle, a crash in its writes", "10"),
    Notebook("12_vlsn_index", "replication", "VLSNs, the VLSN index and its buckets, recovery of the index", "10"),
    Notebook("13_feeders_replicas", "replication", "a three-node group: feeders, replicas, commits waiting for acks, "
             "a replica cut off and catching up", "12"),
    Notebook("14_syncup_rollback", "replication", "syncup and rollback: the master dies, an election, the old "
             "master's matchpoint search and the rollback of its tail", "13"),
    Notebook("15_spark_log_analytics", "spark", "many environments' logs as a Spark DataFrame: utilization, "
             "transactions, audits", "01, 09"),
    Notebook("17_making_it_fast", "base", "the reference and its accelerated twin: the lock manager profiled, what "
             "the twin skips, the agreement test catching a broken twin", "05"),
)


@dataclass(frozen=True)
class Layer:
    key: str
    package: str
    holds: str
    row: int  # 0 is the bottom
    column: tuple[float, float]  # left and right, as fractions of the width
    uses: tuple[str, ...] = ()  # the layers its arrows point to: it imports from them and from the layers below them


FRONT_ENDS_USE = ("pagestore", "replication")  # every front end uses both engines (and replication)
LAYERS: tuple[Layer, ...] = (
    Layer("base", "minidb/errors.py, stats.py, impl.py", "errors raised on purpose; named statistics and traces; "
          "reference, fast twin or student", 0, (0, 1)),
    Layer("io", "minidb/io", "all file I/O: real files (OSDisk), a simulated disk that can crash (SimDisk)", 1,
          (0, 1), ("base",)),
    Layer("log", "minidb/log", "the one log: LSNs, entries, files, writer, readers", 2, (0, 1), ("io",)),
    Layer("pagestore", "minidb/pagestore", "Shore: pages, volumes, buffer pool, locks, transactions, ARIES", 3,
          (0, 0.5), ("log",)),
    Layer("logstore", "minidb/logstore", "Berkeley DB JE: a B+tree in the log, checkpointer, cleaner", 3, (0.5, 1), ("log",)),
    Layer("replication", "minidb/replication", "VLSNs, VLSN index, feeders, syncup", 4, (0.5, 1),
          ("logstore",)),
    Layer("cli", "minidb/cli", "the minidb command", 5, (0, 1 / 3), FRONT_ENDS_USE),
    Layer("viz", "minidb/viz", "pictures and controls", 5, (1 / 3, 2 / 3), FRONT_ENDS_USE),
    Layer("spark", "minidb/spark", "the PySpark pipeline", 5, (2 / 3, 1), FRONT_ENDS_USE),
)


def notebooks_of(layer: str) -> list[str]:
    """The numbers (``05b``) of the notebooks a layer's box names."""
    return [n.stem.split("_")[0] for n in NOTEBOOKS if n.layer == layer]


def notebook_table() -> str:
    """Every notebook as a Markdown table: file (a link), what it teaches, what to read first."""
    rows = ["| notebook | what it teaches | read first |", "| --- | --- | --- |"]
    for n in NOTEBOOKS:
        rows.append(f"| [{n.stem}]({n.stem}.ipynb) | {n.teaches} | {n.read_first} |")
    return "\n".join(rows)


ROW_IN = 0.78  # inches per layer row
GAP_IN = 0.14  # between rows (the arrows' room)


def number_runs(numbers: list[str]) -> str:
    """``["02", "03", "04", "05b", "16"]`` as ``"02-04, 05b, 16"``: three or more consecutive numbers as a range."""
    runs: list[list[str]] = []
    for number in numbers:  # 05b goes with 05, in its run
        if runs and int(number[:2]) - int(runs[-1][-1][:2]) in (0 if number[2:] else 1, 1):
            runs[-1].append(number)
        else:
            runs.append([number])
    return ", ".join(f"{run[0]}-{run[-1]}" if len({n[:2] for n in run}) >= 3 else ", ".join(run) for run in runs)


def draw_layers(*, title: str | None = "minidb's layers, bottom up: imports only point down") -> Figure:
    """The layers as boxes, bottom up (see the module documentation)."""
    rows = max(layer.row for layer in LAYERS) + 1
    top_in = 0.45 if title else 0.1
    height = top_in + rows * (ROW_IN + GAP_IN) + 0.05
    fig = new_figure(WIDTH, height)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, WIDTH)
    ax.set_ylim(0, height)
    ax.set_axis_off()
    margin = 0.08
    by_key = {layer.key: layer for layer in LAYERS}
    for i, layer in enumerate(LAYERS):
        colour = FALLBACK[i % len(FALLBACK)]
        x0 = layer.column[0] * WIDTH + margin
        x1 = layer.column[1] * WIDTH - margin
        y0 = 0.05 + layer.row * (ROW_IN + GAP_IN)
        ax.add_patch(FancyBboxPatch((x0, y0), x1 - x0, ROW_IN, boxstyle="round,pad=0,rounding_size=0.06",
                                    facecolor=tint(colour, 0.7), edgecolor=colour, lw=1.5))
        numbers = notebooks_of(layer.key)
        notebooks = ("notebooks " if len(numbers) > 1 else "notebook ") + number_runs(numbers) if numbers else ""
        ax.text(x0 + 0.1, y0 + ROW_IN - 0.17, layer.package, fontsize=TEXT, weight="bold", va="center",
                family="monospace")
        if notebooks:
            ax.text(x1 - 0.1, y0 + ROW_IN - 0.17, notebooks, fontsize=SMALL, weight="bold", va="center", ha="right",
                    color="#37474f")
        ax.text(x0 + 0.1, y0 + 0.22, layer.holds, fontsize=SMALL, va="center", wrap=False)
    for row in range(1, rows):  # arrows straight down, in the columns both boxes share
        layers = [layer for layer in LAYERS if layer.row == row]
        y0 = 0.05 + row * (ROW_IN + GAP_IN)
        shared = len(layers) > 1 and len({layer.uses for layer in layers}) == 1
        if shared:  # one bar under the whole row: each of its boxes uses what the arrows point to
            ax.plot([margin, WIDTH - margin], [y0 - 0.03, y0 - 0.03], color="#616161", lw=1.5,
                    solid_capstyle="butt")
        for layer in layers[:1] if shared else layers:
            for used in (by_key[key] for key in layer.uses):
                left, right = (used.column if shared else
                               (max(layer.column[0], used.column[0]), min(layer.column[1], used.column[1])))
                x = (left + right) / 2 * WIDTH
                top = 0.05 + used.row * (ROW_IN + GAP_IN) + ROW_IN
                ax.add_patch(FancyArrowPatch((x, y0 - (0.03 if shared else -0.01)), (x, top + 0.01),
                                             arrowstyle="-|>", mutation_scale=9, color="#616161", lw=1))
    if title:
        ax.text(0.08, height - 0.22, title, fontsize=TITLE, va="center")
    return fig
