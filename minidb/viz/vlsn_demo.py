"""The VLSN index demonstrations behind notebook 12, the tour and ``figures/``.

- :func:`bucket_example`, :func:`holes_example`: the JE documentation's buckets
  (VLSNs 9..15 over files 10 and 11, stride 4) and out-of-order puts into
  one bucket, built with the real :class:`~minidb.replication.VLSNBucket`;
- :func:`fill_demo`: a replicated environment whose index fills a bucket,
  closes it at a log file boundary, starts another when one is full, and is
  flushed at a checkpoint, as snapshots to draw;
- :func:`tradeoff`: the pure function behind the notebook's control: for a
  stride and a max number of mappings, the index of a fixed replicated log
  (600 VLSNs), how many mappings it keeps and how many log entries a lookup
  reads (the space/time trade-off).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from matplotlib.figure import Figure

from minidb.io import SimDisk
from minidb.log import LSN, LogManager
from minidb.replication import ReplicatedEnvironment, VLSNBucket, VLSNIndexConfig, VLSNTracker
from minidb.replication.cases import case_config, example_bucket_mappings, example_buckets
from minidb.replication.range import RANGE_SIZE
from minidb.replication.scanner import stream_vlsn
from minidb.viz.vlsn import IndexPicture, draw_tradeoff, index_picture

TRADEOFF_STRIDES = (1, 2, 5, 10, 20, 50, 100)
TRADEOFF_VLSNS = 600


def bucket_example(stride: int = 4) -> tuple[list[VLSNBucket], dict[int, LSN]]:
    """The JE documentation's buckets and its table of mappings (VLSN -> LSN)."""
    return example_buckets(stride), dict(example_bucket_mappings())


def one_file_mappings() -> dict[int, LSN]:
    """The JE documentation's other reading: VLSNs 9..15 all in file 10, at offsets 100..160."""
    return {vlsn: LSN(10, 100 + 10 * (vlsn - 9)) for vlsn in range(9, 16)}


def holes_example(order: tuple[int, ...], stride: int = 2) -> VLSNBucket:
    """One bucket of file 10 (first VLSN 9) after puts in ``order`` (out of order leaves holes)."""
    truth = one_file_mappings()
    bucket = VLSNBucket(10, stride, 1000, 100_000, 9)
    for vlsn in order:
        bucket.put(vlsn, truth[vlsn])
    return bucket


# -- buckets filling, closing, flushed -----------------------------------------------------------------
@dataclass(frozen=True)
class FillStep:
    label: str
    picture: IndexPicture
    lines: tuple[str, ...]  # what happened (the index's trace, a checkpoint's step 6)


@lru_cache(maxsize=1)
def fill_demo() -> tuple[FillStep, ...]:
    """A replicated environment (stride 3, at most 4 offsets a bucket, 1.5 KiB files), step by step."""
    env = ReplicatedEnvironment.open(SimDisk("vlsn-fill"), case_config(file_max=1536, buffer_size=512,
                                                                      node_max_entries=16),
                                     VLSNIndexConfig(stride=3, max_mappings=4))
    index = env.vlsn_index
    db = env.database("accounts")
    steps: list[FillStep] = []
    seen = len(index.trace.lines)

    def snap(label: str, extra: tuple[str, ...] = ()) -> None:
        nonlocal seen
        lines = tuple(line for line in index.trace.lines[seen:] if not line.startswith("put")) + extra
        seen = len(index.trace.lines)
        steps.append(FillStep(label, index_picture(index), lines))

    n = 0

    def put(count: int) -> None:
        nonlocal n
        for _ in range(count):
            db.put(f"acct{n:03d}", "x" * 24)
            n += 1

    put(5)
    snap("5 records: one open bucket, not flushed yet")
    while index.tracker.bucket_count == 1:
        put(1)
    first = index.tracker.buckets()[0]
    snap(f"a record in file {env.log.end_lsn.file}: the bucket of file {first.file_number} is closed, a new one "
         f"starts", (index.trace.lines[-1],))
    while len({b.file_number for b in index.tracker.buckets()}) == index.tracker.bucket_count:
        put(1)
    snap("a bucket holds 4 offsets (max_mappings): the next stride VLSN starts another bucket in the same file",
         (index.trace.lines[-1],))
    with env.begin() as txn:
        db.put("alice", "70", txn=txn)
        db.put("bob", "80", txn=txn)
    env.log_matchpoint()
    snap("a transaction (LN_TX, LN_TX, Commit) and a Matchpoint: last_txn_end and last_sync move")
    result = env.checkpoint()
    step6 = tuple(line for line in result.trace if line.startswith("step 6"))
    snap("a checkpoint: step 6 flushes the index to _vlsn_index", step6)
    return tuple(steps)


# -- a feeder waiting for the next VLSN -----------------------------------------------------------------------
def wait_demo() -> list[str]:
    """A feeder thread waits for the next VLSN; an application thread's put wakes it (no sleeps: events)."""
    import threading

    from minidb.replication import WaitTimeoutError

    env = ReplicatedEnvironment.open(SimDisk("vlsn-wait"), case_config())
    db = env.database("accounts")
    db.put("alice", "100")
    index = env.vlsn_index
    lines = [f"the range ends at VLSN {index.range.last}"]
    try:
        index.wait_for_vlsn(2, timeout=0.01)
    except WaitTimeoutError as e:
        lines.append(f"wait_for_vlsn(2, timeout=0.01): {e}")
    got: list = []
    feeder = threading.Thread(target=lambda: got.append(index.wait_for_vlsn(2, timeout=60)))
    feeder.start()
    index.await_waiter(2, timeout=60)
    lines.append(f"a feeder thread waits on the latch for VLSN {index.waiting_for()[0]}")
    lsn = db.put("bob", "50")
    feeder.join()
    lines.append(f"the application logs bob=50 at {lsn}; its put releases the latch")
    lines.append(f"the feeder gets the log item from the latch: {got[0]}")
    lines.append(f"a later wait for VLSN 2 finds it in the log item cache: {index.wait_for_vlsn(2, timeout=0)}")
    lines.append(f"statistics: {index.stats}")
    env.close()
    return lines


# -- truncation at both ends ----------------------------------------------------------------------------------
def truncation_demo(min_vlsn_index_size: int = 20) -> tuple[list[str], IndexPicture]:
    """Head truncation refused (1000 VLSNs kept), then done with a smaller minimum; a tail truncation."""
    lines = []
    for minimum in (1000, min_vlsn_index_size):
        env = ReplicatedEnvironment.open(SimDisk("vlsn-truncate"), case_config(file_max=1024, buffer_size=512),
                                         VLSNIndexConfig(stride=3, min_vlsn_index_size=minimum))
        db = env.database("accounts")
        for i in range(60):
            db.put(f"acct{i:02d}", "x" * 20)
        index = env.vlsn_index
        lines.append(f"min_vlsn_index_size {minimum}: range {index.range}, buckets of files "
                     f"{sorted({b.file_number for b in index.tracker.buckets()})}")
        for file_number in (2, 3):
            lines.append(f"  truncate_head_for_file({file_number}): {index.truncate_head_for_file(file_number).describe()}")
    before = index.range
    after = index.truncate_from_tail(before.last - 4)
    lines.append(f"syncup rolls back 5 VLSNs: {before} -> {after}; the next VLSN is {index.allocator.last + 1}")
    return lines, index_picture(index)


# -- the space/time trade-off ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class TradeoffLog:
    mappings: tuple[tuple[int, LSN, str], ...]  # every replicated entry: (VLSN, LSN, type)
    position: dict[LSN, int]  # every entry of the log (replicated or not) -> its index in log order
    entries: int
    log: LogManager  # the log itself, for scanners


@lru_cache(maxsize=1)
def tradeoff_log() -> TradeoffLog:
    """A fixed replicated log: 600 VLSNs (records, transactions, deletions) among the log store's own entries."""
    env = ReplicatedEnvironment.open(SimDisk("vlsn-tradeoff"), case_config(file_max=16 * 1024, node_max_entries=32))
    db = env.database("accounts")
    i = 0
    while env.vlsn_index.allocator.last < TRADEOFF_VLSNS:
        if i % 7 == 3:
            with env.begin() as txn:
                db.put(f"acct{i % 50:02d}", f"v{i}", txn=txn)
        elif i % 11 == 5:
            db.delete(f"acct{(i * 3) % 50:02d}")
        else:
            db.put(f"acct{i % 50:02d}", f"v{i}")
        if i % 150 == 149:
            env.checkpoint()
        i += 1
    entries = list(env.log.scan())
    mappings = tuple((v, e.lsn, e.type_name) for e in entries if (v := stream_vlsn(e)) is not None)
    return TradeoffLog(mappings[:TRADEOFF_VLSNS], {e.lsn: n for n, e in enumerate(entries)}, len(entries), env.log)


@dataclass(frozen=True)
class TradeoffPoint:
    stride: int
    max_mappings: int
    buckets: int
    mappings: int
    stored_bytes: int
    mean_scanned: float
    max_scanned: int


def tradeoff_point(stride: int, max_mappings: int) -> TradeoffPoint:
    """Index the fixed log with these settings; count what it keeps and what lookups read.

    A lookup of VLSN v reads the log forward from the mapping at or below v
    (``get_lte_lsn``) to v's entry: the entries scanned are the positions
    between the two in the log, both included (what ForwardVLSNScanner reads).
    """
    log = tradeoff_log()
    tracker = VLSNTracker(stride, max_mappings, 100_000)
    for vlsn, lsn, type_name in log.mappings:
        tracker.track(vlsn, lsn, type_name)
    costs = [log.position[lsn] - log.position[tracker.get_lte_lsn(vlsn)] + 1 for vlsn, lsn, _ in log.mappings]
    buckets = tracker.buckets()
    stored = sum(b.encoded_size() for b in buckets) + RANGE_SIZE
    return TradeoffPoint(stride, max_mappings, len(buckets), tracker.mapping_count(), stored,
                         sum(costs) / len(costs), max(costs))


@dataclass(frozen=True)
class TradeoffResult:
    point: TradeoffPoint
    curve: tuple[TradeoffPoint, ...]  # the same max_mappings, every stride of TRADEOFF_STRIDES
    vlsns: int
    entries: int
    figure: Figure

    def summary(self) -> str:
        p = self.point
        return (f"stride {p.stride}, max {p.max_mappings} offsets a bucket: {p.buckets} buckets keep {p.mappings} "
                f"mappings for {self.vlsns} VLSNs ({p.stored_bytes} bytes in _vlsn_index); a lookup reads "
                f"{p.mean_scanned:.1f} log entries on average, {p.max_scanned} at most "
                f"(the log holds {self.entries} entries)")


def tradeoff(stride: int = 10, max_mappings: int = 1000) -> TradeoffResult:
    """The notebook's control: the index of the fixed log at this stride and max mappings."""
    if stride < 1 or max_mappings < 1:
        raise ValueError(f"stride and max_mappings must be at least 1, not {stride} and {max_mappings}")
    point = tradeoff_point(stride, max_mappings)
    curve = tuple(tradeoff_point(s, max_mappings) for s in sorted(set(TRADEOFF_STRIDES) | {stride}))
    log = tradeoff_log()
    figure = draw_tradeoff([(c.stride, c.mappings, c.mean_scanned, c.max_scanned) for c in curve], stride,
                           total_vlsns=len(log.mappings),
                           title=f"{len(log.mappings)} VLSNs, at most {max_mappings} offsets a bucket: "
                                 f"space (left) against time (right)")
    return TradeoffResult(point, curve, len(log.mappings), log.entries, figure)


__all__ = ["bucket_example", "one_file_mappings", "holes_example", "fill_demo", "FillStep", "wait_demo", "truncation_demo", "tradeoff",
           "tradeoff_point", "tradeoff_log", "TradeoffResult", "TradeoffPoint", "TRADEOFF_STRIDES"]
