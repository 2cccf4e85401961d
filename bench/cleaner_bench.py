"""The log cleaner: how fast it cleans, and what it does to the log's size.

What it measures, on real files in ``bench/out/``:

(a) *cleaner throughput*: a steady update workload (every record rewritten
    several times, so most of the log is obsolete) in small log files, a
    checkpoint, then ``env.clean_log()`` until the selector finds nothing:
    megabytes of log files cleaned per second (each cleaned file's size; the
    live LNs migrated and the INs made dirty are part of the work), with and
    without lazy migration (``cleaner_lazy_migration``: live LNs are only
    marked; the checkpoint that follows logs them, outside the timing);
(b) *log size over time*: the same workload in rounds, a checkpoint after
    each; once without the cleaner, once with ``clean_log()`` before each
    checkpoint (whose step 9 deletes the cleaned files). The table gives the
    bytes of log files on disk after each round, side by side;
(c) *bytes an idle checkpoint writes*: N puts and then deletes of all but
    100 of them (the default configuration), a checkpoint, then a second one
    with nothing changed in between: the bytes it appends, and those of its
    FileSummaryLNs (each holds only the obsolete offsets tracked since the
    file's previous one, so this stays small however many the file has).

Each throughput figure is the median of :data:`REPEATS` runs, interleaved, each made under the
main implementation and the reference (:func:`bench.report.both`); the sizes
in (b) are bytes, the same under both (a twin writes the same bytes), so they
are measured once.
"""

from __future__ import annotations

import os
import random

from bench import report
from minidb.io import OSDisk
from minidb.logstore import Environment, EnvironmentConfig

SEED = 2010
KEYS = 2_000
ROUNDS = 8
VALUE = 100
FILE_MAX = 256 * 1024
REPEATS = report.REPEATS


def config(**overrides) -> EnvironmentConfig:
    settings = dict(file_max=FILE_MAX, checkpoint_bytes_interval=None, trace=False)
    settings.update(overrides)
    return EnvironmentConfig(**settings)


def update_round(db, rng: random.Random, round_: int) -> None:
    for i in range(KEYS):
        db.put(f"key{i:06d}", f"{round_:02d}".encode() + rng.randbytes(VALUE // 2).hex().encode()[:VALUE - 2])


def log_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(path, n)) for n in os.listdir(path) if n.endswith(".jdb"))


def cleaner_throughput(path: str, lazy: bool) -> tuple[float, int]:
    """(seconds, bytes of files cleaned) of cleaning a churned log."""
    env = Environment.open(OSDisk(path, create=True), config(cleaner_lazy_migration=lazy))
    db, rng = env.database("bench"), random.Random(SEED)
    for round_ in range(ROUNDS):
        update_round(db, rng, round_)
    env.checkpoint()
    sizes = {n: os.path.getsize(os.path.join(path, f"{n:08x}.jdb")) for n in range(env.log.head, env.log.end_lsn.file)}
    done = []
    seconds = report.timed(lambda: done.extend(env.clean_log()))
    cleaned = sum(sizes[c.file_number] for c in done if c.cleaned)
    env.checkpoint()
    env.close()
    return seconds, cleaned


def log_size_over_time(path: str, clean: bool) -> list[int]:
    env = Environment.open(OSDisk(path, create=True), config())
    db, rng, sizes = env.database("bench"), random.Random(SEED), []
    for round_ in range(ROUNDS):
        update_round(db, rng, round_)
        if clean:
            env.clean_log()
        env.checkpoint()
        sizes.append(log_bytes(path))
    env.close()
    return sizes


IDLE_SIZES = (3_000, 12_000)


def idle_checkpoint_bytes(path: str, puts: int) -> tuple[int, int]:
    """(bytes, of which FileSummaryLNs) that a checkpoint with nothing to do appends after ``puts`` puts
    and ``puts - 100`` deletes."""
    env = Environment.open(OSDisk(path, create=True), EnvironmentConfig(trace=False))
    db = env.database("bench")
    for i in range(puts):
        db.put(f"k{i:06d}", "v" * 20)
    for i in range(puts - 100):
        db.delete(f"k{i:06d}")
    env.checkpoint()
    before = env.log.end_lsn
    env.checkpoint()
    written = [(e.type_name, e.size) for e in env.log.scan(before, env.log.end_lsn)]
    env.close()
    return sum(size for _, size in written), sum(size for name, size in written if name == "FileSummaryLN")


def run() -> str:
    rows, speedups = [], []
    runs = report.interleaved({lazy: (lambda lazy=lazy: report.both_in(
        "cleaner-", lambda path: cleaner_throughput(path, lazy))) for lazy in (False, True)})
    for lazy, pairs in runs.items():
        seconds = report.median([main[0] for main, _ in pairs])
        cleaned = pairs[0][0][1]
        title = "lazy migration" if lazy else "migration at once"
        rows.append([title, f"{cleaned / report.MB:.2f}", f"{seconds:.2f}", f"{cleaned / report.MB / seconds:.2f}"])
        speedups.append(report.Speedup.of(f"(a) cleaner, {title}", "MB/s", [
            (main[1] / report.MB / main[0], reference and reference[1] / report.MB / reference[0])
            for main, reference in pairs]))
    with report.scratch_dir("cleaner-off-") as path:
        without = log_size_over_time(path, False)
    with report.scratch_dir("cleaner-on-") as path:
        with_cleaner = log_size_over_time(path, True)
    size_rows = [[str(i + 1), f"{a / report.MB:.2f}", f"{b / report.MB:.2f}"]
                 for i, (a, b) in enumerate(zip(without, with_cleaner, strict=True))]
    idle_rows = []
    for puts in IDLE_SIZES:
        with report.scratch_dir("cleaner-idle-") as path:
            written, summaries = idle_checkpoint_bytes(path, puts)
        idle_rows.append([f"{puts:,} puts, {puts - 100:,} deletes", f"{written:,}", f"{summaries:,}"])
    return f"""\
## Log cleaner (`bench/cleaner_bench.py`)

Measured {report.run_date()} on {report.machine_line()};
files on {report.file_system()}. {KEYS:,} records of {VALUE} bytes, each rewritten {ROUNDS} times,
in log files of {FILE_MAX // 1024} KiB.

(a) Cleaner throughput: every file the selector picks after the last round and a checkpoint; median of
{REPEATS} runs, the two kinds of migration interleaved.

{report.table(["cleaner", "MB cleaned", "seconds", "MB/s"], rows, right=[1, 2, 3])}

(b) Log bytes on disk (MB) after each round of {KEYS:,} updates and a checkpoint, without and with
the cleaner (`clean_log()` before each checkpoint, whose step 9 deletes the cleaned files).

{report.table(["round", "no cleaner", "cleaner"], size_rows, right=[0, 1, 2])}

Without the cleaner the log only grows, by about one round's worth of LNs and nodes each time; with
it, the log levels off at the live data plus the files not yet worth cleaning (the selector waits for
the total utilization to fall below 50%) and the recovery interval, which is never cleaned.

(c) Bytes an idle checkpoint writes (a checkpoint right after another, nothing changed between).

{report.table(["before it", "bytes an idle checkpoint writes", "of which FileSummaryLNs"], idle_rows,
              right=[1, 2])}

It logs CkptStart, the internal trees' BINs and INs the previous checkpoint's FileSummaryLNs dirtied,
a FileSummaryLN for the file it writes in, holding the few offsets counted obsolete since that
file's previous record, and CkptEnd. When each FileSummaryLN carried its file's whole list of
obsolete offsets, the same checkpoint after 3,000 puts and 2,900 deletes wrote about 48 KB.

{report.speedup_table(speedups)}
"""
