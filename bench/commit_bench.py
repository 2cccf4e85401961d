"""Durable commits from 4 writer threads: both engines next to ``sqlite3``.

What it measures: transactions per second when 4 threads each commit small
transactions durably (one record written, then a commit that returns only
once the log is fsynced), in three systems on files under ``bench/out/``:

- *log store*: ``Environment`` with ``Durability.SYNC``; each thread puts
  its own keys in one database, one transaction per put. A commit logs its
  Commit under the environment latch and waits for the fsync outside it, so
  the threads' commits share fsyncs through the log's group commit;
- *page store*: ``StorageManager``; each transaction inserts one record in
  one file and commits with ``commit()`` (durable);
- *sqlite3*: 4 connections to one WAL database with ``synchronous=FULL``,
  one ``INSERT`` per transaction.

Every system gets the same seeded payloads (64-192 bytes), dealt round-robin
to the threads, and is timed from the moment all threads are ready until the
last commit returns; opening and closing stay outside. The fsyncs of minidb's
log over the run give the commits per fsync. Median of :data:`REPEATS` runs, the three
systems one after another in each; each engine's run is also made under the
reference implementation (:func:`bench.report.both`).
"""

from __future__ import annotations

import os
import sqlite3

from tqdm import tqdm

from bench import report
from bench.log_bench import deal, make_payloads
from minidb.io import OSDisk
from minidb.logstore import Durability, Environment, EnvironmentConfig
from minidb.pagestore import StorageManager

SEED = 2017
THREADS = 4
COMMITS = 400  # in all, split between the threads
REPEATS = report.REPEATS
LOGSTORE, PAGESTORE, SQLITE = "minidb log store", "minidb page store", "sqlite3"
SYSTEMS = (LOGSTORE, PAGESTORE, SQLITE)


def payloads(count: int) -> list[bytes]:
    return [p.encode() for p in make_payloads(count, SEED)]  # the log bench's payloads, as bytes


def logstore(path: str, data: list[bytes]) -> tuple[float, int]:
    env = Environment.open(os.path.join(path, "env"),
                           EnvironmentConfig(checkpoint_bytes_interval=None, trace=False, durability=Durability.SYNC))
    db = env.database("bench")

    def worker(n: int, mine: list[bytes]):
        def work() -> None:
            for i, value in enumerate(mine):
                with env.begin() as txn:
                    db.put(f"t{n}-{i:06d}".encode(), value, txn=txn)
        return work

    before = env.log.stats["nFsyncs"]
    seconds = report.timed_threads([worker(n, mine) for n, mine in enumerate(deal(data, THREADS))])
    fsyncs = env.log.stats["nFsyncs"] - before
    if len(db.keys()) != len(data):
        raise RuntimeError(f"the log store holds {len(db.keys())} records, {len(data)} were committed")
    env.close()
    return seconds, fsyncs


def pagestore(path: str, data: list[bytes]) -> tuple[float, int]:
    sm = StorageManager.format(OSDisk(os.path.join(path, "db"), create=True), num_pages=4096, ext_sz=8,
                               page_size=8192, frames=256, file_max=64 * 1024 * 1024, restart_trace=False)
    with sm.transaction() as t:
        fid = sm.create_file(t)

    def worker(mine: list[bytes]):
        def work() -> None:
            for body in mine:
                t = sm.begin()
                sm.create_rec(t, fid, body)
                sm.commit(t)
        return work

    before = sm.log.stats["nFsyncs"]
    seconds = report.timed_threads([worker(mine) for mine in deal(data, THREADS)])
    fsyncs = sm.log.stats["nFsyncs"] - before
    sm.close()
    return seconds, fsyncs


def sqlite(path: str, data: list[bytes]) -> tuple[float, None]:
    name = os.path.join(path, "bench.db")
    setup = sqlite3.connect(name, isolation_level=None)
    setup.execute("PRAGMA journal_mode=WAL")
    setup.execute("CREATE TABLE recs (id INTEGER PRIMARY KEY, body BLOB)")
    setup.close()
    conns = []
    for _ in range(THREADS):
        conn = sqlite3.connect(name, isolation_level=None, check_same_thread=False, timeout=60)
        conn.execute("PRAGMA synchronous=FULL")
        conns.append(conn)

    def worker(conn: sqlite3.Connection, mine: list[bytes]):
        def work() -> None:
            for body in mine:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("INSERT INTO recs (body) VALUES (?)", (body,))
                conn.execute("COMMIT")
        return work

    seconds = report.timed_threads([worker(c, mine) for c, mine in zip(conns, deal(data, THREADS), strict=True)])
    for conn in conns:
        conn.close()
    return seconds, None


RUNNERS = {LOGSTORE: logstore, PAGESTORE: pagestore, SQLITE: sqlite}
ENGINES = (LOGSTORE, PAGESTORE)


def run() -> str:
    data = payloads(COMMITS)
    rates: dict[str, list[float]] = {s: [] for s in SYSTEMS}
    per_fsync: dict[str, list[float]] = {s: [] for s in SYSTEMS}
    speeds: dict[str, list[tuple[float, float | None]]] = {s: [] for s in ENGINES}
    with tqdm(total=REPEATS * len(SYSTEMS), desc="commits", unit="run", leave=False) as progress:
        for _ in range(REPEATS):
            for system in SYSTEMS:
                if system in ENGINES:
                    run = RUNNERS[system]
                    (seconds, fsyncs), reference = report.both_in("commits-", lambda p, run=run: run(p, data))
                    speeds[system].append((COMMITS / seconds, reference and COMMITS / reference[0]))
                else:
                    with report.scratch_dir("commits-") as path:
                        seconds, fsyncs = sqlite(path, data)
                rates[system].append(COMMITS / seconds)
                if fsyncs:
                    per_fsync[system].append(COMMITS / fsyncs)
                progress.update()
    sqlite_rate = report.median(rates[SQLITE])
    rows = []
    for system in SYSTEMS:
        rate = report.median(rates[system])
        rows.append([system, report.fmt_rate(rate),
                     f"{report.median(per_fsync[system]):.2f}" if per_fsync[system] else "—",
                     report.fmt_ratio(rate / sqlite_rate)])
    table = report.table(["system", "commits/s", "commits per fsync", "÷ sqlite3"], rows, right=(1, 2, 3))
    logstore_ratio = report.median(rates[LOGSTORE]) / sqlite_rate
    speedups = report.speedup_table([report.Speedup.of(s, "commits/s", speeds[s]) for s in ENGINES])
    return f"""\
## Durable commits from {THREADS} threads (`bench/commit_bench.py`)

Measured {report.run_date()} on {report.machine_line()}, SQLite {sqlite3.sqlite_version};
files on {report.file_system(report.OUT_DIR)}.

{THREADS} threads commit {COMMITS:,} transactions in all ({COMMITS // THREADS} each), one record of 64–192 bytes
per transaction, each commit durable (the log, or sqlite3's WAL, fsynced before it returns). Median of
{REPEATS} runs; *commits per fsync* counts the fsyncs of minidb's log during the run.

{table}

The log store reaches {logstore_ratio:.2f}× sqlite3 (the target is at least 1.5×): its commits wait for the
fsync outside the environment latch, so the threads' commits share fsyncs through the log's group commit.

{speedups}
"""
