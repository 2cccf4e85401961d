"""Every picture in ``figures/``, by file name, and how to make it.

``minidb figures`` (and ``make figures``) writes them all; ``minidb tour``
writes them as it goes. Each entry is a function returning a Figure, built
from seeded, scripted workloads so the pictures are the same on every run.
Every picture of every notebook has a name too
(:mod:`minidb.viz.notebook_figures`): :func:`all_figures` lists both, by the
name ``minidb figures NAME`` takes (a file name without its suffix).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from matplotlib.figure import Figure

from minidb.io import created
from minidb.viz.style import SAVE_DPI, Picture, save


def _log_files() -> Figure:
    from minidb.viz.log import draw_log, log_layout
    from minidb.viz.log_demo import DEMO_FILE_MAX, demo_disk

    return draw_log(log_layout(demo_disk()), scale=DEMO_FILE_MAX,
                    title="The demo log: two files, entries coloured by type, arcs for the prev chain")


def _log_torn_tail() -> Figure:
    from minidb.viz.log_demo import log_crash_demo

    return log_crash_demo(after_write=5, keep="torn").figure


def _page_slotted() -> Figure:
    from minidb.viz.page_demo import page_step

    return page_step(5).figure  # T2 frees bob: a reserved slot


def _volume_extents() -> Figure:
    from minidb.viz.volume_demo import volume_step

    return volume_step(11).figure


def _bufferpool_clock() -> Figure:
    from minidb.viz.bufferpool_demo import pool_step

    return pool_step(9).figure


def _lock_modes() -> Figure:
    from minidb.viz.locks import draw_mode_tables

    return draw_mode_tables()


def _locks_hierarchy() -> Figure:
    from minidb.viz.locks_demo import lock_step

    return lock_step(4).figure


def _locks_deadlock() -> Figure:
    from minidb.viz.locks_demo import detection_figure, scenario_step

    return detection_figure(scenario_step("cycle", 6))


def _logstore_tree() -> Figure:
    from minidb.viz.logstore_demo import SCRIPT, tree_step

    return tree_step(len(SCRIPT)).figure


def _logstore_utilization() -> Figure:
    from minidb.viz.logstore import draw_utilization
    from minidb.viz.logstore_demo import SCRIPT, tree_step

    return draw_utilization(tree_step(len(SCRIPT)).env, title="The tree demo's log files: live and obsolete bytes")


def _logstore_dirty_map() -> Figure:
    from minidb.viz.checkpoint import draw_dirty_map
    from minidb.viz.logstore_demo import checkpoint_demo_env

    env = checkpoint_demo_env()
    run = env.checkpointer.start()
    run.through(4)
    names = {impl.id: impl.name for impl in env.db_tree.by_id.values()}
    return draw_dirty_map(run.result.dirty_map, names, title="The dirty map by level, after step 4")


def _logstore_checkpoint() -> Figure:
    from minidb.viz.checkpoint import draw_checkpoint
    from minidb.viz.logstore_demo import checkpoint_demo_env

    return draw_checkpoint(checkpoint_demo_env().checkpoint(minimize_recovery_time=True))


def _logstore_worked_cases() -> Figure:
    from minidb.viz.logstore_demo import worked_cases_figure

    return worked_cases_figure()


def _logstore_recovery() -> Figure:
    from minidb.viz.logstore_demo import bank_writes, logstore_crash_demo

    return logstore_crash_demo(len(bank_writes()) - 1, "nothing", 10).figure
def _xct_rollback_clrs() -> Figure:
    from minidb.viz.xct_demo import xct_step

    return xct_step(14).figure


def _recovery_undo() -> Figure:
    from minidb.viz.recovery_demo import last_write, recovery_view

    return recovery_view(last_write(), "nothing", "undo").figure


def _vlsn_buckets() -> Figure:
    from minidb.viz.vlsn import draw_buckets
    from minidb.viz.vlsn_demo import bucket_example

    buckets, truth = bucket_example()
    return draw_buckets(buckets, truth, lookup=11,
                        title="The JE documentation's VLSNBucket example: VLSNs 9..15 over files 10 and 11, stride 4")


def _vlsn_index() -> Figure:
    from minidb.viz.vlsn import draw_index
    from minidb.viz.vlsn_demo import index_step

    return draw_index(index_step(6).picture, title="A VLSN index after a checkpoint flushed it")


def _vlsn_recovery() -> Figure:
    from minidb.replication.cases import worked_recovery_case
    from minidb.viz.vlsn import draw_recovery_case

    return draw_recovery_case(worked_recovery_case())


def _vlsn_tradeoff() -> Figure:
    from minidb.viz.vlsn_demo import tradeoff

    return tradeoff(10, 1000).figure


FIGURES: dict[str, Callable[[], Figure]] = {
    "log_files.png": _log_files,
    "log_torn_tail.png": _log_torn_tail,
    "page_slotted.png": _page_slotted,
    "volume_extents.png": _volume_extents,
    "bufferpool_clock.png": _bufferpool_clock,
    "lock_modes.png": _lock_modes,
    "locks_hierarchy.png": _locks_hierarchy,
    "locks_deadlock.png": _locks_deadlock,
    "logstore_tree.png": _logstore_tree,
    "logstore_utilization.png": _logstore_utilization,
    "logstore_dirty_map.png": _logstore_dirty_map,
    "logstore_checkpoint.png": _logstore_checkpoint,
    "logstore_worked_cases.png": _logstore_worked_cases,
    "logstore_recovery.png": _logstore_recovery,
    "xct_rollback_clrs.png": _xct_rollback_clrs,
    "recovery_undo.png": _recovery_undo,
    "vlsn_buckets.png": _vlsn_buckets,
    "vlsn_index.png": _vlsn_index,
    "vlsn_recovery.png": _vlsn_recovery,
    "vlsn_tradeoff.png": _vlsn_tradeoff,
}


def all_figures() -> dict[str, Callable[[], Picture]]:
    """Every picture by name: those of ``figures/`` (``log_files``), then the notebooks' (``02_pages-3``)."""
    from minidb.viz.notebook_figures import notebook_figures

    return {os.path.splitext(name)[0]: make for name, make in FIGURES.items()} | notebook_figures()


def write_figures(out_dir: str, names: list[str] | None = None, *, fmt: str = "png", dpi: int = SAVE_DPI) -> list[str]:
    """Write the named pictures (default: those of ``figures/``) into ``out_dir`` as ``fmt``; return the paths.

    A name may carry the ``.png`` of its ``FIGURES`` entry; an unknown name is a ValueError, before anything
    is written.
    """
    every = all_figures()
    chosen = [os.path.splitext(name)[0] if name in FIGURES else name for name in names or FIGURES]
    problem = unknown(chosen)
    if problem:
        raise ValueError(problem)
    created.makedirs(out_dir)
    return [save(every[name](), os.path.join(out_dir, f"{name}.{fmt}"), dpi=dpi) for name in chosen]


def unknown(names: list[str]) -> str | None:
    """Why ``names`` cannot all be drawn (a name no picture has), or None."""
    every = all_figures()
    missing = [name for name in names if name not in every and name not in FIGURES]
    if not missing:
        return None
    return f"no figure named {', '.join(map(repr, missing))} (minidb figures --list names them all)"
