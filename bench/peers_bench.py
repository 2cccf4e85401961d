"""minidb next to the Python storage engines people use: ZODB, Durus, bplustree, LMDB, sqlite3.

What it measures, for each engine of :mod:`bench.peers` (minidb's log store and its page store's
B+tree through their public APIs, and the five peers), on files under ``bench/out/``, with the
same seeded keys (16 bytes) and values (100 bytes) in the same order:

(a) *puts*: :data:`KEYS` new pairs, committed in batches of :data:`BATCH`, not durably where the
    engine allows it, then one flush that makes them all durable (the table in :mod:`bench.peers`
    says what each engine can do);
(b) *gets*: every key once, in another seeded random order, from the store (a) filled and left
    open (warm caches, as an application that just wrote them would find them);
(c) *durable commits*: :data:`COMMITS` commits of one new pair each, every one fsynced before it
    returns, from one thread and then from :data:`THREADS` threads sharing the commits (an engine
    whose writers cannot run at once lets its threads take turns);
(d) *recovery*: a store filled by (a)'s batches until the files an open after a crash must go
    through (a log, or the whole file: :meth:`bench.peers.Peer.recovery_bytes`) reach each of
    :data:`RECOVERY_MB`, then copied while the engine is still open (what a crash would leave,
    :func:`bench.report.crash_copy`) and the copy opened and one key read: seconds per MB.

Every figure is the median of :data:`bench.report.REPEATS` runs, the engines interleaved (a run of
each in turn, then the next round), each run in fresh files; a recovery run opens a fresh copy of
one crashed store per engine and size. Only the main implementation of minidb runs here: the
other sections hold the *fast ÷ reference* tables.

Sizes: ``$MINIDB_BENCH_SCALE`` multiplies them (default 1: 5,000 keys, 100 commits, recovery at
0.5 and 5 MB, about three minutes on two busy cores). At scale 20 this is the 100,000-key workload
with recovery at 10 and 100 MB, which takes about an hour here: the page store's B+tree and
bplustree insert about 2,000 keys a second, so five runs of each engine at 100,000 keys do not fit
the section's time.
"""

from __future__ import annotations

import os
import random
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from tqdm import tqdm

from bench import peers, report

SEED = 2026
KEYS = report.scaled(5_000, 10)
BATCH = min(1_000, KEYS)
THREADS = 4
COMMITS = report.scaled(100, THREADS)
RECOVERY_MB = (0.5 * report.scale(), 5 * report.scale())
PUTS, GETS, COMMIT1, COMMITN = "puts", "gets", "commits, 1 thread", f"commits, {THREADS} threads"
RECOVERY = [f"recovery at {mb:g} MB" for mb in RECOVERY_MB]


def workload(seed: int = SEED) -> tuple[list[peers.Pair], list[bytes]]:
    """The pairs in insert order, and their keys in the order gets read them."""
    rng = random.Random(seed)
    pairs = [(rng.randbytes(peers.KEY_SIZE), rng.randbytes(peers.VALUE_SIZE)) for _ in range(KEYS)]
    probes = [key for key, _ in pairs]
    rng.shuffle(probes)
    return pairs, probes


def volume_pages(data_bytes: float) -> int:
    """Pages of a page-store volume for about ``data_bytes`` of log: the index takes at most that much."""
    return 256 + int(data_bytes * 1.5) // 8192


def opener(peer: type[peers.Peer], data_bytes: float) -> Callable[[str], peers.Peer]:
    if peer is peers.PageStore:
        return lambda path: peers.PageStore(path, pages=volume_pages(data_bytes))
    return peer


def put_all(store: peers.Peer, pairs: list[peers.Pair]) -> None:
    for start in range(0, len(pairs), BATCH):
        store.put_batch(pairs[start:start + BATCH])
    store.flush()


def commit_keys(tag: str, count: int) -> list[peers.Pair]:
    return [(f"{tag}{i:0{peers.KEY_SIZE - len(tag)}d}".encode(), b"c" * peers.VALUE_SIZE) for i in range(count)]


def operations(open_store: Callable[[str], peers.Peer], pairs: list[peers.Pair],
               probes: list[bytes]) -> dict[str, float]:
    """One run of (a), (b) and (c) in fresh files: operations per second of each."""
    with report.scratch_dir("peers-") as path:
        store = open_store(path)
        try:
            puts = report.timed(lambda: put_all(store, pairs))

            def get_all() -> None:
                get = store.get
                for key in probes:
                    if get(key) is None:
                        raise RuntimeError(f"{store.name} lost {key!r}")

            gets = report.timed(get_all)
            one = store.committer()
            single = report.timed(lambda: [one(k, v) for k, v in commit_keys("a", COMMITS)])
            shares = [commit_keys(f"t{n}-", COMMITS // THREADS) for n in range(THREADS)]
            workers = []
            for share in shares:
                commit = store.committer()  # made here, in the main thread: a connection, say
                workers.append(lambda commit=commit, share=share: [commit(k, v) for k, v in share])
            many = report.timed_threads(workers)
        finally:
            store.close()
    return {PUTS: len(pairs) / puts, GETS: len(probes) / gets, COMMIT1: COMMITS / single,
            COMMITN: (COMMITS // THREADS) * THREADS / many}


@dataclass
class Crashed:
    """A store filled to ``megabytes`` and copied as a crash leaves it, in ``path``; ``key`` was put."""
    path: str
    megabytes: float
    key: bytes


def crash(open_store: Callable[[str], peers.Peer], where: str, target_mb: float) -> Crashed:
    """Fill a store in ``where``/live until its recovery bytes reach ``target_mb``; copy it to ``where``/crashed."""
    live, crashed = os.path.join(where, "live"), os.path.join(where, "crashed")
    os.makedirs(live)
    store = open_store(live)
    rng, batch = random.Random(SEED), 0
    try:
        while batch == 0 or store.recovery_bytes() < target_mb * report.MB:
            pairs = [(rng.randbytes(peers.KEY_SIZE), rng.randbytes(peers.VALUE_SIZE)) for _ in range(BATCH)]
            store.put_batch(pairs)
            batch += 1
        store.flush()
        report.crash_copy(live, crashed)  # the engine is still open: nothing a close would write
        megabytes = store.recovery_bytes() / report.MB
    finally:
        store.close()
    return Crashed(crashed, megabytes, pairs[-1][0])


def recovery_seconds(open_store: Callable[[str], peers.Peer], crashed: Crashed) -> float:
    """Seconds to open a fresh copy of ``crashed`` and read one key."""
    with report.scratch_dir("peers-open-") as path:
        report.crash_copy(crashed.path, path)
        store: list[peers.Peer] = []

        def reopen() -> None:
            store.append(open_store(path))
            if store[0].get(crashed.key) is None:
                raise RuntimeError(f"{store[0].name} lost a key in recovery")

        seconds = report.timed(reopen)
        store[0].close()
    return seconds


# The acceptance targets: (minidb engine, measure, peer, least ratio of minidb's rate to the peer's).
TARGETS = [
    (peers.PAGESTORE, PUTS, peers.BPLUSTREE, 2.0),
    (peers.PAGESTORE, GETS, peers.BPLUSTREE, 1.0),
    (peers.PAGESTORE, PUTS, peers.SQLITE, 0.15),
    (peers.PAGESTORE, GETS, peers.SQLITE, 0.15),
    (peers.LOGSTORE, GETS, peers.DURUS, 1.0),
    (peers.LOGSTORE, GETS, peers.SQLITE, 0.6),
    (peers.LOGSTORE, PUTS, peers.ZODB_, 0.5),
]


def measure() -> tuple[dict[str, dict[str, float]], dict[str, float], list[str]]:
    """Medians per engine and measure (recovery in seconds per MB), MB per recovery size, skip notes."""
    notes, engines = [], []
    for peer in peers.PEERS:
        why = peers.available(peer)
        if why is None:
            engines.append(peer)
        else:
            notes.append(why)
    pairs, probes = workload()
    data_bytes = KEYS * 300
    runs = {p.name: (lambda p=p: operations(opener(p, data_bytes), pairs, probes)) for p in engines}
    total = report.REPEATS * len(engines) * (1 + len(RECOVERY_MB))
    medians: dict[str, dict[str, float]] = {}
    megabytes: dict[str, float] = {}
    with tqdm(total=total, desc="bench peers", unit="run", leave=False) as progress:
        results = report.interleaved(runs, step=progress.update)
        for name, rows in results.items():
            medians[name] = {m: report.median([r[m] for r in rows]) for m in (PUTS, GETS, COMMIT1, COMMITN)}
        for title, mb in zip(RECOVERY, RECOVERY_MB, strict=True):
            with report.scratch_dir("peers-crash-") as where:
                crashed = {}
                for p in engines:
                    os.makedirs(os.path.join(where, p.__name__))
                    crashed[p.name] = crash(opener(p, mb * report.MB), os.path.join(where, p.__name__), mb)
                opens = {p.name: (lambda p=p, mb=mb, crashed=crashed:
                                  recovery_seconds(opener(p, mb * report.MB), crashed[p.name])) for p in engines}
                for name, seconds in report.interleaved(opens, step=progress.update).items():
                    medians[name][title] = report.median(seconds) / crashed[name].megabytes
                    megabytes[f"{name} {title}"] = crashed[name].megabytes
    return medians, megabytes, notes


def ratio(medians: dict[str, dict[str, float]], mine: str, measure_: str, peer: str) -> float | None:
    """minidb's rate over the peer's (recovery: the peer's seconds per MB over minidb's), None if either is missing."""
    if mine not in medians or peer not in medians:
        return None
    a, b = medians[mine][measure_], medians[peer][measure_]
    return b / a if measure_ in RECOVERY else a / b


def target_rows(medians: dict[str, dict[str, float]]) -> list[list[str]]:
    rows = []
    for mine, measure_, peer, least in TARGETS:
        value = ratio(medians, mine, measure_, peer)
        if value is None:
            rows.append([f"{mine}: {measure_} ÷ {peer}", f"≥ {least:g}×", "—", "not measured"])
            continue
        margin = value / least - 1
        mark = "✓" if value >= least else "✗"
        rows.append([f"{mine}: {measure_} ÷ {peer}", f"≥ {least:g}×", report.fmt_ratio_small(value),
                     f"{mark} {margin:+.0%}"])
    return rows


def run() -> str:
    medians, megabytes, notes = measure()
    names = [p.name for p in peers.PEERS if p.name in medians]
    others = [n for n in names if n not in peers.MINIDB]
    rate_rows = [[name, *(report.fmt_rate(medians[name][m]) for m in (PUTS, GETS, COMMIT1, COMMITN)),
                  *(f"{medians[name][t] * 1000:.1f} ({megabytes[f'{name} {t}']:.1f} MB)" for t in RECOVERY)]
                 for name in names]
    ratio_rows = []
    for mine in peers.MINIDB:
        for measure_ in (PUTS, GETS, COMMIT1, COMMITN, *RECOVERY):
            cells = [ratio(medians, mine, measure_, peer) for peer in others]
            ratio_rows.append([f"{measure_}, {mine.removeprefix('minidb ')}",
                               *("—" if c is None else report.fmt_ratio_small(c) for c in cells)])
    skipped = "".join(f"{note}.\n\n" for note in notes)
    return f"""\
## minidb next to Python's storage engines (`bench/peers_bench.py`)

Measured {report.run_date()} on {report.machine_line()}, SQLite {sqlite3.sqlite_version};
files on {report.file_system()}.

{KEYS:,} keys of {peers.KEY_SIZE} bytes with values of {peers.VALUE_SIZE} bytes (seed {SEED}), the same
for every engine: minidb's log store and its page store's B+tree (8 KiB pages, a buffer pool that holds
the index) through their public APIs, ZODB (FileStorage and an `OOBTree`), Durus (FileStorage and a
`BTree`), bplustree, LMDB and sqlite3 (WAL, a `BLOB PRIMARY KEY` table). Median of {report.REPEATS}
runs, the engines interleaved, each run in fresh files.

- **puts**: committed in batches of {BATCH:,}, not durably where the engine allows it (minidb's two
  engines, Durus, LMDB, sqlite3 with `synchronous=OFF`), then one flush that makes them durable;
  ZODB fsyncs every commit and so every batch; bplustree commits each insert with an fsync and
  has no unsorted batch, so its fsync is turned off for the puts and its WAL fsynced once at the end.
- **gets**: every key once, in another random order, from the store just filled (caches warm).
- **commits**: {COMMITS:,} commits of one pair each, every commit fsynced before it returns, from one
  thread, then from {THREADS} threads sharing them (Durus's threads take turns; ZODB gives each thread
  its own connection and tree; sqlite3 its own connection with `synchronous=FULL`).
- **recovery**: a store filled by batches until what an open after a crash must read (minidb's
  log, bplustree's tree and WAL, sqlite3's database and WAL, the others' one file) reaches the size
  given, copied while still open (as a crash leaves it), the copy opened and one key read;
  milliseconds per MB of those files.

Sizes are scaled down (from 100,000 keys and recovery at 10 and 100 MB) to keep the section near three
minutes with five runs of every engine: the page store's B+tree and bplustree insert about 2,000 keys a
second here. `MINIDB_BENCH_SCALE=20` runs the full workload (about an hour).

{skipped}{report.table(["engine", f"{PUTS}/s", f"{GETS}/s", f"{COMMIT1}/s", f"{COMMITN}/s",
               *(f"{t}: ms/MB" for t in RECOVERY)], rate_rows, right=range(1, 5 + len(RECOVERY)))}

minidb ÷ each peer: how many times the peer's rate minidb reaches (for recovery, the peer's time
per MB over minidb's; above 1× minidb is faster).

{report.table(["measure, minidb engine", *others], ratio_rows, right=range(1, 1 + len(others)))}

Targets, checked in this run (margin: how far above or below the target the ratio is):

{report.table(["ratio", "target", "measured", "met"], target_rows(medians), right=(1, 2))}

LMDB's open reads nothing (its B+tree is always consistent on disk, a copy-on-write tree with two
root pages), so its recovery figure is the cost of opening a file; Durus and ZODB (without the index
file a clean close writes) read their whole file to rebuild the index of object offsets; minidb's log
store replays its log since the last checkpoint and its page store redoes its log since the last
checkpoint onto the volume.
"""


__all__ = ["run"]
