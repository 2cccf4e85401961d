"""The VLSN index demonstrations behind notebook 12, the tour and ``figures/``.

- :func:`bucket_example`, :func:`holes_example`: the JE documentation's buckets
  (VLSNs 9..15 over files 10 and 11, stride 4) and out-of-order puts into
  one bucket, built with the real :class:`~minidb.replication.VLSNBucket`;
- :func:`index_step`: a replicated environment after the first ``step``
  operations of a script (:mod:`minidb.viz.script`; the operations are
  :data:`OPS`: appends of records, committed transactions, matchpoints,
  checkpoints) on its replicated database ``accounts``, whose creation is
  VLSN 1 (its MapLN travels in the stream before its first record), so the
  script's records are VLSNs 2, 3, ... The default :data:`SCRIPT` fills a
  bucket, closes it at a log file boundary, starts another when one is
  full, and has it all flushed at a checkpoint. Pure: it replays from
  scratch;
- :func:`wait_demo`: a feeder thread waiting for the next VLSN, woken by a
  put; :func:`truncation_demo`: the index truncated at its head and its tail;
- :func:`tradeoff`: the pure function behind the notebook's control: for a
  stride and a max number of mappings, the index of a fixed replicated log
  (600 VLSNs: the database's creation, then records, transactions and
  deletions), how many mappings it keeps and how many log entries a lookup
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
from minidb.replication.vlsn.range import RANGE_SIZE
from minidb.replication.vlsn.scanner import stream_vlsn
from minidb.viz.script import Op, checked, op_table, script_error
from minidb.viz.vlsn import IndexPicture, draw_index, draw_tradeoff, index_picture

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


# -- buckets filling, closing, flushed: a script ------------------------------------------------------------
OPS = op_table(
    Op("records", ("count",), "append count records without a transaction (an LN each, one VLSN each)"),
    Op("txn", ("count",), "a transaction writes count records and commits (count LN_TX and a Commit)"),
    Op("matchpoint", (), "log a Matchpoint (a sync-able entry with its own VLSN)"),
    Op("checkpoint", (), "a checkpoint: its step 6 flushes the index to _vlsn_index"),
)
SCRIPT: list[tuple] = [  # after the creation of 'accounts' (VLSN 1)
    ("records", 5),  # VLSNs 2..6: one open bucket, not flushed yet
    ("records", 1),  # VLSN 7 goes to log file 2: the bucket of file 1 closes, a new one starts
    ("records", 12),  # VLSN 19 is on a stride and the bucket already holds 4 offsets: another bucket
    ("txn", 2),  # LN_TX, LN_TX, Commit (VLSNs 20..22): last_txn_end moves
    ("matchpoint",),  # last_sync moves
    ("checkpoint",),  # step 6 flushes every bucket and the range
]
MAX_COUNT = 500


@dataclass(frozen=True)
class IndexStep:
    step: int
    operation: str
    picture: IndexPicture
    lines: tuple[str, ...]  # what happened to the index (new buckets, a checkpoint's step 6)
    stride: int
    max_mappings: int

    @property
    def figure(self) -> Figure:
        return draw_index(self.picture, title=f"step {self.step}: {self.operation} (stride {self.stride}, "
                                              f"at most {self.max_mappings} offsets a bucket)")

    def summary(self) -> str:
        said = "".join(f"\n  {line}" for line in self.lines)
        return f"after step {self.step}: {self.operation}{said}\nrange {self.picture.range}; " + \
            f"{len(self.picture.buckets)} buckets, {self.picture.mappings} mappings"


def describe_op(op: tuple) -> str:
    if op[0] == "records":
        return f"{op[1]} record{'s' if op[1] != 1 else ''}"
    if op[0] == "txn":
        return f"a transaction of {op[1]} record{'s' if op[1] != 1 else ''}"
    return op[0]


def index_step(step: int, script=SCRIPT, stride: int = 3, max_mappings: int = 4) -> IndexStep:
    """A replicated environment (1.5 KiB log files) after the first ``step`` operations of ``script``.

    Step 0 is the environment with its database ``accounts`` created: its
    MapLN is the stream's first VLSN, and the script's operations follow it."""
    operations = tuple(checked(script, OPS))
    for number, op in enumerate(operations, 1):
        if op[0] in ("records", "txn") and not (isinstance(op[1], int) and 1 <= op[1] <= MAX_COUNT):
            raise script_error(number, op, f"count must be a whole number from 1 to {MAX_COUNT}, not {op[1]!r}")
    if not 0 <= step <= len(operations):
        raise ValueError(f"step must be between 0 and {len(operations)} (the script's length), not {step}")
    if stride < 1 or max_mappings < 1:
        raise ValueError(f"stride and max_mappings must be at least 1, not {stride} and {max_mappings}")
    return _index_step(step, operations, stride, max_mappings)


@lru_cache(maxsize=64)
def _index_step(step: int, operations: tuple, stride: int, max_mappings: int) -> IndexStep:
    env = ReplicatedEnvironment.open(SimDisk("vlsn-fill"), case_config(file_max=1536, buffer_size=512,
                                                                      node_max_entries=16),
                                     VLSNIndexConfig(stride=stride, max_mappings=max_mappings))
    index, db = env.vlsn_index, env.database("accounts")
    created = index.range.last  # the creation's VLSN: the records follow it
    written = 0
    lines: tuple[str, ...] = ()
    for op in operations[:step]:
        seen = len(index.trace.lines)
        checkpoint_lines: tuple[str, ...] = ()
        if op[0] == "records":
            for _ in range(op[1]):
                db.put(f"acct{written:03d}", "x" * 24)
                written += 1
        elif op[0] == "txn":
            with env.begin() as txn:
                for _ in range(op[1]):
                    db.put(f"acct{written:03d}", "y" * 24, txn=txn)
                    written += 1
        elif op[0] == "matchpoint":
            env.log_matchpoint()
        else:
            checkpoint_lines = tuple(line for line in env.checkpoint().trace if line.startswith("step 6"))
        lines = tuple(line for line in index.trace.lines[seen:] if "new bucket" in line) + checkpoint_lines
    operation = (describe_op(operations[step - 1]) if step
                 else f"a new replicated environment, 'accounts' created (VLSN {created})")
    return IndexStep(step, operation, index_picture(index), lines, stride, max_mappings)


# -- a feeder waiting for the next VLSN -----------------------------------------------------------------------
def wait_demo() -> list[str]:
    """A feeder thread waits for the next VLSN; an application thread's put wakes it (no sleeps: events).

    The stream holds the creation of ``accounts`` (VLSN 1) and alice=100 (VLSN 2): the feeder waits for 3."""
    import threading

    from minidb.replication import WaitTimeoutError

    env = ReplicatedEnvironment.open(SimDisk("vlsn-wait"), case_config())
    db = env.database("accounts")
    db.put("alice", "100")
    index = env.vlsn_index
    following = index.range.last + 1
    lines = [f"the range ends at VLSN {index.range.last} (the creation of accounts, then alice=100)"]
    try:
        index.wait_for_vlsn(following, timeout=0.01)
    except WaitTimeoutError as e:
        lines.append(f"wait_for_vlsn({following}, timeout=0.01): {e}")
    got: list = []
    feeder = threading.Thread(target=lambda: got.append(index.wait_for_vlsn(following, timeout=60)))
    feeder.start()
    index.await_waiter(following, timeout=60)
    lines.append(f"a feeder thread waits on the latch for VLSN {index.waiting_for()[0]}")
    lsn = db.put("bob", "50")
    feeder.join()
    lines.append(f"the application logs bob=50 at {lsn}; its put releases the latch")
    lines.append(f"the feeder gets the log item from the latch: {got[0]}")
    lines.append(f"a later wait for VLSN {following} finds it in the log item cache: "
                 f"{index.wait_for_vlsn(following, timeout=0)}")
    lines.append(f"statistics: {index.stats}")
    env.close()
    return lines


# -- truncation at both ends ----------------------------------------------------------------------------------
def truncation_demo(min_vlsn_index_size: int = 20) -> tuple[list[str], IndexPicture]:
    """Head truncation refused (1000 VLSNs kept), then done with a smaller minimum; a tail truncation.

    The stream: the creation of ``accounts`` (VLSN 1) and 60 records (VLSNs 2..61)."""
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
    after = index.truncate_from_tail_in_rollback(before.last - 4)  # the index step of a syncup rollback
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
    """A fixed replicated log: 600 VLSNs (the creation of ``accounts``, then records, transactions, deletions)
    among the log store's own entries."""
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


__all__ = ["bucket_example", "one_file_mappings", "holes_example", "OPS", "SCRIPT", "index_step", "IndexStep", "wait_demo", "truncation_demo", "tradeoff",
           "tradeoff_point", "tradeoff_log", "TradeoffResult", "TradeoffPoint", "TRADEOFF_STRIDES"]
