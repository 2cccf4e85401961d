"""The VLSN index: lookup cost and index size as functions of the stride, against two baselines.

What it measures, on real files in ``bench/out/``: a replicated environment
logs VLSNS replicated entries (records of 64-192 bytes, a transaction every
few records, checkpoints now and then, so non-replicated entries lie between
the replicated ones). Then, over that same log:

- for each stride, a VLSN index is built from the log's mappings (``put``,
  timed per mapping), its size taken (mappings kept, buckets, bytes of its
  records in ``_vlsn_index``), and LOOKUPS random VLSNs are found with a
  fresh forward scanner each (``get_lte_lsn`` + reading forward): log entries
  read per lookup (mean and max) and time per lookup;
- baseline *every mapping*: a dict of all VLSN -> LSN mappings (16 bytes each
  as a record: VLSN and LSN), a lookup reads exactly one entry;
- baseline *no index*: a lookup scans the log from its first entry.

Each time is the median of REPEATS runs, the ways of looking up interleaved. The log is written once; every
measurement over it (the strides and both baselines, which read the log
through minidb) is made under the main implementation and the reference
(:func:`bench.report.both`), each on the log opened afresh, read-only.
"""

from __future__ import annotations

import os
import random
import string
from collections.abc import Callable

from bench import report
from minidb import impl
from minidb.io import OSDisk
from minidb.log import LogManager
from minidb.logstore import Durability, EnvironmentConfig
from minidb.replication import ReplicatedEnvironment, VLSNIndex, VLSNIndexConfig
from minidb.replication.vlsn.range import RANGE_SIZE
from minidb.replication.vlsn.scanner import stream_vlsn, walk_forward

SEED = 2011
VLSNS = 20_000
STRIDES = (1, 10, 100, 1000)
LOOKUPS = 1_000
SCAN_LOOKUPS = 25  # the no-index baseline reads half the log per lookup
REPEATS = report.REPEATS


def build_log(path: str) -> ReplicatedEnvironment:
    rng = random.Random(SEED)
    pool = "".join(rng.choices(string.ascii_letters + string.digits, k=1 << 14))
    config = EnvironmentConfig(file_max=1 << 20, checkpoint_bytes_interval=None, durability=Durability.NO_SYNC,
                               trace=False)
    env = ReplicatedEnvironment.open(os.path.join(path, "env"), config, VLSNIndexConfig(trace=False))
    db = env.database("bench")
    i = 0
    while env.vlsn_index.allocator.last < VLSNS:
        size = rng.randint(64, 192)
        start = rng.randrange(len(pool) - size)
        key, value = f"key{rng.randrange(5000):05d}", pool[start:start + size]
        if i % 9 == 0:
            with env.begin() as txn:
                db.put(key, value, txn=txn)
        else:
            db.put(key, value)
        if i % 4000 == 3999:
            env.checkpoint()
        i += 1
    env.sync()
    return env


def lookup_work(index: VLSNIndex, vlsns: list[int], scanned: list[int]) -> Callable[[], None]:
    """One run of the lookups of ``vlsns`` through ``index``; ``scanned`` gets the entries each read."""
    def work() -> None:
        scanned.clear()
        for vlsn in vlsns:
            scanner = index.forward_scanner()
            scanner.find(vlsn)
            scanned.append(scanner.entries_scanned)
    return work


def measure(log_dir: str, vlsns: list[int]) -> dict:
    """Every figure of the table over the log in ``log_dir``, opened afresh (read-only)."""
    log = impl.current(LogManager)(OSDisk(log_dir, readonly=True), readonly=True)
    try:
        entries = list(log.scan())
        mappings = [(v, e.lsn, e.type_name) for e in entries if (v := stream_vlsn(e)) is not None][:VLSNS]
        position = {e.lsn: n for n, e in enumerate(entries)}
        figures: dict = {"entries": len(entries), "log_mb": sum(e.size for e in entries) / report.MB, "strides": {}}
        lookups: dict = {}  # what is timed, run round-robin at the end: each stride's index, the dict, the scan
        scanned: dict[int, list[int]] = {}
        for stride in STRIDES:
            index = impl.current(VLSNIndex)(VLSNIndexConfig(stride=stride, trace=False), log=log)

            def track(index=index) -> None:  # timed at once, on this stride's index
                for vlsn, lsn, type_name in mappings:
                    index.put(vlsn, lsn, type_name)

            put_seconds = report.timed(track) / len(mappings)
            stored = sum(b.encoded_size() for b in index.tracker.buckets()) + RANGE_SIZE
            scanned[stride] = []
            lookups[stride] = lookup_work(index, vlsns, scanned[stride])
            figures["strides"][stride] = dict(mappings=index.mapping_count(), buckets=index.tracker.bucket_count,
                                              stored=stored, put=put_seconds)

        every = figures["every"] = {vlsn: lsn for vlsn, lsn, _ in mappings}

        def dict_lookups() -> None:
            for vlsn in vlsns:
                log.read(every[vlsn])

        lookups["dict"] = dict_lookups
        scan_vlsns = vlsns[:SCAN_LOOKUPS]
        first = entries[0].lsn
        figures["scan_counts"] = [position[every[v]] + 1 for v in scan_vlsns]

        def scan_lookups() -> None:
            for vlsn in scan_vlsns:
                for entry in walk_forward(log, first):
                    if stream_vlsn(entry) == vlsn:
                        break

        lookups["scan"] = scan_lookups
        seconds = {key: report.median(times) for key, times in report.interleaved(
            {key: (lambda work=work: report.timed(work)) for key, work in lookups.items()}).items()}
        for stride, counts in scanned.items():
            figures["strides"][stride].update(seconds=seconds[stride] / len(vlsns), mean=sum(counts) / len(counts),
                                              most=max(counts))
        figures["dict_seconds"] = seconds["dict"] / len(vlsns)
        figures["scan_seconds"] = seconds["scan"] / len(scan_vlsns)
        return figures
    finally:
        log.close()


def run() -> str:
    rng = random.Random(SEED)
    vlsns = [rng.randint(1, VLSNS) for _ in range(LOOKUPS)]
    with report.scratch_dir("vlsn-") as path:
        build_log(path).close()
        figures, reference = report.both(lambda: measure(os.path.join(path, "env"), vlsns))
    per_stride = {stride: (f["mappings"], f["stored"], f["seconds"], f["mean"])
                  for stride, f in figures["strides"].items()}
    rows = [[f"stride {stride}", f"{f['mappings']:,}", f"{f['buckets']:,}", f"{f['stored']:,}", f"{f['mean']:.1f}",
             f"{f['most']:,}", f"{f['seconds'] * 1e6:,.0f}", f"{f['put'] * 1e6:.1f}"]
            for stride, f in figures["strides"].items()]
    every, dict_seconds, scan_seconds = figures["every"], figures["dict_seconds"], figures["scan_seconds"]
    entries, log_mb, scan_counts = figures["entries"], figures["log_mb"], figures["scan_counts"]
    dict_bytes = 16 * len(every)
    rows.append(["every mapping (a dict)", f"{len(every):,}", "—", f"{dict_bytes:,}", "1.0", "1",
                 f"{dict_seconds * 1e6:,.0f}", "—"])
    rows.append(["no index (scan from the start)", "0", "—", "0", f"{sum(scan_counts) / len(scan_counts):,.0f}",
                 f"{max(scan_counts):,}", f"{scan_seconds * 1e6:,.0f}", "—"])
    speedups = []
    for stride in STRIDES:
        for what, key in (("lookup", "seconds"), ("put", "put")):
            speedups.append(report.Speedup(
                f"stride {stride}: {what}", "µs", figures["strides"][stride][key] * 1e6,
                None if reference is None else reference["strides"][stride][key] * 1e6, higher_is_faster=False))
    for title, key in (("every mapping (a dict): lookup", "dict_seconds"), ("no index: lookup", "scan_seconds")):
        speedups.append(report.Speedup(title, "µs", figures[key] * 1e6,
                                       None if reference is None else reference[key] * 1e6, higher_is_faster=False))

    ten_mappings, ten_bytes, ten_seconds, ten_mean = per_stride[10]
    ratio_rows = [
        ["stride 10 ÷ every mapping: bytes stored", report.fmt_ratio(ten_bytes / dict_bytes)],
        ["stride 10 ÷ every mapping: time per lookup", report.fmt_ratio(ten_seconds / dict_seconds)],
        ["stride 10 ÷ no index: time per lookup", f"{ten_seconds / scan_seconds:.4f}×"],
        ["stride 1000 ÷ stride 10: bytes stored", report.fmt_ratio(per_stride[1000][1] / ten_bytes)],
        ["stride 1000 ÷ stride 10: time per lookup", report.fmt_ratio(per_stride[1000][2] / ten_seconds)],
    ]
    return f"""\
## VLSN index (`bench/vlsn_bench.py`)

Measured {report.run_date()} on {report.machine_line()};
files on {report.file_system()}.

A replicated environment logs {VLSNS:,} replicated entries (records of 64–192 bytes,
seed {SEED}, one in nine in a transaction with its Commit; checkpoints every 4,000 records),
{entries:,} entries and {log_mb:.1f} MB of log in all. Over that log, for each stride, a
VLSN index (JE's defaults otherwise: at most 1000 offsets and 100,000 bytes a bucket) is built
from its mappings, and {LOOKUPS:,} random VLSNs are looked up, each with a fresh forward
scanner: the mapping at or below (`get_lte_lsn`), then the log read forward to the entry.
"Every mapping" is a dict of all {len(every):,} mappings (counted as 16-byte records); "no index"
reads the log from its first entry ({SCAN_LOOKUPS} lookups). Times are the median of {REPEATS} runs.

{report.table(["index", "mappings kept", "buckets", "bytes stored", "entries read (mean)",
               "entries read (max)", "µs per lookup", "µs per put"], rows, right=(1, 2, 3, 4, 5, 6, 7))}

{report.table(["comparison", "ratio"], ratio_rows, right=(1,))}

Reading the table: the stride divides the space (mappings and bytes, {ten_mappings:,} mappings
at stride 10 for {len(every):,} VLSNs) and multiplies the reading (about stride ÷ 2 entries per
lookup, plus the non-replicated entries between, {ten_mean:.1f} at stride 10); tracking a
mapping costs the same at every stride. A bucket never spans two log files and keeps at most
1000 offsets, and it takes no mapping more than `max_distance` (100,000) bytes of log past its
last stored offset: at stride 1000 that rule starts a new bucket about every 100 KB of log
({per_stride[1000][0]:,} mappings), which costs bytes but bounds the reading. Without any
index, finding one VLSN means reading half the log on average.

{report.speedup_table(speedups)}
"""


__all__ = ["run"]
