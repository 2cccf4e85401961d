"""Every picture the notebooks show, by name, rebuilt outside the notebook.

A lecture wants a notebook's picture on a slide without running the
notebook: ``minidb figures --list`` names them all, ``minidb figures
09_logstore_tree-3`` writes one. A name is the notebook's file name and the
picture's place in it (``02_pages-1`` is the first picture of
``02_pages.ipynb``); each entry replays the cells that lead to its picture
from the same seeded demos, so it is the picture the notebook shows.

Notebook 17 breaks the lock manager's twin on purpose in a cell;
:func:`forgetful_twin` is that cell's class, so its picture can be drawn here.
Notebook 15 draws from a Spark job's tables. Its pictures here draw the rows
those queries return for the notebook's workload (:data:`SPARK_WORKLOAD`, the
notebook's own cell), stored in ``notebook15_rows.json`` beside this module
(:data:`SPARK_ROWS`: a JSON object, each query's name to its rows as lists of
values), so a picture costs no Spark and no workload; :func:`spark_lecture_rows`
computes them (``make figures`` refreshes the file through
``scripts/refresh-notebook15-rows.py``) and a Spark test holds the file to
what the queries return. Some pictures are
graphviz graphs, not matplotlib figures (the waits-for graph of 05b, the tree
of 09, the B+trees of 07): :func:`minidb.viz.style.save` writes both kinds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from matplotlib.figure import Figure

from minidb.viz.style import Picture

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# The workload notebook 15 generates (its "workload = GenerateRequest(...)" cell; a test keeps them equal).
SPARK_WORKLOAD = {"envs": 5, "group": 3, "ops": 600, "seed": 18, "file_max": 16 * 1024, "ckpt_every": 80}


def _clock() -> float:
    return 1_700_000_000.0


@lru_cache(maxsize=1)
def _log_lecture() -> tuple[Figure, ...]:
    """The four pictures of 01_log, as its cells make them (the bank's script, piece by piece)."""
    from minidb.io import CrashMode, SimDisk
    from minidb.log import TRACE, LogManager
    from minidb.viz.log import draw_log, log_layout
    from minidb.viz.log_demo import SCRIPT, run_script

    def picture(title: str) -> Figure:
        return draw_log(log_layout(disk), title=title, scale=330)

    disk = SimDisk("lecture")
    log = LogManager(disk, file_max=330, buffer_size=70, clock=_clock)
    run_script(log, SCRIPT, 0, 4)
    log.flush()
    shown = [picture("after four appends and a flush")]
    run_script(log, SCRIPT, 4, 9)
    log.flush()
    shown.append(picture("entries 1-4 synced, 5-8 only written"))
    run_script(log, SCRIPT, 9)
    shown.append(picture("two files"))
    log.append(TRACE, {"message": "this one is being written when the power fails"})
    log.flush()
    disk.crash(CrashMode.torn(25))
    shown.append(picture("the disk after the crash (before the log is reopened)"))
    return tuple(shown)


def _tree_lecture() -> list[Callable[[], Picture]]:
    """The pictures of 09_logstore_tree: its default script after the steps its cells show."""
    from minidb.viz.logstore import draw_utilization, tree_graph
    from minidb.viz.logstore_demo import SCRIPT, tree_step

    steps = [lambda k=k: tree_step(k).figure for k in (0, 3, 8, 11, 12, 14, 15, 18)]
    return steps + [lambda: tree_graph(tree_step(19).picture),
                    lambda: draw_utilization(tree_step(len(SCRIPT)).env,
                                             title="live and obsolete bytes per log file, after the whole script")]


def _checkpoint_lecture() -> list[Callable[[], Figure]]:
    """The pictures of 10_checkpointer up to the JE documentation's cases (each replays from a fresh environment)."""
    from minidb.viz.checkpoint import draw_checkpoint, draw_dirty_map
    from minidb.viz.logstore import draw_tree_and_log, tree_and_log
    from minidb.viz.logstore_demo import checkpoint_demo_env

    def names(env) -> dict[int, str]:
        return {impl.id: impl.name for impl in env.db_tree.by_id.values()}

    def before() -> Figure:
        return draw_tree_and_log(tree_and_log(checkpoint_demo_env(), "accounts"),
                                 title="before the checkpoint (red outline: dirty)", show_records=False)

    def through(step: int):
        env = checkpoint_demo_env()
        run = env.checkpointer.start()
        run.through(step)
        return env, run

    def dirty_map() -> Figure:
        env, run = through(4)
        return draw_dirty_map(run.result.dirty_map, names(env), title="the dirty map by level, after step 4")

    def step5() -> Figure:
        return draw_checkpoint(through(5)[1].result, current_step=5)

    def finished() -> Figure:
        return draw_checkpoint(through(5)[1].finish())

    def full() -> Figure:
        env, run = through(5)
        run.finish()
        env.database("accounts").put("acct05", "5")
        return draw_checkpoint(env.checkpoint(minimize_recovery_time=True))

    return [before, dirty_map, step5, finished, full]


SPARK_ROWS = Path(__file__).with_name("notebook15_rows.json")


def spark_lecture_rows(spark: SparkSession, envs: str) -> dict[str, list[list]]:
    """The rows notebook 15 draws, by its own queries over the logs under ``envs``, as JSON values."""
    from minidb.spark import analytics

    logs = spark.read.format("minidb").load(envs).cache()
    try:
        txns = analytics.transactions(logs)
        queries = {
            "by_file": analytics.entries_by_file(logs),
            "sizes": analytics.transaction_sizes(txns),
            "checkpoints": analytics.checkpoints(logs),
            "streams": analytics.vlsn_streams(logs),
            "gaps": analytics.vlsn_gaps(logs),
            "duplicates": analytics.vlsn_duplicates(logs),
            "divergence": analytics.first_divergence(logs),
        }
        return {name: [list(r) for r in query.collect()] for name, query in queries.items()}
    finally:
        logs.unpersist()


def refresh_spark_rows(path: Path = SPARK_ROWS) -> None:
    """Generate the notebook's workload, run its queries on a local Spark, write :data:`SPARK_ROWS`."""
    import os
    import tempfile

    from minidb.spark.generate import GenerateRequest, generate
    from minidb.spark.session import spark_session

    with tempfile.TemporaryDirectory(prefix="minidb-nb15-") as work:
        envs = os.path.join(work, "envs")
        generate("log", GenerateRequest(envs, **SPARK_WORKLOAD))
        spark = spark_session("local[2]", "notebook 15 pictures", shuffle_partitions=4, progress=False,
                              jvm_log=os.path.join(work, "jvm.log"))
        try:
            rows = spark_lecture_rows(spark, envs)
        finally:
            spark.stop()
    path.write_text(json.dumps(rows, indent=None, separators=(",", ":")) + "\n", encoding="utf-8")


@lru_cache(maxsize=1)
def _spark_rows() -> dict[str, list[tuple]]:
    """The stored rows of notebook 15's queries (:data:`SPARK_ROWS`), each a tuple as Spark's rows are."""
    stored = json.loads(SPARK_ROWS.read_text(encoding="utf-8"))
    return {name: [tuple(r) for r in rows] for name, rows in stored.items()}


def _spark_lecture() -> list[Callable[[], Figure]]:
    """The four pictures of 15_spark_log_analytics, in the notebook's order."""
    from minidb.viz.pipeline import (
        draw_checkpoint_intervals,
        draw_entry_types_per_file,
        draw_transaction_sizes,
        draw_vlsn_streams,
    )

    def rows(name: str) -> list:
        return _spark_rows()[name]

    return [lambda: draw_entry_types_per_file(rows("by_file")),
            lambda: draw_transaction_sizes(rows("sizes")),
            lambda: draw_checkpoint_intervals(rows("checkpoints")),
            lambda: draw_vlsn_streams(rows("streams"), rows("gaps"), rows("duplicates"), rows("divergence"))]


def _log_space_lecture() -> list[Callable[[], Figure]]:
    """The pictures of 16_log_space, in the notebook's order (its default script)."""
    from minidb.viz.logspace_demo import crash_view, logspace_step, record_picture

    return ([lambda: logspace_step(8).figure, lambda: logspace_step(8).reservations]
            + [lambda k=k: logspace_step(k).figure for k in (11, 12, 13, 15, 20)]
            + [lambda k=k: record_picture("blob", k) for k in (25, 28, 32, 42)]
            + [lambda: crash_view(8, "tear a page").figure])


def _btree_lecture() -> list[Callable[[], Picture]]:
    """The pictures of 07_btree, in the notebook's order (its default script; trees are graphviz graphs)."""
    from minidb.viz.btree import tree_graph
    from minidb.viz.btree_demo import LOAD_SCRIPT, LOCKS_SCRIPT, SCRIPT, btree_step

    def tree(k: int) -> Callable[[], Picture]:
        return lambda: btree_step(k).figure

    def log(k: int) -> Callable[[], Picture]:
        return lambda: btree_step(k).log_figure

    def loaded(levels: int | None, title: str) -> Callable[[], Picture]:
        return lambda: tree_graph(btree_step(len(LOAD_SCRIPT), LOAD_SCRIPT).picture, levels=levels, title=title)

    return [tree(10), tree(12), log(12), tree(17), tree(19), log(19), tree(21), log(21), tree(30),
            log(len(SCRIPT)), tree(len(SCRIPT)), lambda: btree_step(12, LOCKS_SCRIPT).figure,
            loaded(1, "first the leaves, left to right"), loaded(None, "then the level above them: the root")]


def _rtree_lecture() -> list[Callable[[], Picture]]:
    """The pictures of 18_rtree, in the notebook's order (its default script)."""
    from minidb.viz.rtree_demo import SCRIPT, rtree_step

    return [lambda k=k: rtree_step(k).figure for k in (6, 9, 10, 12, 15, 19, 21, len(SCRIPT))]


def _cleaner_lecture() -> list[Callable[[], Figure]]:
    """The pictures of 11_cleaner_eraser, in the notebook's order (its default script)."""
    from minidb.viz.cleaner import draw_cleanings, draw_eraser_cycle, draw_erasure, draw_file_timeline
    from minidb.viz.cleaner_demo import SCRIPT, cleaner_step, run_script, step_of

    clean = step_of(SCRIPT, "clean")
    return [lambda: cleaner_step(clean - 1).figure, lambda: cleaner_step(clean).figure,
            lambda: draw_cleanings(run_script().cleanings, title="the files cleaned at step 13: live entries (green) "
                                                                 "migrated to the end of the log"),
            lambda: draw_file_timeline(run_script().snapshots, title="each log file's state after each step"),
            lambda: draw_erasure(run_script().erasures[0], title="the entry of the deleted record secret in file 3, "
                                                                 "before and after the eraser"),
            lambda: draw_eraser_cycle(run_script().erasures[0], title="the throttle's plan: each file's six components "
                                                                      "over the cycle's 24 hours")]


def _group_step(step: int) -> Callable[[], Picture]:
    """Notebook 13's stream picture after ``step`` operations of its script."""
    def draw() -> Picture:
        from minidb.viz.replication_demo import group_step
        return group_step(step).figure
    return draw


def _syncup_lecture() -> list[Callable[[], Picture]]:
    """The pictures of 14_syncup_rollback: JE's rollback example, then its default script's failover, then
    the same failover with n1 restarted from its disk (hard recovery)."""
    from minidb.viz.syncup_demo import failover_step, hard_recovery, je_rollback_example

    search = lambda: failover_step(7).searches[0]  # noqa: E731  (cached: the replay runs once)
    return [lambda: je_rollback_example().before_figure, lambda: je_rollback_example().after_figure,
            lambda: failover_step(4).figure, lambda: failover_step(5).figure,
            lambda: search().figure(1), lambda: search().figure(2), lambda: failover_step(7).figure,
            lambda: hard_recovery().figure]


def forgetful_twin() -> type:
    """The lock manager's twin broken on purpose, as notebook 17 defines it in a cell (a test keeps the two
    the same): a request reused from a spare head keeps its old duration."""
    from minidb.pagestore.lock import LOCK_MANAGER

    class ForgetfulTwin(LOCK_MANAGER.twin()):  # type: ignore[misc]
        """The twin, broken on purpose: a request reused from a spare head keeps its old duration."""

        def _first_request(self, st, lock_id, mode, duration, parent=None):
            spare = self._spare_heads
            old = spare[-1].queue[0].duration if spare and spare[-1].queue else None
            request = super()._first_request(st, lock_id, mode, duration, parent)
            if old is not None:
                request.duration = old  # the step skipped: the duration is not set again
            return request

    return ForgetfulTwin


def _fast_lecture() -> list[Callable[[], Figure]]:
    """The pictures of 17_making_it_fast: its default script profiled, then compared step by step."""
    from minidb.viz.fast import SCRIPT, draw_agreement, draw_call_counts, run

    def agreement() -> Figure:
        broken = run(SCRIPT, forgetful_twin(), name="broken twin")
        return draw_agreement(run(SCRIPT, "reference"), [run(SCRIPT, "fast"), broken])

    return [lambda: draw_call_counts([run(SCRIPT, "reference", profile=True), run(SCRIPT, "fast", profile=True)],
                                     top=12),
            agreement]


@lru_cache(maxsize=1)
def notebook_figures() -> dict[str, Callable[[], Picture]]:
    """Name -> a function that draws that picture of that notebook."""
    from minidb.logstore.cases import worked_case
    from minidb.replication.cases import worked_recovery_case
    from minidb.viz.bufferpool_demo import pool_step
    from minidb.viz.checkpoint import draw_worked_case, draw_worked_cases
    from minidb.viz.extents import draw_extent_map, extent_map_layout
    from minidb.viz.locks import draw_mode_tables, waits_for_dot
    from minidb.viz.locks_demo import SCENARIOS, detection_figure, lock_step, scenario_step
    from minidb.viz.logstore_demo import bank_writes, logstore_crash_demo
    from minidb.viz.overview import draw_layers
    from minidb.viz.page_demo import SCRIPT as PAGE_SCRIPT, fresh_page, page_step
    from minidb.viz.pages import draw_page, page_layout
    from minidb.viz.recovery_demo import recovery_view
    from minidb.viz.start_demo import crash_after
    from minidb.viz.vlsn import draw_buckets, draw_index, draw_recovery_case, index_picture
    from minidb.viz.vlsn_demo import bucket_example, holes_example, index_step, one_file_mappings, truncation_demo
    from minidb.viz.volume_demo import new_demo_volume, volume_step
    from minidb.viz.xct_demo import xct_step

    def buckets(lookup: int | None, title: str) -> Figure:
        found, truth = bucket_example(stride=4)
        return draw_buckets(found, truth, lookup=lookup, title=title)

    escalation = SCENARIOS["escalation"]

    pictures: dict[str, list[Callable[[], Picture]]] = {
        "00_start_here": [draw_layers, lambda: crash_after(5, "nothing").figure],
        "01_log": [lambda i=i: _log_lecture()[i] for i in range(4)],
        "02_pages": [lambda: draw_page(page_layout(fresh_page()), title="a formatted file page: 452 free bytes")]
                    + [lambda k=k: page_step(k).figure for k in (4, 5, 7, 9, 11)]
                    + [lambda: page_step(len(PAGE_SCRIPT) + 1, PAGE_SCRIPT + [("abort", "T4")]).figure],
        "03_volume_extents": [lambda: draw_extent_map(extent_map_layout(new_demo_volume()[3]),
                                                      title="a freshly formatted volume")]
                             + [lambda k=k: volume_step(k).figure for k in (1, 7, 11, 13, 16)],
        "04_buffer_pool": [lambda k=k: pool_step(k).figure for k in (2, 4, 5, 6, 9, 10)],
        "05_locks": [draw_mode_tables] + [lambda k=k: lock_step(k).figure for k in (2, 4)],
        "05b_deadlocks": [lambda: lock_step(6, escalation.script, **escalation.settings).figure]
                         + [lambda k=k: scenario_step("cycle", k).figure for k in (4, 5)]
                         + [lambda: detection_figure(scenario_step("cycle", 6)),
                            lambda: waits_for_dot(scenario_step("cycle", 6).detection[1],
                                                  title="the cycle T1 -> T2 -> T3 -> T1"),
                            lambda: scenario_step("upgrade", 4).figure],
        "06_transactions_records": [lambda k=k, since=since, page=page:
                                    getattr(xct_step(k, since=since), "page_figure" if page else "figure")
                                    for k, since, page in ((6, 0, True), (10, 6, False), (11, None, True),
                                                           (13, 11, True), (14, None, False), (14, None, True),
                                                           (20, 18, True), (22, 20, False))],
        "07_btree": _btree_lecture(),
        "08_aries_recovery": [lambda phase=phase: recovery_view(28, "everything", phase).figure
                              for phase in ("crashed", "analysis", "redo", "undo", "restarted")],
        "09_logstore_tree": _tree_lecture(),
        "10_checkpointer": _checkpoint_lecture()
                           + [lambda n=n: draw_worked_case(worked_case(n)) for n in (1, 2, 3)]
                           + [lambda: logstore_crash_demo(len(bank_writes()), "nothing", phase=8).figure],
        "11_cleaner_eraser": _cleaner_lecture(),
        "10b_je_eviction_bug": [lambda: draw_worked_cases([worked_case(3), worked_case(3, bug=True)])],
        "12_vlsn_index": [
            lambda: buckets(None, "the JE documentation's example, stride 4 (LSNs in decimal, as in the JE documentation)"),
            lambda: draw_buckets([holes_example((9, 15, 11), stride=2)], one_file_mappings(),
                                 title="puts 9, 15, 11 into one bucket of file 10, stride 2: 13 is a hole"),
            lambda: buckets(11, "looking up VLSN 11"),
            lambda: index_step(2).figure, lambda: index_step(3).figure, lambda: index_step(6).figure,
            lambda: draw_recovery_case(worked_recovery_case()),
            lambda: draw_index(index_picture(worked_recovery_case().recovered.vlsn_index), title="the recovered index",
                               vlsn_span=(60, 80)),
            lambda: draw_index(truncation_demo()[1], title="after two head truncations and a rollback of the tail"),
        ],
        "13_feeders_replicas": [_group_step(3), _group_step(6), _group_step(8)],
        "14_syncup_rollback": _syncup_lecture(),
        "15_spark_log_analytics": _spark_lecture(),
        "16_log_space": _log_space_lecture(),
        "17_making_it_fast": _fast_lecture(),
        "18_rtree": _rtree_lecture(),
    }
    return {f"{notebook}-{i}": make for notebook, makers in pictures.items()
            for i, make in enumerate(makers, start=1)}

