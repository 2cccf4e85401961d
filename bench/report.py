"""Shared helpers for the benchmarks: timing, scratch space, Markdown output.

Every benchmark module uses the same pieces so that its numbers are taken
the same way: the median of :data:`REPEATS` (five) runs, interleaved by
:func:`interleaved` (a, b, c, a, b, c, ...: a slow minute of the machine,
another process using the disk, falls on one run of every system rather than
on all runs of one, and one slow run does not decide a median), scratch files on the
disk that holds the repository (``bench/out/``, which git ignores; ``/tmp``
may be a RAM disk, where an fsync costs nothing), and one Markdown section
per benchmark in ``BENCHMARKS.md`` between ``<!-- bench:NAME begin -->`` and
``<!-- bench:NAME end -->``, so each benchmark rewrites only its own section.

Two implementations of minidb (:mod:`minidb.impl`): the *main* rows of every
table measure the one chosen with ``--impl`` (``fast`` by default: the
accelerated twins under ``minidb/fast/`` where they exist, the reference
elsewhere). Unless ``--impl`` was given, every minidb path is measured a
second time under the *reference*, through one helper, :func:`both`, which
runs a piece of work under each in turn (in this process by
:func:`minidb.impl.using`, in any process the work starts by
``$MINIDB_IMPL``); :func:`speedup_table` then adds to the section one table
of *fast ÷ reference*, a speed ratio: how many times faster the fast engine
ran the path (1.00× where no twin stands in yet). A bench that builds a part
of an engine itself (a log, a lock manager, a buffer pool), rather than
through the engine that would choose it, builds it through :func:`chosen`, so
that the part measured is the one the implementation runs. Baselines run no
minidb code and need no second run; where one measurement times both, the
second run's baseline figures are left unused.
"""

from __future__ import annotations

import contextlib
import datetime
import gc
import os
import platform
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from minidb import impl

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(REPO_ROOT, "bench", "out")
BENCHMARKS_MD = os.path.join(REPO_ROOT, "BENCHMARKS.md")
MB = 1_000_000  # rates are in decimal megabytes, like disk vendors' figures
REPEATS = 5     # runs behind every figure: its median
SCALE_VAR = "MINIDB_BENCH_SCALE"  # multiplies the sizes of the sections that read it (tests run them tiny)

INTRO = """\
# Benchmarks

Measurements of minidb next to simple baselines: raw `os.write`/`os.fsync`
on the same disk, and Python's `sqlite3`. Each benchmark is a module in
`bench/`; regenerate all of this file with `make bench`, or one section with
`.venv/bin/python -m bench NAME` (for example `log`).

The numbers come from one machine on one day (each section says which), so
the absolute rates mean little elsewhere. What matters are the ratios:
minidb against a baseline measured in the same run, on the same files,
with the same data. Every figure is the median of five runs, interleaved:
each round runs every system compared once (a, b, c, a, b, c, ...), so a
busy spell of the machine falls on all of them rather than on one.

Two sections set minidb beside other engines and beside itself: *peers*
measures it against the Python storage engines people use (ZODB, Durus,
bplustree, LMDB and sqlite3; `make bench` installs them as the `bench`
extra, and a peer that cannot be imported is skipped with a note), and
*scaling* measures how its costs grow with the number of keys, the buffer
pool, the log and the cleaner's work. `MINIDB_BENCH_SCALE=N` multiplies
their sizes.

minidb's rows (and the targets) measure its fast implementation (`--impl
fast`: the accelerated twins under `minidb/fast/` where they exist, the
reference elsewhere); each section's first line says so. Every minidb path is
measured again under the reference in the same run, and each section ends
with a table of *fast ÷ reference*: how many times faster the fast engine ran
the path. `.venv/bin/python -m bench --impl fast|reference NAME` measures one
implementation only, without that table.
"""


# -- implementations -----------------------------------------------------------
FAST, REFERENCE = impl.FAST, impl.ENGINE
MAIN_DEFAULT = FAST
T = TypeVar("T")
_main = MAIN_DEFAULT  # the implementation the main rows measure
_compare = True       # whether every minidb path is measured under the reference as well
_calls = 0            # calls of both(), whose parity picks which implementation runs first


def configure(main: str = MAIN_DEFAULT, compare: bool = True) -> None:
    """Measure the main rows under ``main``; with ``compare`` (only for ``fast``), the reference too."""
    global _main, _compare
    if main not in (FAST, REFERENCE):
        raise ValueError(f"implementation {main!r}: expected {FAST} or {REFERENCE}")
    _main, _compare = main, compare and main != REFERENCE


def main_impl() -> str:
    return _main


def comparing() -> bool:
    """Whether minidb's paths are measured under the reference as well as the main implementation."""
    return _compare


@contextlib.contextmanager
def running(which: str) -> Iterator[None]:
    """minidb's implementation ``which`` for the block: in this process, and in every process started in it."""
    before = os.environ.get(impl.ENV_VAR)
    os.environ[impl.ENV_VAR] = which
    try:
        with impl.using(which):
            yield
    finally:
        if before is None:
            del os.environ[impl.ENV_VAR]
        else:
            os.environ[impl.ENV_VAR] = before


def both(work: Callable[[], T]) -> tuple[T, T | None]:
    """``work()`` under the main implementation and under the reference (None when not comparing).

    ``work`` must do the whole of one minidb measurement, setting up its own
    files, so that the two runs measure the same thing. The order alternates
    from call to call: the second of two runs often finds caches warm, and
    over a section's repetitions neither implementation is always second."""
    global _calls
    if not _compare:
        with running(_main):
            return work(), None
    _calls += 1
    results = {}
    for which in (_main, REFERENCE) if _calls % 2 else (REFERENCE, _main):
        with running(which):
            results[which] = work()
    return results[_main], results[REFERENCE]


def both_in(prefix: str, work: Callable[[str], T]) -> tuple[T, T | None]:
    """:func:`both` for work on files: each run gets a fresh :func:`scratch_dir` to work in."""
    def in_scratch() -> T:
        with scratch_dir(prefix) as path:
            return work(path)
    return both(in_scratch)


def pick(pairs: Sequence[tuple[dict, dict | None]], key: str) -> list[tuple[float, float | None]]:
    """From runs of :func:`both` whose results are dicts, the ``(main, reference)`` values of ``key``."""
    return [(main[key], None if reference is None else reference[key]) for main, reference in pairs]


@dataclass
class Speedup:
    """One minidb path measured under both implementations: medians in ``unit``, of which more (a rate)
    or less (a time, ``higher_is_faster=False``) is faster."""
    path: str
    unit: str
    main: float
    reference: float | None
    higher_is_faster: bool = True

    @classmethod
    def of(cls, path: str, unit: str, pairs: Sequence[tuple[float, float | None]],
           higher_is_faster: bool = True) -> Speedup:
        """The medians of the runs' ``(main, reference)`` values, as :func:`both` returned them."""
        references = [r for _, r in pairs if r is not None]
        return cls(path, unit, median([m for m, _ in pairs]), median(references) if references else None,
                   higher_is_faster)

    @property
    def ratio(self) -> float | None:
        """How many times faster the main implementation ran the path than the reference."""
        if self.reference is None:
            return None
        return self.main / self.reference if self.higher_is_faster else self.reference / self.main


SPEEDUP_COLUMN = f"{FAST} ÷ {REFERENCE}"


def speedup_table(rows: Sequence[Speedup]) -> str:
    """The section's table of minidb paths under both implementations ("" when only one was measured)."""
    if not _compare:
        return ""
    cells = [[r.path, f"{fmt_figure(r.main)} {r.unit}",
              f"{fmt_figure(r.reference)} {r.unit}" if r.reference is not None else "—",
              fmt_ratio(r.ratio) if r.ratio is not None else "—"] for r in rows]
    return (f"Every minidb path above, measured again under the {REFERENCE} implementation (`--impl {REFERENCE}`) "
            f"in the same run; *{SPEEDUP_COLUMN}* is a speed ratio: how many times faster the {FAST} engine ran "
            f"it (above 1× it is faster; 1.00× up to noise where no twin stands in yet).\n\n"
            + table(["minidb path", _main, REFERENCE, SPEEDUP_COLUMN], cells, right=(1, 2, 3)))


def impl_words() -> str:
    """Which implementation the main rows measured, for a section's intro line."""
    return f"minidb's {_main} implementation (`--impl {_main}`)"


# -- scratch space and timing -------------------------------------------------
@contextlib.contextmanager
def scratch_dir(prefix: str) -> Iterator[str]:
    """A fresh directory under ``bench/out/`` (the repository's disk), removed afterwards."""
    os.makedirs(OUT_DIR, exist_ok=True)
    path = tempfile.mkdtemp(prefix=prefix, dir=OUT_DIR)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def fsync_path(path: str) -> None:
    """Make a file's data durable, or a directory's entries (so a later file fsync does not pay for them)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def crash_copy(source: str, target: str, names: Sequence[str] | None = None) -> None:
    """Copy the files a crash left (all of ``source``, or only ``names`` in it) into ``target``, and make
    the copies durable before anything is timed.

    A crash leaves its files on disk. A fresh copy is still in the page cache, waiting to be written
    back, and the first fsync of a copied file (a restart's, when it writes its pages) would pay for
    writing back the whole copy: a cost of the benchmark's own copying, not of recovery.
    """
    os.makedirs(target, exist_ok=True)
    for name in sorted(os.listdir(source)) if names is None else names:
        copied = os.path.join(target, name)
        shutil.copy2(os.path.join(source, name), copied)
        fsync_path(copied)
    fsync_path(target)


def timed(work: Callable[[], object]) -> float:
    """Seconds taken by ``work()``.

    Garbage from setup is collected first, so a collection it would trigger
    does not land inside the measurement of whoever happens to run next.
    """
    gc.collect()
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def timed_threads(workers: Sequence[Callable[[], object]]) -> float:
    """Seconds from the moment all ``workers`` are ready until the last one ends.

    Each worker runs in its own thread. The barrier keeps thread start-up out
    of the measurement; an exception in a worker is re-raised here.
    """
    barrier = threading.Barrier(len(workers) + 1)
    errors: list[BaseException] = []

    def body(work: Callable[[], object]) -> None:
        barrier.wait()
        try:
            work()
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(w,)) for w in workers]
    for thread in threads:
        thread.start()
    gc.collect()
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    if errors:
        raise errors[0]
    return elapsed


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def interleaved(work: dict[Any, Callable[[], T]], repeats: int | None = None,
                step: Callable[[], object] | None = None) -> dict[Any, list[T]]:
    """``repeats`` (:data:`REPEATS`) results of each named ``work()``, run in turn: a, b, c, a, b, c, ...

    Interleaving spreads whatever else the machine is doing over every system alike; measuring a
    five times and then b five times would hand a busy minute to one of them. ``step`` is called
    after each run (a progress bar's update, say)."""
    results: dict[Any, list[T]] = {name: [] for name in work}
    for _ in range(REPEATS if repeats is None else repeats):
        for name, run in work.items():
            results[name].append(run())
            if step is not None:
                step()
    return results


def scale() -> float:
    """The factor ``$MINIDB_BENCH_SCALE`` asks for (1 when unset): sections that read it multiply their sizes."""
    value = os.environ.get(SCALE_VAR, "1")
    try:
        factor = float(value)
    except ValueError:
        raise SystemExit(f"{SCALE_VAR}={value!r}: expected a number such as 0.01 or 10") from None
    if factor <= 0:
        raise SystemExit(f"{SCALE_VAR}={value!r}: expected a number above 0")
    return factor


def scaled(size: int, least: int = 1) -> int:
    """``size`` times :func:`scale`, at least ``least``."""
    return max(least, round(size * scale()))


# -- Markdown -----------------------------------------------------------------
def machine_line() -> str:
    """One line naming the machine and software the numbers come from, minidb's implementation included."""
    cpu = _cpu_model() or platform.machine()
    return (
        f"{os.cpu_count()} CPUs ({cpu}), {platform.platform()}, "
        f"Python {platform.python_version()}, {impl_words()}"
    )


def file_system(path: str = REPO_ROOT) -> str:
    """The file system type and device holding ``path`` (what an fsync depends on most)."""
    path = os.path.realpath(path)
    best = ("", "unknown file system")
    try:
        with open("/proc/mounts", encoding="utf-8") as f:
            for line in f:
                device, mount, kind = line.split()[:3]
                inside = path == mount or path.startswith(mount.rstrip("/") + "/")
                if inside and len(mount) >= len(best[0]):  # the deepest mount wins
                    best = (mount, f"{kind} on {device}")
    except OSError:
        pass
    return best[1]


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def run_date() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> str:
    """A Markdown table; columns whose index is in ``right`` are right-aligned (numbers)."""
    rule = ["---:" if i in right else "---" for i in range(len(headers))]
    lines = [headers, rule, *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def fmt_rate(value: float) -> str:
    """A rate with as many digits as are meaningful: 163,498 / 12.3 / 0.42."""
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def fmt_figure(value: float) -> str:
    """A rate or a time: :func:`fmt_rate` from 100 up, three significant digits below (0.00481)."""
    return fmt_rate(value) if value >= 100 else f"{value:.3g}"


def fmt_ratio(value: float, digits: int = 2) -> str:
    """A ratio as ``0.12×``; a figure held against a target near it may ask for more digits."""
    return f"{value:.{digits}f}×"


def fmt_ratio_small(value: float) -> str:
    """A ratio as :func:`fmt_ratio` writes it, or with two significant digits below 0.1× (0.0042×): none reads 0.00×."""
    return fmt_ratio(value) if value >= 0.1 else f"{value:.2g}×"


# -- BENCHMARKS.md ------------------------------------------------------------
def markers(name: str) -> tuple[str, str]:
    return f"<!-- bench:{name} begin -->", f"<!-- bench:{name} end -->"


def replace_section(document: str, name: str, body: str) -> str:
    """``document`` with section ``name`` set to ``body``; appended if absent.

    Everything outside the markers, the other sections included, is kept.
    """
    begin, end = markers(name)
    section = f"{begin}\n{body.strip()}\n{end}"
    start = document.find(begin)
    stop = document.find(end, start)
    if start < 0 or stop < 0:
        return document.rstrip("\n") + "\n\n" + section + "\n"
    return document[:start] + section + document[stop + len(end):]


def write_section(name: str, body: str, path: str = BENCHMARKS_MD) -> None:
    """Rewrite section ``name`` of ``BENCHMARKS.md`` (created with the intro if missing)."""
    try:
        with open(path, encoding="utf-8") as f:
            document = f.read()
    except FileNotFoundError:
        document = INTRO
    updated = replace_section(document, name, body)
    # Written aside and renamed, so an interrupted run never leaves half a file.
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(updated)
    os.replace(temporary, path)
