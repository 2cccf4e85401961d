"""The log store: puts and gets next to sqlite3, checkpoint cost, recovery time.

What it measures, on real files in ``bench/out/``:

(a) *puts, one sync at the end*: records written without a transaction,
    then one ``env.sync()``; sqlite3 inserts the same rows in one
    transaction (WAL, ``synchronous=FULL``);
(b) *puts, a durable commit each*: every record in its own transaction,
    committed with Durability.SYNC (an fsync per commit); sqlite3 commits
    each row (autocommit);
(c) *gets*: random lookups of existing keys, everything in memory; sqlite3
    selects by primary key;
(d) *gets with a small cache*: the same lookups with a node budget of 64,
    so most of them fetch BINs back from the log (sqlite3 as in (c), its
    page cache is the operating system's);
(e) *checkpoint cost*: a checkpoint after N puts: seconds, INs logged,
    bytes written;
(f) *recovery time versus the log since the last checkpoint*: N puts after a
    checkpoint, synced, then the environment is abandoned (as a crash would)
    and opened again; recovery reads from the last CkptStart and ends with
    a checkpoint of its own (elapsed and CPU time, entries read per second).

Both systems get the same keys (16 bytes) and values (seeded random ASCII,
64-192 bytes) and the same order of operations; opening and closing are
outside the timing. Each figure is the median of :data:`REPEATS` runs, the
scenarios interleaved (:func:`bench.report.interleaved`); each
repetition of a minidb measurement is made under the main implementation and
the reference (:func:`bench.report.both`).
"""

from __future__ import annotations

import os
import random
import sqlite3
import string
import time

from bench import report
from minidb.logstore import Durability, Environment, EnvironmentConfig

SEED = 2009
PUTS = 20_000
COMMITS = 400
GETS = 20_000
SMALL_CACHE = 64
CHECKPOINT_SIZES = (2_000, 20_000)
RECOVERY_SIZES = (2_000, 8_000, 32_000)
REPEATS = report.REPEATS


def records(count: int, seed: int = SEED) -> list[tuple[bytes, bytes]]:
    rng = random.Random(seed)
    pool = "".join(rng.choices(string.ascii_letters + string.digits, k=1 << 16))
    out = []
    for i in range(count):
        size = rng.randint(64, 192)
        start = rng.randrange(len(pool) - size)
        out.append((f"key{rng.randrange(10**12):012d}"[:16].encode() + str(i).encode(), pool[start:start + size].encode()))
    return out


def config(**overrides) -> EnvironmentConfig:
    settings = dict(checkpoint_bytes_interval=None, trace=False)
    settings.update(overrides)
    return EnvironmentConfig(**settings)


# -- minidb ------------------------------------------------------------------------------
def minidb_puts(path: str, data: list[tuple[bytes, bytes]]) -> float:
    env = Environment.open(os.path.join(path, "env"), config())
    db = env.database("bench")

    def work() -> None:
        for key, value in data:
            db.put(key, value)
        env.sync()

    seconds = report.timed(work)
    env.close()
    return seconds


def minidb_commits(path: str, data: list[tuple[bytes, bytes]]) -> float:
    env = Environment.open(os.path.join(path, "env"), config(durability=Durability.SYNC))
    db = env.database("bench")

    def work() -> None:
        for key, value in data:
            with env.begin() as txn:
                db.put(key, value, txn=txn)

    seconds = report.timed(work)
    env.close()
    return seconds


def minidb_gets(path: str, data: list[tuple[bytes, bytes]], lookups: list[bytes], budget: int | None) -> tuple[float, int]:
    where = os.path.join(path, "env")
    env = Environment.open(where, config())
    db = env.database("bench")
    for key, value in data:
        db.put(key, value)
    env.close()
    env = Environment.open(where, config(node_budget=budget))
    db = env.database("bench")
    fetched = env.stats["nINsFetched"]

    def work() -> None:
        for key in lookups:
            if db.get(key) is None:
                raise RuntimeError(f"minidb lost {key!r}")

    seconds = report.timed(work)
    fetches = env.stats["nINsFetched"] - fetched
    env.close()
    return seconds, fetches


def checkpoint_cost(path: str, count: int) -> tuple[float, int, int]:
    env = Environment.open(os.path.join(path, "env"), config())
    db = env.database("bench")
    for key, value in records(count):
        db.put(key, value)
    before = env.log.stats["nBytes"]
    result = None

    def work() -> None:
        nonlocal result
        result = env.checkpoint()

    seconds = report.timed(work)
    written = env.log.stats["nBytes"] - before
    env.close()
    assert result is not None
    return seconds, len(result.logged), written


def recovery_time(path: str, count: int) -> tuple[float, int, int, float]:
    where = os.path.join(path, "env")
    env = Environment.open(where, config())
    db = env.database("bench")
    start = env.checkpoint().ckpt_start_lsn
    for key, value in records(count):
        db.put(key, value)
    env.sync()
    since = env.log.stats["nBytes"]  # bytes appended since opening; the checkpoint's are a small part
    env.log.close()  # the files stay as a crash would leave them: nothing more is written
    reopened = None
    cpu = 0.0

    def work() -> None:
        nonlocal reopened, cpu
        cpu = time.process_time()
        reopened = Environment.open(where, config())
        cpu = time.process_time() - cpu

    seconds = report.timed(work)
    assert reopened is not None and reopened.recovery_info.last_ckpt_start >= start
    entries = reopened.recovery_info.entries_read
    if len(reopened.database("bench").keys()) != count:
        raise RuntimeError("recovery lost records")
    reopened.close()
    return seconds, since, entries, cpu


# -- sqlite3 ------------------------------------------------------------------------------
def open_sqlite(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(os.path.join(path, "bench.db"), isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE IF NOT EXISTS kv(key BLOB PRIMARY KEY, value BLOB NOT NULL)")
    return conn


def sqlite_puts(path: str, data: list[tuple[bytes, bytes]]) -> float:
    conn = open_sqlite(path)

    def work() -> None:
        conn.execute("BEGIN")
        for key, value in data:
            conn.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (key, value))
        conn.execute("COMMIT")

    seconds = report.timed(work)
    conn.close()
    return seconds


def sqlite_commits(path: str, data: list[tuple[bytes, bytes]]) -> float:
    conn = open_sqlite(path)

    def work() -> None:
        for key, value in data:
            conn.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (key, value))

    seconds = report.timed(work)
    conn.close()
    return seconds


def sqlite_gets(path: str, data: list[tuple[bytes, bytes]], lookups: list[bytes]) -> float:
    conn = open_sqlite(path)
    conn.execute("BEGIN")
    conn.executemany("INSERT OR REPLACE INTO kv VALUES (?, ?)", data)
    conn.execute("COMMIT")
    conn.close()
    conn = open_sqlite(path)

    def work() -> None:
        for key in lookups:
            if conn.execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone() is None:
                raise RuntimeError(f"sqlite3 lost {key!r}")

    seconds = report.timed(work)
    conn.close()
    return seconds


def append_fsync_ms(path: str, samples: int = 200) -> float:
    """Milliseconds per os.write + os.fsync appending to a growing file: what a commit must pay here."""
    fd = os.open(os.path.join(path, "raw"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    chunk = b"x" * 200

    def work() -> None:
        for _ in range(samples):
            os.write(fd, chunk)
            os.fsync(fd)

    seconds = report.timed(work)
    os.close(fd)
    return seconds / samples * 1000


# Targets of the performance issue: minidb's rate over sqlite3's, and recovery's pace.
TARGETS = {"(a)": "≥ 0.30×", "(c)": "≥ 0.60×"}
RECOVERY_TARGET = 70_000  # entries of log since the last checkpoint per second


# -- running ----------------------------------------------------------------------------
def baseline(measure):
    """One run of a baseline ``measure`` in fresh files."""
    def work():
        with report.scratch_dir("logstore-") as path:
            return measure(path)
    return work


def minidb_run(measure):
    """One run of a minidb ``measure`` under each implementation (:func:`bench.report.both_in`)."""
    return lambda: report.both_in("logstore-", measure)


def run() -> str:
    load_before = os.getloadavg()[0]
    data = records(PUTS)
    commit_data = data[:COMMITS]
    rng = random.Random(SEED + 1)
    lookups = [data[rng.randrange(PUTS)][0] for _ in range(GETS)]
    rows = []
    ratios = {}
    speedups: list[report.Speedup] = []
    warm_fetches, cold_fetches = [], []

    def warm(path: str) -> float:
        seconds, fetches = minidb_gets(path, data, lookups, None)
        warm_fetches.append(fetches)
        return seconds

    def cold(path: str) -> float:
        seconds, fetches = minidb_gets(path, data, lookups, SMALL_CACHE)
        cold_fetches.append(fetches)
        return seconds

    titles = {"a": f"(a) {PUTS:,} puts, one sync", "b": f"(b) {COMMITS:,} puts, an fsynced commit each",
              "c": f"(c) {GETS:,} gets, all in memory", "d": f"(d) {GETS:,} gets, node budget {SMALL_CACHE}"}
    # Every measurement of the section, run round-robin (bench.report.interleaved).
    works = {
        ("minidb", "a"): minidb_run(lambda p: minidb_puts(p, data)),
        ("sqlite", "a"): baseline(lambda p: sqlite_puts(p, data)),
        ("fsync", ""): baseline(append_fsync_ms),
        ("minidb", "b"): minidb_run(lambda p: minidb_commits(p, commit_data)),
        ("sqlite", "b"): baseline(lambda p: sqlite_commits(p, commit_data)),
        ("sqlite", "c"): baseline(lambda p: sqlite_gets(p, data, lookups)),
        ("minidb", "c"): minidb_run(warm),
        ("minidb", "d"): minidb_run(cold),
        **{("checkpoint", count): minidb_run(lambda path, count=count: checkpoint_cost(path, count))
           for count in CHECKPOINT_SIZES},
        **{("recovery", count): minidb_run(lambda path, count=count: recovery_time(path, count))
           for count in RECOVERY_SIZES},
    }
    results = report.interleaved(works)

    def minidb(key, title: str, figure=lambda result: result) -> list:
        """The main implementation's results of a minidb measurement; ``figure`` of each run's result
        (seconds, less is faster) goes into the speedups with the reference's."""
        pairs = results[key]
        speedups.append(report.Speedup.of(title, "s", [(figure(m), None if r is None else figure(r))
                                                       for m, r in pairs], higher_is_faster=False))
        return [main for main, _ in pairs]

    def compare(scenario: str, count: int) -> float:
        title = titles[scenario]
        mine = report.median(minidb(("minidb", scenario), title))
        theirs = report.median(results["sqlite", "c" if scenario == "d" else scenario])
        rows.append([title, "minidb", report.fmt_rate(count / mine)])
        rows.append(["", "sqlite3", report.fmt_rate(count / theirs)])
        ratios[title] = theirs / mine  # minidb's rate over sqlite3's
        return mine

    compare("a", PUTS)
    fsync_ms = report.median(results["fsync", ""])
    commit_seconds = compare("b", COMMITS)
    compare("c", GETS)
    compare("d", GETS)

    ckpt_rows = []
    for count in CHECKPOINT_SIZES:
        runs = minidb(("checkpoint", count), f"checkpoint after {count:,} puts", lambda r: r[0])
        seconds = report.median([r[0] for r in runs])
        ckpt_rows.append([f"{count:,}", f"{seconds * 1000:.1f}", f"{runs[0][1]:,}", f"{runs[0][2]:,}"])

    rec_rows, rec_cpu_rates = [], []
    for count in RECOVERY_SIZES:
        runs = minidb(("recovery", count), f"recovery of {count:,} puts", lambda r: r[0])
        seconds = report.median([r[0] for r in runs])
        cpu = report.median([r[3] for r in runs])
        since, entries = runs[0][1], runs[0][2]
        rec_cpu_rates.append(entries / cpu)
        rec_rows.append([f"{count:,}", f"{since / report.MB:.2f}", f"{entries:,}", f"{seconds:.2f}", f"{cpu:.2f}",
                         f"{since / report.MB / seconds:.1f}", report.fmt_rate(entries / seconds),
                         report.fmt_rate(entries / cpu)])
    load = (load_before, os.getloadavg()[0])

    ratio_rows = [[title, report.fmt_ratio(r), TARGETS.get(title[:3], "")] for title, r in ratios.items()]
    first, second = RECOVERY_SIZES[0], RECOVERY_SIZES[-1]
    rec_first = float(rec_rows[0][3])
    rec_last = float(rec_rows[-1][3])
    rec_cpu_rate = rec_cpu_rates[-1]
    return f"""\
## Log store (`bench/logstore_bench.py`)

Measured {report.run_date()} on {report.machine_line()}, SQLite {sqlite3.sqlite_version};
files on {report.file_system()}; load average {load[0]:.1f} when the run began, {load[1]:.1f} when it ended.

Records: 16-byte keys and seeded random ASCII values of 64–192 bytes (seed {SEED}),
one database with JE's default 128-slot nodes. sqlite3: one table with the key as
primary key, WAL, `synchronous=FULL`. Median of {REPEATS} runs; opening and closing are
not timed.

- **(a)** puts without a transaction, then one `env.sync()`; sqlite3: all rows in one transaction.
- **(b)** each put in its own transaction, committed with Durability.SYNC (an fsync per commit);
  sqlite3: autocommit, one commit per row.
- **(c)** random gets of existing keys, the whole tree in memory; sqlite3: `SELECT` by key.
- **(d)** the same gets with a node budget of {SMALL_CACHE} nodes: BINs are evicted and fetched
  back from the log ({report.median(cold_fetches):,.0f} fetches per run, against
  {report.median(warm_fetches):,.0f} in (c)).

{report.table(["scenario", "system", "operations/s"], rows, right=(2,))}

{report.table(["scenario", "minidb ÷ sqlite3", "target"], ratio_rows, right=(1, 2))}

Gets and puts: the log store checks only what can be wrong (a key that is already bytes is not
converted, no lock is looked up while no transaction holds one, the evictor and checkpointer are
called only when they have work), walks the tree in one loop and counts under the environment
latch without a second lock. What is left is mostly the log's: in (c) about two gets in three read
their LN from the log (the tree is in memory, the records are not until first read), and that read
and decode is about half of a get; in (a) the log's append is about a third of a put, and each BIN
split logs both halves at once.

Checkpoint cost: a checkpoint after N puts into a new environment (every node dirty),
time, INs logged and bytes it appended (INs, MapLNs, FileSummaryLNs, CkptStart and CkptEnd).

{report.table(["puts before", "checkpoint ms", "INs logged", "bytes logged"], ckpt_rows, right=(0, 1, 2, 3))}

Recovery time against the log written since the last checkpoint: N puts after a
checkpoint, synced, then the environment is abandoned as a crash would leave it and
opened again (recovery reads from the last CkptStart, replays, and ends with a checkpoint).
Recovery's CPU time is given too: on a shared machine the elapsed time also counts other
programs' turns on the CPUs. Target: {RECOVERY_TARGET:,} entries read per second.

{report.table(["puts since the checkpoint", "log MB since", "entries read", "recovery s", "CPU s", "MB/s",
               "entries/s", "entries per CPU s"], rec_rows, right=(0, 1, 2, 3, 4, 5, 6, 7))}

Reading the tables: where Python's work per operation sets the pace (a, c), sqlite3's
C code is several times faster. In (b) the disk does: a minidb commit is one write and
one fsync of the growing log file, {commit_seconds / COMMITS * 1000:.2f} ms here, against
{fsync_ms:.2f} ms for a bare `os.write` + `os.fsync` appending to a file on the same disk;
sqlite3 fsyncs its write-ahead log at every commit too, and minidb's rate is
{report.fmt_ratio(list(ratios.values())[1])} sqlite3's (on a disk whose fsync latency varies
from run to run, so this ratio moves more than the others). With a cache too small
for the tree (d), every miss reads a BIN back from the log and decodes it: the price of
a node budget, and why JE sizes its cache to hold the upper levels of the tree. Recovery
time grows with the log since the last checkpoint ({rec_first:.2f} s for {first:,} puts,
{rec_last:.2f} s for {second:,}), which is what checkpoints by log growth
(`checkpoint_bytes_interval`) bound.

How the log is read: a fetch (the LNs in (c), the BINs in (d)) is one `pread` of 1 KiB at the
entry's LSN, which holds the header and a small record's whole LN (a BIN takes a second pread of
its exact size); a scan checks each
entry with one `unpack` and one CRC (anything unusual goes to the careful path, which names
what is wrong and where); recovery finds the last CkptEnd walking back through 64 KiB windows
over the entry headers only (the forward read that follows checks every entry walked past), reads
the log after it once and sorts the entries by kind (selections in C over their type codes), learning node ids from the first
bytes of IN and BIN items and the largest transaction id from the first field of transactional
entries. Every byte since the checkpoint is read and checksummed once: opening the log checks the
last file entry by entry to find its end, and recovery takes those checked entries (before anything
is written) instead of reading the file again. Redo works by key, not by LN: each key's LNs are
collected in log order and change its slot once, the keys of one BIN go in after one search (keys
above all its slots, each written once, appended column by column), and a BIN filled past its size
is halved until it fits, each piece logged once, its slots handed to the encoder as tuples (it was a
search, an insertion and now and then a split logging both halves, per LN). Redo reads an LN's
database, key, data and replaced version through its type's picker, which checks the item as a
decode does but makes no dict of every field. Utilization is counted per file
with dictionary updates and sums, and the cyclic garbage collector is paused while the environment
opens and recovers (it would walk the entries read again and again). Recovery of
{RECOVERY_SIZES[-1]:,} puts reads {rec_rows[-1][7]} entries per CPU second,
{"at or above" if rec_cpu_rate >= RECOVERY_TARGET else "below"} the target of {RECOVERY_TARGET:,}; the
time left is Python's work per entry: the opening scan's unpack and checksum, a LogEntry made and
each LN's fields picked (its key, data and the version it replaces), the key's slot filled, and the BINs
that redo fills logged as they split.

{report.speedup_table(speedups)}
"""


__all__ = ["run"]
