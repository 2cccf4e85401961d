"""The page store's B+tree against sqlite3: inserts, lookups and range scans of the same keys.

What it measures, each next to sqlite3 (Python's ``sqlite3``, a table with an
``INTEGER PRIMARY KEY``, a file on the same disk) in the same run, with the
same keys in the same seeded random order:

(a) *inserts*: :data:`KEYS` keys (``i4``) with 16-byte elements, one
    ``index_insert`` each, in one transaction committed once (durable).
    sqlite3: one ``INSERT`` statement per row in one transaction, one commit.
(b) *lookups*: :data:`KEYS` lookups of those keys in another random order,
    in one transaction. sqlite3: one ``SELECT`` by primary key per key.
(c) *range scans*: :data:`SCANS` scans of :data:`SCAN_ROWS` consecutive keys
    each, from seeded random starting keys; the rate is rows returned per
    second. sqlite3: ``SELECT ... WHERE k BETWEEN ? AND ?``.

Both read through their own caches: minidb's buffer pool holds the whole
index (no page is read from the disk during (b) and (c)), and so does
sqlite3's page cache. Each figure is the median of :data:`REPEATS` runs in
fresh files under ``bench/out/``; pages are 8192 bytes. minidb's runs are made
under the main implementation and the reference (:func:`bench.report.both`). The bulk-load rows
of this section come from their own function.
"""

from __future__ import annotations

import os
import random
import sqlite3

from bench import report
from minidb.io import OSDisk
from minidb.pagestore.sm import StorageManager

SEED = 2014
KEYS = 2_000
SCANS, SCAN_ROWS = 50, 100
ELEMENT = b"e" * 16
REPEATS = report.REPEATS
MINIDB, SQLITE = "minidb", "sqlite3"


def _workload(rng: random.Random) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    """The keys in insert order, in lookup order, and the (first, last) key of each scan."""
    keys = rng.sample(range(KEYS * 10), KEYS)
    probes = rng.sample(keys, len(keys))
    ordered = sorted(keys)
    firsts = [rng.randrange(len(ordered) - SCAN_ROWS) for _ in range(SCANS)]
    return keys, probes, [(ordered[i], ordered[i + SCAN_ROWS - 1]) for i in firsts]


def _minidb(path: str, keys: list[int], probes: list[int], ranges: list[tuple[int, int]]) -> dict[str, float]:
    sm = StorageManager.format(OSDisk(os.path.join(path, "minidb"), create=True), num_pages=4096, frames=4096)
    try:
        with sm.transaction() as t:
            ix = sm.create_index(t, "i4")

        def insert() -> None:
            with sm.transaction() as t:
                for k in keys:
                    sm.index_insert(t, ix, k, ELEMENT)

        inserts = report.timed(insert)
        t = sm.begin()
        lookups = report.timed(lambda: [sm.index_lookup(t, ix, k) for k in probes])
        rows = []
        scans = report.timed(lambda: rows.extend(len(list(sm.index_scan(t, ix, lo, hi))) for lo, hi in ranges))
        sm.commit(t)
        assert sum(rows) == SCANS * SCAN_ROWS, sum(rows)
    finally:
        sm.close()
    return {"a": len(keys) / inserts, "b": len(probes) / lookups, "c": sum(rows) / scans}


def _sqlite(path: str, keys: list[int], probes: list[int], ranges: list[tuple[int, int]]) -> dict[str, float]:
    db = sqlite3.connect(os.path.join(path, "sqlite.db"), isolation_level=None)
    try:
        db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)")

        def insert() -> None:
            db.execute("BEGIN")
            for k in keys:
                db.execute("INSERT INTO t VALUES (?, ?)", (k, ELEMENT))
            db.execute("COMMIT")

        inserts = report.timed(insert)
        lookups = report.timed(lambda: [db.execute("SELECT v FROM t WHERE k = ?", (k,)).fetchall() for k in probes])
        rows = []
        scans = report.timed(lambda: rows.extend(
            len(db.execute("SELECT k, v FROM t WHERE k BETWEEN ? AND ?", r).fetchall()) for r in ranges))
        assert sum(rows) == SCANS * SCAN_ROWS, sum(rows)
    finally:
        db.close()
    return {"a": len(keys) / inserts, "b": len(probes) / lookups, "c": sum(rows) / scans}


SCENARIOS = [("a", "inserts", "keys/s"), ("b", "lookups", "lookups/s"), ("c", "range scans", "rows/s")]


def operations() -> tuple[list[list[str]], list[list[str]], list[report.Speedup]]:
    """The insert, lookup and scan rows: (rates, ratios, minidb's speedups), medians of REPEATS runs."""
    results: dict[str, list[dict[str, float]]] = {SQLITE: []}
    pairs = []
    for repeat in range(REPEATS):
        keys, probes, ranges = _workload(random.Random(SEED + repeat))
        workload = (keys, probes, ranges)
        pairs.append(report.both_in("btree-", lambda path, workload=workload: _minidb(path, *workload)))
        with report.scratch_dir("btree-") as path:
            results[SQLITE].append(_sqlite(path, keys, probes, ranges))
    results[MINIDB] = [main for main, _ in pairs]
    rates, ratios, speedups = [], [], []
    for key, title, unit in SCENARIOS:
        mine = report.median([r[key] for r in results[MINIDB]])
        theirs = report.median([r[key] for r in results[SQLITE]])
        rates.append([title, "minidb", f"{report.fmt_rate(mine)} {unit}"])
        rates.append(["", "sqlite3", f"{report.fmt_rate(theirs)} {unit}"])
        ratios.append([title, report.fmt_ratio(mine / theirs)])
        speedups.append(report.Speedup.of(title, unit, report.pick(pairs, key)))
    return rates, ratios, speedups


def run() -> str:
    rates, ratios, speedups = operations()
    return "\n".join([
        "## Page store: B+tree against sqlite3 (`bench/btree_bench.py`)",
        "",
        f"Measured {report.run_date()} on {report.machine_line()};",
        f"files on {report.file_system()}.",
        "",
        f"{KEYS:,} `i4` keys in random order with {len(ELEMENT)}-byte elements, in a unique index of minidb's "
        f"page store (8192-byte pages) and in a sqlite3 table with an `INTEGER PRIMARY KEY`; median of {REPEATS} "
        "runs. Inserts: one transaction, one durable commit. Lookups: every key once, in another random order. "
        f"Range scans: {SCANS} scans of {SCAN_ROWS} consecutive keys; the rate counts rows returned. The ratio is "
        "minidb's rate over sqlite3's.",
        "",
        report.table(["operation", "system", "rate"], rates, right=[2]),
        "",
        report.table(["operation", "minidb ÷ sqlite3"], ratios, right=[1]),
        "",
        "sqlite3 is C, with one Python call per statement; minidb is Python all the way down: each insert "
        "latch-couples from the root, logs a `btree_insert` entry (encoded, checksummed, buffered) and fixes "
        "pages through the buffer pool. A lookup descends from the root, and on each page its binary search "
        "decodes only the entries it probes; a scan copies out every entry of each leaf it visits (here about "
        "150) before keeping those in range, then finds the next leaf again from the root. A transaction reads "
        "an index's descriptor from the store directory once, for its first operation on the index.",
        "",
        report.speedup_table(speedups),
    ])
