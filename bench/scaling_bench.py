"""How minidb's costs grow with the size of what it holds.

What it measures, through public APIs only, on real files in ``bench/out/``:

(a) *µs per get and per put* of the page store's B+tree and of the log store, at each of
    :data:`KEY_COUNTS` keys (16-byte keys, 100-byte values, seeded): the store is built once per
    size, untimed (the B+tree by its bulk load at fill 0.7, about what random inserts leave; the log
    store by puts), then each run times :func:`sample` gets of existing keys and as many puts of new
    keys, in random order. The runs add keys (five samples: a few per cent at the smallest size);
(b) *buffer-pool miss cost*: a pool of each of :data:`FRAMES` frames over a volume of that many
    pages plus :data:`MISSES`, filled with the first pages (clean; or each fixed EX and unfixed
    dirty), then :data:`MISSES` fixes of pages not in the pool: each evicts one, and in the dirty
    case writes it first, with the dirty frames ahead of it (its log records are already on disk,
    so the write-ahead rule costs no fsync). µs per miss. The first miss after the fill clears the
    reference bit of every frame the hand passes (the fill set them all): the clock's cost is
    constant amortised over the misses, so enough misses are timed for that first sweep to be
    spread over them (fifty, at 16,384 frames, would each carry a share of 16,384 bits);
(c) *log-store recovery*: a log of each of :data:`RECOVERY_MB` written by puts with no checkpoint
    after the first, abandoned as a crash leaves it (:func:`bench.report.crash_copy`), then opened:
    entries read per second;
(d) *cleaner*: a log of each of :data:`CLEANER_MB` in 128 KiB files in which every record was
    written :data:`ROUNDS` times (so about one byte in eight is live, at every size), checkpointed
    and closed; each run opens a fresh copy and times ``env.clean_log()``: MB of files cleaned per
    second;
(e) *crash sweep cost at N and 2N operations*: for each engine of :data:`SWEEP_OPS`, the crash
    sweeps (:mod:`minidb.crashtest`) of seeds ``0 .. SWEEP_SEEDS - 1`` at N operations and at 2N
    (the same seeds, so the longer workload starts as the shorter one did), every one with no
    violation; the CPU seconds of this process (a sweep is single-threaded, and CPU time leaves
    out what else a busy machine runs) and the crash points. The figure is the ratio, 2N ÷ N: a
    crash point should cost what its recovery interval costs, so twice the workload should cost
    about twice the time (more points, each no dearer), not the square.

Each figure is the median of :data:`bench.report.REPEATS` runs, interleaved across the sizes (every
size once, then again); a sweep runs :data:`SWEEP_REPEATS` times (once: its work is the same every
run, and its CPU time leaves out what else the machine runs). Only the main implementation runs here.

Targets: a miss with 16,384 frames costs at most 1.5× one with 64 (the clock hand's work per
eviction must not grow with the pool); recovery of the largest log reads at least 0.9× the
entries per second of the smallest and at least 150,000; the cleaner cleans the largest log at
least 0.8× as fast (MB/s) as the smallest; each engine's crash sweep at 2N operations costs at most
2.5× its sweep at N.

Sizes: ``$MINIDB_BENCH_SCALE`` multiplies the key counts, log sizes and misses (not the frames),
and the sweeps' seeds (their operations only below 1). At the default 1 the section takes three to five
minutes on two busy cores (the sweeps about a minute of it); at 10 it runs 10,000,
100,000 and 1,000,000 keys, recovery at 10, 50 and 200 MB and the cleaner at 2, 20 and 100 MB
(about forty minutes here: building a log store of a million keys by puts alone takes minutes).

Parts: ``$MINIDB_SCALING_PARTS`` names the parts to run, as letters (``c``: recovery alone, ``ad``:
gets and puts, and the cleaner); unset, all five run. The section then holds those parts and their
targets only, so a part measured alone is best written elsewhere than ``BENCHMARKS.md``
(``MINIDB_SCALING_PARTS=c python -m bench --out /tmp/scaling.md scaling``).
"""

from __future__ import annotations

import gc
import importlib
import os
import random
import time
from collections.abc import Callable

from tqdm import tqdm

from bench import report
from bench.pagestore_bench import PAGE_SIZE, fill_pages
from minidb import impl
from minidb.io import OSDisk
from minidb.log import LogManager
from minidb.logstore import Environment, EnvironmentConfig
from minidb.pagestore import EX, SH, BufferPool, StorageManager, Volume

SEED = 2027
KEY_COUNTS = tuple(sorted({report.scaled(n, 50) for n in (1_000, 10_000, 100_000)}))  # distinct when tiny
KEY_SIZE, VALUE_SIZE = 16, 100
FRAMES = (64, 512, 4_096, 16_384)
MISSES = report.scaled(2_000, 50)
RECOVERY_MB = tuple(mb * report.scale() for mb in (1, 5, 20))
CLEANER_MB = tuple(mb * report.scale() for mb in (0.2, 2, 10))
ROUNDS = 8
CLEANER_FILE = 128 * 1024
RECORD_BYTES = 180  # about what one put of a 16-byte key and a 100-byte value adds to the log
SWEEP_OPS = {engine: min(ops, report.scaled(ops, 2))  # N: the suite's sizes, or less when tiny
             for engine, ops in (("logstore", 12), ("pagestore", 16), ("btree", 20))}
SWEEP_SEEDS = report.scaled(3)
SWEEP_REPEATS = 1  # a sweep does the same work every run, and CPU time leaves out the rest of the machine
SWEEP_MOST = 2.5  # the longest a sweep at 2N operations may take, in sweeps at N
BTREE, LOGSTORE = "page-store B+tree", "log store"
PARTS_VAR = "MINIDB_SCALING_PARTS"
ALL_PARTS = "abcde"


def parts() -> str:
    """The parts ``$MINIDB_SCALING_PARTS`` asks for, in order (all of them when unset or empty)."""
    value = os.environ.get(PARTS_VAR, "").strip().lower() or ALL_PARTS
    unknown = sorted(set(value) - set(ALL_PARTS))
    if unknown:
        raise SystemExit(f"{PARTS_VAR}={value!r}: parts are the letters {ALL_PARTS} (unknown: {''.join(unknown)})")
    return "".join(part for part in ALL_PARTS if part in value)


def pairs(count: int, rng: random.Random) -> list[tuple[bytes, bytes]]:
    return [(rng.randbytes(KEY_SIZE), rng.randbytes(VALUE_SIZE)) for _ in range(count)]


def sample(keys: int) -> int:
    """Operations timed per run at ``keys`` keys: enough to time, few enough not to grow the store much."""
    return max(50, min(2_000, keys // 10))


def config(**overrides) -> EnvironmentConfig:
    settings = dict(checkpoint_bytes_interval=None, trace=False, file_max=64 * 1024 * 1024)
    settings.update(overrides)
    return EnvironmentConfig(**settings)


# -- (a) gets and puts at each size ---------------------------------------------------------------
class SizedStore:
    """A store of ``count`` keys in ``path`` with a per-run ``measure()``: µs per get and per put."""

    def __init__(self, path: str, count: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.data = pairs(count, self.rng)
        self.keys = [k for k, _ in self.data]
        self.n = sample(count)

    def measure(self) -> dict[str, float]:
        probes = self.rng.sample(self.keys, min(self.n, len(self.keys)))
        fresh = pairs(self.n, self.rng)
        gets = report.timed(lambda: self.get_all(probes))
        puts = report.timed(lambda: self.put_all(fresh))
        self.keys.extend(k for k, _ in fresh)
        return {"get": gets / len(probes) * 1e6, "put": puts / len(fresh) * 1e6}


class BTreeStore(SizedStore):
    def __init__(self, path: str, count: int, seed: int) -> None:
        super().__init__(path, count, seed)
        grown = count + 6 * self.n  # the keys the runs add
        pages = 256 + grown * 260 // PAGE_SIZE
        self.sm = StorageManager.format(OSDisk(path, create=True), num_pages=pages, page_size=PAGE_SIZE,
                                        frames=pages, file_max=64 * 1024 * 1024, restart_trace=False)
        with self.sm.transaction() as t:
            self.index, _ = self.sm.bulk_load_index(t, "bytes", sorted(self.data), fill=0.7)
        self.data = []

    def get_all(self, keys: list[bytes]) -> None:
        sm, index = self.sm, self.index
        with sm.transaction(durable=False) as t:
            for key in keys:
                if not sm.index_lookup(t, index, key):
                    raise RuntimeError(f"the B+tree lost {key!r}")

    def put_all(self, items: list[tuple[bytes, bytes]]) -> None:
        sm, index = self.sm, self.index
        with sm.transaction(durable=False) as t:
            for key, value in items:
                sm.index_insert(t, index, key, value)

    def close(self) -> None:
        self.sm.close()


class LogStore(SizedStore):
    def __init__(self, path: str, count: int, seed: int) -> None:
        super().__init__(path, count, seed)
        self.env = Environment.open(OSDisk(path, create=True), config())
        self.db = self.env.database("bench")
        for key, value in self.data:
            self.db.put(key, value)
        self.env.sync()
        self.data = []

    def get_all(self, keys: list[bytes]) -> None:
        get = self.db.get
        for key in keys:
            if get(key) is None:
                raise RuntimeError(f"the log store lost {key!r}")

    def put_all(self, items: list[tuple[bytes, bytes]]) -> None:
        put = self.db.put
        for key, value in items:
            put(key, value)

    def close(self) -> None:
        self.env.close()


def operations(progress: Callable[[], object]) -> dict[tuple[str, int], dict[str, float]]:
    """Medians of µs per get and per put, by (engine, keys)."""
    with report.scratch_dir("scaling-ops-") as where:
        stores: dict[tuple[str, int], SizedStore] = {}
        try:
            for count in KEY_COUNTS:
                for name, kind in ((BTREE, BTreeStore), (LOGSTORE, LogStore)):
                    path = os.path.join(where, f"{kind.__name__}-{count}")
                    stores[name, count] = kind(path, count, SEED + count)
                    progress()
            runs = report.interleaved({key: store.measure for key, store in stores.items()}, step=progress)
        finally:
            for store in stores.values():
                store.close()
    return {key: {op: report.median([r[op] for r in rows]) for op in ("get", "put")} for key, rows in runs.items()}


# -- (b) buffer-pool misses ---------------------------------------------------------------------------
class Pool:
    """A volume of ``frames`` + :data:`MISSES` written pages, and a fresh pool of ``frames`` per run."""

    def __init__(self, path: str, frames: int) -> None:
        self.frames = frames
        disk = OSDisk(path, create=True)
        self.log = impl.current(LogManager)(disk, file_max=256 * 1024 * 1024)
        bp = impl.current(BufferPool)(256, page_size=PAGE_SIZE, log=self.log)
        count = frames + MISSES
        extents = 8
        self.volume = impl.current(Volume).format(disk, bp, self.log, num_pages=count + 64 * extents,
                                                  ext_sz=extents)
        self.pids = fill_pages(self.volume, self.log, bp, count)

    def miss_us(self, dirty: bool) -> float:
        bp = impl.current(BufferPool)(self.frames, page_size=PAGE_SIZE, log=self.log)
        bp.register(self.volume.file)
        mode = EX if dirty else SH
        for pid in self.pids[:self.frames]:  # the pool full: every frame holds a page
            bp.unfix(bp.fix(pid, mode), dirty=dirty)
        missing = self.pids[self.frames:]
        random.Random(SEED).shuffle(missing)

        def work() -> None:
            fix, unfix = bp.fix, bp.unfix
            for pid in missing:
                unfix(fix(pid, mode), dirty=dirty)

        hits = bp.stats["nHits"]
        seconds = report.timed(work)
        if bp.stats["nHits"] != hits:
            raise RuntimeError("a fix meant to miss found its page in the pool")
        return seconds / len(missing) * 1e6

    def close(self) -> None:
        self.log.close()


def misses(progress: Callable[[], object]) -> dict[tuple[int, bool], float]:
    """Median µs per miss by (frames, dirty)."""
    with report.scratch_dir("scaling-pool-") as where:
        pools = {}
        try:
            for frames in FRAMES:
                pools[frames] = Pool(os.path.join(where, str(frames)), frames)
                progress()
            runs = report.interleaved({(frames, dirty): (lambda p=pool, d=dirty: p.miss_us(d))
                                       for frames, pool in pools.items() for dirty in (False, True)}, step=progress)
        finally:
            for pool in pools.values():
                pool.close()
    return {key: report.median(values) for key, values in runs.items()}


# -- (c) recovery ----------------------------------------------------------------------------------------
def crashed_log(where: str, megabytes: float) -> tuple[str, float, int]:
    """A log store of about ``megabytes`` since its checkpoint, copied as a crash leaves it: (copy, MB, puts)."""
    live, crashed = os.path.join(where, "live"), os.path.join(where, "crashed")
    env = Environment.open(OSDisk(live, create=True), config())
    db, rng = env.database("bench"), random.Random(SEED)
    puts = 0
    while puts == 0 or env.log.stats["nBytes"] < megabytes * report.MB:
        for key, value in pairs(1_000, rng):
            db.put(key, value)
        puts += 1_000
    env.sync()
    written = env.log.stats["nBytes"] / report.MB
    report.crash_copy(live, crashed)
    env.log.close()  # abandoned: nothing more is written to the live files either
    return crashed, written, puts


def recovery_rate(crashed: str, puts: int) -> float:
    """Entries per second read by recovery opening a fresh copy of ``crashed``."""
    with report.scratch_dir("scaling-recover-") as path:
        report.crash_copy(crashed, path)
        opened: list[Environment] = []
        seconds = report.timed(lambda: opened.append(Environment.open(OSDisk(path), config())))
        env = opened[0]
        entries = env.recovery_info.entries_read
        if len(env.database("bench").keys()) != puts:
            raise RuntimeError("recovery lost records")
        env.close()
    return entries / seconds


def recoveries(progress: Callable[[], object]) -> dict[float, tuple[float, float]]:
    """(MB of log, median entries/s) by target size."""
    with report.scratch_dir("scaling-crash-") as where:
        logs = {}
        for megabytes in RECOVERY_MB:
            os.makedirs(os.path.join(where, f"{megabytes:g}"))
            logs[megabytes] = crashed_log(os.path.join(where, f"{megabytes:g}"), megabytes)
            progress()
        runs = report.interleaved({mb: (lambda log=log: recovery_rate(log[0], log[2])) for mb, log in logs.items()},
                                  step=progress)
    return {mb: (logs[mb][1], report.median(rates)) for mb, rates in runs.items()}


# -- (d) the cleaner ---------------------------------------------------------------------------------------
def churned_log(path: str, megabytes: float) -> float:
    """A closed log store in ``path`` of about ``megabytes``, every record written ROUNDS times: its MB."""
    env = Environment.open(OSDisk(path, create=True), config(file_max=CLEANER_FILE))
    db, rng = env.database("bench"), random.Random(SEED)
    least = 4 * CLEANER_FILE  # a few files at least, or there is nothing to clean
    keys = [rng.randbytes(KEY_SIZE) for _ in range(int(max(least, megabytes * report.MB) / ROUNDS / RECORD_BYTES))]
    for _ in range(ROUNDS):
        for key in keys:
            db.put(key, rng.randbytes(VALUE_SIZE))
    env.checkpoint()
    env.close()
    return sum(os.path.getsize(os.path.join(path, n)) for n in os.listdir(path) if n.endswith(".jdb")) / report.MB


def cleaner_rate(churned: str) -> float:
    """MB of log files per second that ``clean_log()`` cleans in a fresh copy of ``churned``."""
    with report.scratch_dir("scaling-clean-") as path:
        report.crash_copy(churned, path)
        env = Environment.open(OSDisk(path), config(file_max=CLEANER_FILE))
        sizes = {n: os.path.getsize(os.path.join(path, f"{n:08x}.jdb"))
                 for n in range(env.log.head, env.log.end_lsn.file)}
        done = []
        seconds = report.timed(lambda: done.extend(env.clean_log()))
        cleaned = sum(sizes[c.file_number] for c in done if c.cleaned)
        env.close()
    if not cleaned:
        raise RuntimeError("the cleaner cleaned nothing")
    return cleaned / report.MB / seconds


def cleanings(progress: Callable[[], object]) -> dict[float, tuple[float, float]]:
    """(MB of log, median MB/s cleaned) by target size."""
    with report.scratch_dir("scaling-churn-") as where:
        logs = {}
        for megabytes in CLEANER_MB:
            path = os.path.join(where, f"{megabytes:g}")
            logs[megabytes] = (path, churned_log(path, megabytes))
            progress()
        runs = report.interleaved({mb: (lambda p=log[0]: cleaner_rate(p)) for mb, log in logs.items()}, step=progress)
    return {mb: (logs[mb][1], report.median(rates)) for mb, rates in runs.items()}


# -- (e) crash sweeps ---------------------------------------------------------------------------------------
def sweep_cost(engine: str, ops: int) -> tuple[float, int]:
    """(CPU seconds, crash points) of ``engine``'s crash sweeps of seeds 0 .. SWEEP_SEEDS - 1 at ``ops``
    operations; a violation stops the bench (a sweep that finds one is not measured)."""
    crash_sweep = importlib.import_module(f"minidb.crashtest.{engine}").crash_sweep
    points = 0
    gc.collect()
    start = time.process_time()
    for seed in range(SWEEP_SEEDS):
        result = crash_sweep(seed, ops)
        if not result.ok:
            raise RuntimeError(f"the {engine} crash sweep of seed {seed} at {ops} operations: {result.violations[:2]}")
        points += result.points
    return time.process_time() - start, points


def sweeps(progress: Callable[[], object]) -> dict[tuple[str, int], tuple[float, int]]:
    """(median CPU seconds, crash points) by (engine, operations), at N and 2N for each engine."""
    work = {(engine, n): (lambda e=engine, o=n: sweep_cost(e, o))
            for engine, ops in SWEEP_OPS.items() for n in (ops, 2 * ops)}
    runs = report.interleaved(work, repeats=SWEEP_REPEATS, step=progress)
    return {key: (report.median([seconds for seconds, _ in rows]), rows[0][1]) for key, rows in runs.items()}


# -- the report ---------------------------------------------------------------------------------------------
RECOVERY_FLOOR = 150_000  # entries/s at the largest size


def verdict(value: float, least: float, text: str, ratio: bool = True) -> list[str]:
    """A target row: what, the target, the value (a ratio, or a rate), ✓/✗ and how far above or below it."""
    shown = (report.fmt_ratio(least), report.fmt_ratio_small(value)) if ratio else (f"{least:,}", report.fmt_rate(value))
    return [text, f"≥ {shown[0]}", shown[1], f"{'✓' if value >= least else '✗'} {value / least - 1:+.0%}"]


def at_most(value: float, most: float, text: str) -> list[str]:
    """A target row for a ratio that must stay at or below ``most`` (margin: how far below it the value is)."""
    return [text, f"≤ {report.fmt_ratio(most)}", report.fmt_ratio(value),
            f"{'✓' if value <= most else '✗'} {most / value - 1:+.0%}"]


def run() -> str:
    chosen = parts()
    steps = {"a": len(KEY_COUNTS) * 2 * (1 + report.REPEATS), "b": len(FRAMES) * (1 + 2 * report.REPEATS),
             "c": len(RECOVERY_MB) * (1 + report.REPEATS), "d": len(CLEANER_MB) * (1 + report.REPEATS),
             "e": 2 * len(SWEEP_OPS) * SWEEP_REPEATS}
    with tqdm(total=sum(steps[p] for p in chosen), desc="bench scaling", unit="step", leave=False) as bar:
        ops = operations(bar.update) if "a" in chosen else {}
        pool = misses(bar.update) if "b" in chosen else {}
        recovered = recoveries(bar.update) if "c" in chosen else {}
        cleaned = cleanings(bar.update) if "d" in chosen else {}
        swept = sweeps(bar.update) if "e" in chosen else {}
    sections, targets = [], []
    if ops:
        op_rows = [[f"{count:,}", *(f"{ops[engine, count][op]:.1f}" for engine in (BTREE, LOGSTORE)
                                    for op in ("get", "put"))] for count in KEY_COUNTS]
        sections.append(f"""**Gets and puts by size.** Each store is built once (the B+tree by bulk load at fill 0.7 into a pool
that holds it, the log store by puts, everything in memory), then every run times gets of existing keys
and puts of new ones in random order ({", ".join(f"{sample(n):,}" for n in KEY_COUNTS)} of each per run,
one non-durable transaction each for the B+tree, no transaction for the log store). µs per operation:

{report.table(["keys", f"{BTREE} get µs", f"{BTREE} put µs", f"{LOGSTORE} get µs", f"{LOGSTORE} put µs"],
              op_rows, right=range(5))}
""")
    if pool:
        pool_rows = [[f"{frames:,}", f"{pool[frames, False]:.1f}", f"{pool[frames, True]:.1f}"] for frames in FRAMES]
        sections.append(f"""**Buffer-pool misses by pool size.** A pool of N frames filled with the first N pages of a volume of
N + {MISSES:,} written pages, then {MISSES:,} fixes of the others, each a miss that evicts a page
(clean: fixed SH; dirty: every page fixed EX and unfixed dirty, so a miss writes its victim, with the
dirty frames just ahead of it, which the next misses then take clean; the log is on disk, so no fsync).
The fill leaves every reference bit set, so the hand's first sweep clears them all; that cost is spread
over the {MISSES:,} misses, as the clock's constant time is amortised.
The operating system's page cache holds the volume. µs per miss:

{report.table(["frames", "clean pool µs", "dirty pool µs"], pool_rows, right=range(3))}
""")
        small, large = FRAMES[0], FRAMES[-1]
        targets += [
            verdict(pool[small, False] / pool[large, False], 1 / 1.5,
                    f"clean miss at {small} frames ÷ at {large:,} (at most 1.5× the cost)"),
            verdict(pool[small, True] / pool[large, True], 1 / 1.5,
                    f"dirty miss at {small} frames ÷ at {large:,} (at most 1.5× the cost)"),
        ]
    if recovered:
        rec_rows = [[f"{mb:g}", f"{size:.1f}", report.fmt_rate(rate)] for mb, (size, rate) in recovered.items()]
        sections.append(f"""**Log-store recovery by log size.** Puts after the opening checkpoint and none since, synced, the files
copied as a crash leaves them; opening the copy runs recovery (read, redo, a checkpoint of its own):

{report.table(["target MB", "log MB", "entries read/s"], rec_rows, right=range(3))}
""")
        first_rec, last_rec = recovered[RECOVERY_MB[0]][1], recovered[RECOVERY_MB[-1]][1]
        targets += [
            verdict(last_rec / first_rec, 0.9, f"recovery entries/s at {RECOVERY_MB[-1]:g} MB ÷ at {RECOVERY_MB[0]:g} MB"),
            verdict(last_rec, RECOVERY_FLOOR, f"recovery entries/s at {RECOVERY_MB[-1]:g} MB", ratio=False),
        ]
    if cleaned:
        clean_rows = [[f"{mb:g}", f"{size:.1f}", f"{rate:.2f}"] for mb, (size, rate) in cleaned.items()]
        sections.append(f"""**Cleaner by log size.** Logs in {CLEANER_FILE // 1024} KiB files where each record was written
{ROUNDS} times (about one byte in {ROUNDS} live at every size), checkpointed and closed; each run opens a
fresh copy and times `env.clean_log()` until the selector finds nothing. MB of files cleaned per second:

{report.table(["target MB", "log MB", "cleaned MB/s"], clean_rows, right=range(3))}
""")
        first_clean, last_clean = cleaned[CLEANER_MB[0]][1], cleaned[CLEANER_MB[-1]][1]
        targets.append(verdict(last_clean / first_clean, 0.8,
                               f"cleaner MB/s at {CLEANER_MB[-1]:g} MB ÷ at {CLEANER_MB[0]:g} MB"))
    if swept:
        sweep_rows = [[engine, f"{ops}", f"{swept[engine, ops][1]:,}", f"{swept[engine, ops][0]:.2f}",
                       f"{swept[engine, 2 * ops][1]:,}", f"{swept[engine, 2 * ops][0]:.2f}",
                       report.fmt_ratio(swept[engine, 2 * ops][0] / swept[engine, ops][0])]
                      for engine, ops in SWEEP_OPS.items()]
        sections.append(f"""**Crash sweep cost at N and 2N operations.** Each engine's crash sweeps (every crash point of the
workload recovered and checked, `minidb crashtest ENGINE`) of seeds 0 to {SWEEP_SEEDS - 1}, at N operations
and at 2N (N: the operations of the suite's sweeps), none with a violation; CPU seconds of the
benchmark's process, one run of each (a sweep does the same work every run). Twice the workload should
cost about twice the time:

{report.table(["engine", "N", "points at N", "s at N", "points at 2N", "s at 2N", "2N ÷ N"], sweep_rows,
              right=range(1, 7))}
""")
        targets += [at_most(swept[engine, 2 * ops][0] / swept[engine, ops][0], SWEEP_MOST,
                            f"crash sweep {engine}: time at {2 * ops} operations ÷ at {ops}")
                    for engine, ops in SWEEP_OPS.items()]
    body = "\n".join(sections)
    only = "" if chosen == ALL_PARTS else f" Only part{'s' if len(chosen) > 1 else ''} {', '.join(chosen)} ran here."
    return f"""\
## How costs grow (`bench/scaling_bench.py`)

Measured {report.run_date()} on {report.machine_line()};
files on {report.file_system()}. Median of {report.REPEATS} runs, interleaved across the sizes; only the
main implementation. Keys of {KEY_SIZE} bytes, values of {VALUE_SIZE} bytes, seed {SEED}.{only}

{body}
Targets, checked in this run (margin: how far above or below the target the figure is):

{report.table(["figure", "target", "measured", "met"], targets, right=(1, 2))}
"""


__all__ = ["run"]
