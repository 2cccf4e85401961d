"""Log store lock waits: 4 threads contending for a few records, without and with waiting.

What it measures: 4 threads each commit transactions that write 2 records
chosen at random (seeded) from a key space of 8, in one log store
environment on files under ``bench/out/`` (durable commits, ``Durability.SYNC``).
A transaction that meets a conflict is aborted and tried again (the same
records, a new transaction), until each thread has committed its share. Two
settings of the environment's ``lock_timeout``:

- *0, no waiting*: a request for a record another transaction holds fails at
  once (``LockConflictError``); each failed attempt logged its LNs and an
  Abort;
- *0.5 s, waiting* (JE's default): the request waits until the holder
  commits; only a deadlock (the keys are written in random order) or a
  timeout fails an attempt.

Reported: commits/s from the moment all threads are ready until the last
commit returns, failed attempts (conflicts, deadlocks, timeouts), and the
waits. Median of :data:`REPEATS` runs, the settings interleaved; each run is also made under the reference
implementation (:func:`bench.report.both`).
"""

from __future__ import annotations

import os
import random

from tqdm import tqdm

from bench import report
from minidb.logstore import Durability, Environment, EnvironmentConfig, LockConflictError

SEED = 2026
THREADS = 4
KEYS = 8
COMMITS = 200  # in all, split between the threads
REPEATS = report.REPEATS
SETTINGS = {"0 (no waiting)": 0.0, "0.5 s (waiting)": 0.5}


def contend(path: str, lock_timeout: float) -> dict[str, float]:
    env = Environment.open(os.path.join(path, "env"),
                           EnvironmentConfig(checkpoint_bytes_interval=None, trace=False, durability=Durability.SYNC,
                                             lock_timeout=lock_timeout))
    db = env.database("bench")
    keys = [f"k{i}".encode() for i in range(KEYS)]
    failed = [0] * THREADS

    def worker(n: int):
        rng = random.Random(SEED + n)

        def work() -> None:
            for i in range(COMMITS // THREADS):
                chosen = rng.sample(keys, 2)
                while True:
                    txn = env.begin()
                    try:
                        for key in chosen:
                            db.put(key, f"t{n}-{i}".encode(), txn=txn)
                    except LockConflictError:
                        txn.abort()
                        failed[n] += 1
                        continue
                    txn.commit()
                    break
        return work

    seconds = report.timed_threads([worker(n) for n in range(THREADS)])
    stats = env.locks.stats
    result = {"commits/s": COMMITS / seconds, "failed": sum(failed), "waits": stats["nWaits"],
              "deadlocks": stats["nDeadlocks"], "timeouts": stats["nTimeouts"]}
    env.close()
    return result


def run() -> str:
    pairs: dict[str, list[tuple[dict, dict | None]]] = {name: [] for name in SETTINGS}
    with tqdm(total=REPEATS * len(SETTINGS), desc="lock waits", unit="run", leave=False) as progress:
        for _ in range(REPEATS):
            for name, timeout in SETTINGS.items():
                pairs[name].append(report.both_in("lockwait-", lambda p, t=timeout: contend(p, t)))
                progress.update()
    rows = []
    for name in SETTINGS:
        mains = [main for main, _ in pairs[name]]
        rows.append([name, report.fmt_rate(report.median([m["commits/s"] for m in mains])),
                     f"{report.median([m['failed'] for m in mains]):,.0f}",
                     f"{report.median([m['waits'] for m in mains]):,.0f}",
                     f"{report.median([m['deadlocks'] for m in mains]):,.0f}",
                     f"{report.median([m['timeouts'] for m in mains]):,.0f}"])
    table = report.table(["lock_timeout", "commits/s", "failed attempts", "waits", "deadlocks", "timeouts"], rows,
                         right=(1, 2, 3, 4, 5))
    speedups = report.speedup_table([report.Speedup.of(f"lock_timeout {name}", "commits/s",
                                                       report.pick(pairs[name], "commits/s")) for name in SETTINGS])
    return f"""\
## Log store lock waits (`bench/lockwait_bench.py`)

Measured {report.run_date()} on {report.machine_line()};
files on {report.file_system(report.OUT_DIR)}.

{THREADS} threads commit {COMMITS:,} transactions in all ({COMMITS // THREADS} each), each writing 2 of {KEYS}
records chosen at random, durably; a transaction that fails on a lock is aborted and tried again. Median of
{REPEATS} runs; *failed attempts* are the aborted tries (a conflict without waiting; a deadlock or a timeout
with it), *waits* the lock requests that waited.

{table}

{speedups}
"""
