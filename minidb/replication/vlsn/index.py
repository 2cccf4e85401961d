"""The VLSN index (JE's ``VLSNIndex``): VLSN -> LSN mappings of a replicated environment.

Every log entry shared by a replication group has a VLSN; a node's log is
addressed by LSNs. The index maps one to the other, so that feeders and
syncup can fetch a replicated entry from the local log by its VLSN. Its
responsibilities (JE `VLSNIndex`):

- **Generating VLSNs**: :attr:`allocator` (see :mod:`.vlsn`), called by the
  log under its write latch.
- **Maintaining the range** (:mod:`.range`): the contiguous part of the
  stream this node holds, with its last sync-able entry and last commit.
- **Waiting for the newest entries** (:meth:`wait_for_vlsn`, :mod:`.wait`).
- **Mappings**: :meth:`put` registers one *after* the log write latch is
  released, so mappings arrive out of order; the index keeps a sparse set in
  buckets (:mod:`.bucket`, :mod:`.tracker`) and callers scan the log from
  the nearest one (:mod:`.scanner`). The index relies on VLSN-tagged entries
  being ordered and contiguous in the log.

Persistence: the buckets are cached in memory and stored in an internal,
never replicated database of the log store (``_vlsn_index``; key = a
bucket's first VLSN, key -1 = the range, byte layouts in :mod:`.bucket`,
:mod:`.range`, :mod:`.vlsn`). They are flushed at every checkpoint (step 6,
:meth:`on_checkpoint`), not on every put: mappings are registered by the
logging system, which should not recursively log on their behalf. A flush
writes the changed buckets, deletes truncated ones and writes the range in
one transaction of the internal database, so recovery sees a whole flush or
none of it. Recovery (:mod:`.recovery`) loads the flushed buckets and range,
re-tracks the mappings from the last CkptStart to the end of the log and
merges the two.

Truncation: from the head by log cleaning (:meth:`truncate_from_head`,
:meth:`truncate_head_for_file`; a ghost bucket marks the head when needed,
and at least ``min_vlsn_index_size`` VLSNs are always kept), from the tail
by syncup rollback (on a quiescent system; a direct :meth:`truncate_from_tail`
is refused, because only the rollback, which marks the entries INVISIBLE and
logs RollbackStart/End, makes it survive a crash). Head truncation is made
durable at once.

Every replicated environment builds its index through the hot spot
``VLSN_INDEX`` (:mod:`minidb.impl`): a course project
(``exercises/projects/vlsn_index/``) asks a student to write this class whole,
over the given tracker, buckets, range and recovery merge, and the engine
then runs on it wherever it would run on this one.

Example::

    env = ReplicatedEnvironment.open(SimDisk("node1"))       # minidb.replication.env
    db = env.database("accounts")
    for i in range(25):
        db.put(f"k{i}", "v")                                   # VLSNs 1..25
    index = env.vlsn_index
    index.range                    # VLSNRange(first=1, last=25, last_sync=0, last_txn_end=0)
    index.get_lte_lsn(17)          # the LSN of VLSN 11 (stride 10: 1, 11, 21 and the last, 25)
    index.forward_scanner().find(17).vlsn   # 17, found after reading 7 entries (VLSNs 11..17)

Synchronization hierarchy (JE `VLSNIndex`), followed here::

    VLSNIndex -> VLSNTracker -> VLSNBucket      writing a mapping: put()
    VLSNIndex -> VLSNTracker -> VLSNRange       the range is replaced atomically; read without a mutex
    VLSNIndex -> VLSNIndex.mapping_synchronizer the wait latches and the log item cache
    VLSNIndex.flush_synchronizer -> VLSNTracker flushing to the database

A reader takes the tracker mutex to find a bucket, then only the bucket's
mutex. Truncation from the head: the index mutex, the range first, then the
tracker to delete dead buckets, then (index mutex released) a flush. The
environment latch, when held, always comes first: ``put`` is called by
logging threads that hold it, and a flush takes it before the flush
synchronizer, so a checkpoint's flush and a truncation's flush cannot
deadlock.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from minidb import impl
from minidb.errors import MinidbError
from minidb.log import LSN, NULL_LSN, LogEntry, LogManager
from minidb.log.types import EntryType
from minidb.logstore import Durability
from minidb.logstore.txn.txn import TxnState
from minidb.replication.errors import (
    IndexClosedError,
    TailTruncationError,
    VLSNIndexError,
    VLSNRangeError,
    WaitCancelledError,
    WaitTimeoutError,
)
from minidb.replication.vlsn.allocator import FIRST_VLSN, NULL_VLSN, RANGE_KEY, VLSNAllocator, encode_key
from minidb.replication.vlsn.config import VLSNIndexConfig
from minidb.replication.vlsn.range import SYNC_TYPES, TXN_END_TYPES, VLSNRange
from minidb.replication.vlsn.recovery import MergeResult, VLSNRecoveryTracker, merge, read_index_database
from minidb.replication.vlsn.results import INDEX_STATS, FlushResult, HeadTruncationResult
from minidb.replication.vlsn.scanner import BackwardVLSNScanner, ForwardVLSNScanner, stream_vlsn
from minidb.replication.vlsn.tracker import HeadTruncation, VLSNTracker
from minidb.replication.vlsn.wait import (
    FROM_CACHE,
    FROM_LOG,
    FROM_WAIT_LATCH,
    LogItem,
    LogItemCache,
    VLSNAwaitLatch,
    WaitCancel,
)
from minidb.stats import Stats, Trace

if TYPE_CHECKING:
    from minidb.logstore import Environment

class VLSNIndex:
    """The VLSN index of one node (see the module documentation)."""

    def __init__(self, config: VLSNIndexConfig | None = None, log: LogManager | None = None):
        self.config = config or VLSNIndexConfig()
        c = self.config
        self.trace = Trace(enabled=c.trace)
        self.stats = Stats("vlsnIndex", INDEX_STATS)
        self.tracker = VLSNTracker(c.stride, c.max_mappings, c.max_distance, name="tracker", trace=self.trace)
        self.allocator = VLSNAllocator()
        self.log: LogManager | None = log
        self.env: "Environment | None" = None
        self.log_item_cache = LogItemCache(c.log_item_cache_size)
        self.recovery_tracker: VLSNRecoveryTracker | None = None
        self.merge_result: MergeResult | None = None
        self.flushes: list[FlushResult] = []
        self.closed = False
        self._lock = threading.RLock()  # the VLSNIndex mutex
        self._mapping_synchronizer = threading.Condition(threading.Lock())
        self._flush_synchronizer = threading.Lock()
        self._latches: dict[int, VLSNAwaitLatch] = {}

    # -- the range ------------------------------------------------------------------------------
    @property
    def range(self) -> VLSNRange:
        """The current range (read without a mutex, like JE's volatile field)."""
        return self.tracker.range

    # -- writing mappings --------------------------------------------------------------------------
    def put(self, vlsn: int, lsn: LSN, type_name: str, entry: LogEntry | None = None) -> None:
        """Register that the entry with ``vlsn`` (of type ``type_name``) was logged at ``lsn``.

        ``entry``: the entry as logged, kept in the log item and handed to a waiting feeder."""
        item = LogItem(vlsn, lsn, type_name, entry)
        with self._lock:
            what = self.tracker.track(vlsn, lsn, type_name)
            with self._mapping_synchronizer:
                self.log_item_cache.put(item)
                last = self.tracker.range.last
                for waited, latch in list(self._latches.items()):
                    if latch.count_down(last, item):
                        del self._latches[waited]
        self.stats.add("nPuts")
        if self.trace.enabled:
            self.trace.emit("put VLSN %d -> %s (%s): %s", vlsn, lsn, type_name, what)

    def log_listener(self, lsn: LSN, entry_type: EntryType, vlsn: int | None) -> None:
        """A log listener (an LSN and a type, no entry): called after the log write latch is released."""
        if vlsn is not None:
            self.put(vlsn, lsn, entry_type.name)

    def entry_listener(self, entry: LogEntry) -> None:
        """The log's entry listener (after the log write latch is released): the mapping and the entry."""
        if entry.vlsn is not None:
            self.put(entry.vlsn, entry.lsn, entry.type_name, entry)

    # -- reading mappings ----------------------------------------------------------------------------
    def get_lte_lsn(self, vlsn: int) -> LSN:
        """The LSN of the nearest mapping at or below ``vlsn`` (which must be in the range)."""
        return self.tracker.get_lte_lsn(vlsn)

    def get_gte_lsn(self, vlsn: int) -> LSN:
        """The LSN of the nearest mapping at or above ``vlsn`` (which must be in the range)."""
        return self.tracker.get_gte_lsn(vlsn)

    def forward_scanner(self) -> ForwardVLSNScanner:
        return ForwardVLSNScanner(self)

    def backward_scanner(self) -> BackwardVLSNScanner:
        return BackwardVLSNScanner(self)

    def find(self, vlsn: int) -> LogEntry:
        """The log entry that carries ``vlsn`` (a forward scan from the mapping at or below)."""
        return self.forward_scanner().find(vlsn)

    # -- waiting for new entries -----------------------------------------------------------------------
    def wait_for_vlsn(self, vlsn: int, timeout: float | None, cancel: WaitCancel | None = None) -> LogItem | None:
        """Block until ``vlsn`` is in the range; its log item if the latch or the cache has it.

        None means the entry is logged but no longer cached: read it from the
        log (:meth:`find`). Raises :class:`WaitTimeoutError` after
        ``timeout`` seconds, :class:`IndexClosedError` if the index closes,
        :class:`WaitCancelledError` if ``cancel`` is cancelled.
        """
        return self.await_item(vlsn, timeout, cancel)[0]

    def await_item(self, vlsn: int, timeout: float | None,
                   cancel: WaitCancel | None = None) -> tuple[LogItem | None, str]:
        """:meth:`wait_for_vlsn`, and where the item came from: ``FROM_WAIT_LATCH`` (the put that woke
        this wait handed it over), ``FROM_CACHE`` or ``FROM_LOG`` (no item: read the log)."""
        if not isinstance(vlsn, int) or vlsn < FIRST_VLSN:
            raise VLSNRangeError(f"cannot wait for VLSN {vlsn!r}: VLSNs are integers from {FIRST_VLSN}")
        if timeout is not None and (not isinstance(timeout, (int, float)) or not timeout >= 0):
            raise VLSNRangeError(f"cannot wait for VLSN {vlsn}: the timeout is None (forever) or seconds >= 0, "
                                 f"not {timeout!r}")
        if self.tracker.range.last >= vlsn:  # the volatile range, without a mutex
            return self._cached(vlsn)
        with self._lock:
            if self.tracker.range.last >= vlsn:
                return self._cached(vlsn)
            with self._mapping_synchronizer:
                if self.closed:
                    raise IndexClosedError(f"the VLSN index is closed; VLSN {vlsn} will not come")
                latch = self._latches.get(vlsn)
                if latch is None:
                    latch = self._latches[vlsn] = VLSNAwaitLatch(vlsn)
                latch.waiters += 1
                self.stats.add("nWaits")
                self._mapping_synchronizer.notify_all()
        released = latch.wait(timeout, cancel)  # outside every mutex
        with self._mapping_synchronizer:
            latch.waiters -= 1
            released = released or latch.released
            if not released and latch.waiters == 0 and self._latches.get(vlsn) is latch:
                del self._latches[vlsn]
        if not released and cancel is not None and cancel.cancelled:
            raise WaitCancelledError(f"the wait for VLSN {vlsn} was cancelled by its waiter")
        if not released:
            self.stats.add("nWaitTimeouts")
            raise WaitTimeoutError(vlsn, timeout if timeout is not None else 0.0, self.tracker.range.last)
        if latch.terminated:
            raise IndexClosedError(f"the VLSN index closed while waiting for VLSN {vlsn}")
        if latch.log_item is not None:
            self.stats.add("nWaitLatchHits")
            return latch.log_item, FROM_WAIT_LATCH
        return self._cached(vlsn)

    def _cached(self, vlsn: int) -> tuple[LogItem | None, str]:
        with self._mapping_synchronizer:
            item = self.log_item_cache.get(vlsn)
        self.stats.add("nHits" if item is not None else "nMisses")
        return item, FROM_CACHE if item is not None else FROM_LOG

    def await_waiter(self, vlsn: int, timeout: float | None = None) -> bool:
        """Block until some thread waits for ``vlsn`` (lets tests and demos order threads without sleeping)."""
        with self._mapping_synchronizer:
            return self._mapping_synchronizer.wait_for(lambda: vlsn in self._latches, timeout)

    def waiting_for(self) -> list[int]:
        with self._mapping_synchronizer:
            return sorted(self._latches)

    # -- the environment ----------------------------------------------------------------------------------
    def attach(self, env: "Environment") -> None:
        """Use ``env``'s log and its internal database (done by the first checkpoint, recovery's)."""
        if self.env is not None and self.env is not env:
            raise VLSNIndexError(f"this VLSN index belongs to {self.env.where()}, not {env.where()}")
        self.env = env
        self.log = env.log

    def _require_env(self) -> "Environment":
        if self.env is None:
            raise VLSNIndexError("this VLSN index has no environment: it cannot be flushed")
        return self.env

    def _require_log(self) -> LogManager:
        if self.log is None:
            raise VLSNIndexError("this VLSN index is not attached to a log")
        return self.log

    # -- recovery ------------------------------------------------------------------------------------------
    def begin_recovery(self) -> VLSNRecoveryTracker:
        """A recovery tracker for the coming recovery (its listener is :meth:`recovery_listener`)."""
        c = self.config
        self.recovery_tracker = VLSNRecoveryTracker(c.stride, c.max_mappings, c.max_distance)
        return self.recovery_tracker

    def recovery_listener(self, entry: LogEntry) -> None:
        if self.recovery_tracker is None:
            raise VLSNIndexError("recovery listener called outside recovery")
        self.recovery_tracker.track_entry(entry)

    def recovery_read_done(self) -> None:
        """Recovery has read the log: refuse, before anything is written, what the tracker found wrong."""
        if self.recovery_tracker is None:
            raise VLSNIndexError("recovery listener called outside recovery")
        self.recovery_tracker.check_rollbacks()

    def finish_recovery(self) -> MergeResult:
        """Load the flushed index, merge the recovery tracker into it, continue VLSNs after its last."""
        env = self._require_env()
        if self.recovery_tracker is None:
            raise VLSNIndexError("no recovery to finish")
        with self._lock:
            db = env.internal_database(self.config.database_name)
            buckets, stored = read_index_database(db)
            self.tracker.load(buckets, stored)
            result = merge(self.tracker, self.recovery_tracker)
            self.merge_result = result
            self.recovery_tracker = None
            self.allocator.reset(self.range.last)
        for line in result.lines():
            self.trace.emit("recovery: %s", line)
        self.trace.emit("recovery: the next VLSN is %d", self.allocator.last + 1)
        return result

    # -- flushing ---------------------------------------------------------------------------------------------
    def on_checkpoint(self, run) -> str:
        """The checkpointer's step 6 (``EnvironmentHooks.flush_vlsn_index``)."""
        self.attach(run.env)
        if self.recovery_tracker is not None:
            self.finish_recovery()
        return self.flush_to_database().describe()

    def flush_to_database(self, durability: Durability = Durability.NO_SYNC) -> FlushResult:
        """Write the changed buckets, the deletions and the range, in one transaction.

        At a checkpoint the Commit need not be fsynced: CkptEnd (step 8) is.
        """
        env = self._require_env()
        with env.latch, self._flush_synchronizer:
            written, deleted, current = self.tracker.flush_snapshot()
            db = env.internal_database(self.config.database_name)
            txn = env.begin(durability, internal=True)  # an internal transaction: a negative id
            try:
                for first in deleted:
                    db.delete(encode_key(first), txn=txn)
                for bucket, _, data in written:
                    db.put(encode_key(bucket.first), data, txn=txn)
                range_lsn = db.put(RANGE_KEY, current.encode(), txn=txn)
                commit_lsn = txn.commit()
            except BaseException:
                if txn.state is TxnState.OPEN and not env.closed:
                    try:
                        txn.abort()
                    except MinidbError:
                        pass  # the original error says what went wrong (e.g. a crashed disk)
                raise
            self.tracker.flushed(written, deleted)
        result = FlushResult(tuple(b.first for b, _, _ in written), tuple(deleted), current, range_lsn, commit_lsn)
        self.flushes.append(result)
        self.stats.add("nFlushes")
        self.stats.add("nBucketsFlushed", len(written))
        self.stats.add("nBucketsDeleted", len(deleted))
        self.trace.emit("%s", result.describe())
        return result

    def _flush_durably(self) -> None:
        if self.env is not None and not self.env.closed:
            self.flush_to_database(Durability.SYNC)

    # -- truncation from the head (log cleaning) ---------------------------------------------------------------
    def truncate_from_head(self, delete_end: int, delete_file_number: int) -> HeadTruncationResult:
        """Drop VLSNs up to ``delete_end`` before files up to ``delete_file_number`` are deleted.

        Refused (nothing changes) when it would leave fewer than
        ``min_vlsn_index_size`` VLSNs or there is nothing to drop. Every VLSN
        in the files to delete must be at most ``delete_end``. Made durable.
        """
        minimum = self.config.min_vlsn_index_size
        with self._lock:
            current = self.range
            if current.is_empty or delete_end < current.first:
                return HeadTruncationResult(False, f"nothing to delete (range {current})", delete_end, current)
            left = current.last - delete_end
            if left < minimum:
                return HeadTruncationResult(False, f"it would leave {max(left, 0)} VLSNs, fewer than "
                                                   f"min_vlsn_index_size {minimum}", delete_end, current)
            if delete_end >= current.last:
                raise VLSNRangeError(f"cannot truncate the head at VLSN {delete_end}: the range is {current}, "
                                     f"and the end of the stream is never truncated")
            done: HeadTruncation = self.tracker.remove_from_head(delete_end, delete_file_number)
            with self._mapping_synchronizer:
                self.log_item_cache.clear_to(delete_end)  # their files may go: never hand them out again
            self.stats.add("nHeadTruncations")
        self._flush_durably()
        ghost = done.ghost.first if done.ghost is not None else None
        result = HeadTruncationResult(True, "", delete_end, self.range, done.deleted, ghost)
        self.trace.emit("%s", result.describe())
        return result

    def last_vlsn_up_to_file(self, file_number: int) -> int:
        """The last visible VLSN in log files up to ``file_number`` (read from the log; 0: none)."""
        log = self._require_log()
        if file_number >= log.end_lsn.file:
            raise VLSNRangeError(f"file 0x{file_number:x} is the log's last file: its end is the end of the log")
        header = log.read(LSN(file_number + 1, 0))
        for entry in log.scan_backward(header.values["last_entry_lsn"]):
            vlsn = stream_vlsn(entry)
            if vlsn is not None:
                return vlsn
        return NULL_VLSN

    def truncate_head_for_file(self, file_number: int) -> HeadTruncationResult:
        """Truncate the head so that files up to ``file_number`` may be deleted (the cleaner's, the eraser's call)."""
        delete_end = self.last_vlsn_up_to_file(file_number)
        if delete_end == NULL_VLSN:
            return HeadTruncationResult(False, f"files up to 0x{file_number:x} hold no VLSN", delete_end, self.range)
        return self.truncate_from_head(delete_end, file_number)

    def release_files(self, file_number: int, *, without_vlsns: bool) -> bool:
        """May log files up to ``file_number`` change (be deleted or erased)? The one rule for both.

        The head is truncated past them first (:meth:`truncate_head_for_file`).
        True when the index no longer covers them: their VLSNs lie before its
        range, or the head was truncated past them; False when truncating would
        leave fewer than ``min_vlsn_index_size`` VLSNs. ``without_vlsns`` is the
        answer when the files hold no VLSN at all, the one real difference
        between the callers: a *deletion* may proceed (nothing of the stream is
        in them: True), an *erasure* may not (False: JE's eraser changes only
        files whose VLSNs the index has let go, and these never leave it).
        """
        result = self.truncate_head_for_file(file_number)
        if result.delete_end == NULL_VLSN:
            return without_vlsns
        return (result.done or result.range.is_empty or result.delete_end < result.range.first)

    def before_file_deletion(self, file_number: int) -> bool:
        """The log cleaner's deletion listener: :meth:`release_files` for a deletion."""
        return self.release_files(file_number, without_vlsns=True)

    def release_file_for_erasure(self, file_number: int) -> bool:
        """The data eraser's hook: :meth:`release_files` for an erasure."""
        return self.release_files(file_number, without_vlsns=False)

    # -- truncation from the tail (syncup rollback) ------------------------------------------------------------
    def truncate_from_tail(self, delete_start: int, prev_lsn: LSN | None = None) -> VLSNRange:
        """Refused: the index is truncated from the tail only by a syncup rollback.

        Truncating the index alone is not durable, whatever it flushes:
        recovery re-tracks every entry from the last CkptStart, so after a
        crash the rolled-back VLSNs come back (and when new entries reused
        them, the stream holds a VLSN twice and the environment cannot be
        reopened). Only the rollback makes it durable: RollbackStart logged
        first, the rolled-back entries marked INVISIBLE in place and fsynced,
        then this truncation (:meth:`truncate_from_tail_in_rollback`), then
        RollbackEnd. Raises :class:`TailTruncationError`; nothing changes.
        """
        raise TailTruncationError(
            f"cannot truncate the VLSN index from VLSN {delete_start} (range {self.range}): only a syncup rollback "
            "truncates the tail, after making the rolled-back entries INVISIBLE; a direct truncation would come "
            "undone at the next recovery. Nothing was changed")

    def truncate_from_tail_in_rollback(self, delete_start: int, prev_lsn: LSN | None = None) -> VLSNRange:
        """The index step of a syncup rollback, and only of one (JE's ``VLSNIndex.truncateFromTail``).

        Drops VLSNs from ``delete_start`` on, on a quiescent system (no VLSN
        is read or written meanwhile); VLSN allocation continues at
        ``delete_start``. ``prev_lsn`` is where VLSN ``delete_start - 1`` is
        (found in the log if not given). The rolled-back entries stay in the
        log. Durability: the flush below is durable, but recovery re-tracks
        the log from the last CkptStart, so the truncation survives a crash
        only if the rolled-back entries are INVISIBLE by then: it is made
        durable by RollbackStart/End (:mod:`.rollback`, the only caller).
        """
        with self._lock:
            current = self.range
            if current.is_empty or delete_start > current.last:
                return current
            if delete_start < current.first:
                raise VLSNRangeError(f"cannot roll back to VLSN {delete_start - 1}: the range starts at "
                                     f"{current.first}")
            new_last = delete_start - 1
            last_sync = last_txn_end = None
            if new_last >= current.first and self.log is not None:
                if prev_lsn is None:
                    prev_lsn = self.find(new_last).lsn
                last_sync, last_txn_end = self._landmarks_before(prev_lsn, current.first)
            self.tracker.remove_from_tail(delete_start, prev_lsn or NULL_LSN, last_sync, last_txn_end)
            self.allocator.reset(new_last)
            with self._mapping_synchronizer:
                self.log_item_cache.clear_from(delete_start)
            self.stats.add("nTailTruncations")
        self._flush_durably()
        return self.range

    def _landmarks_before(self, lsn: LSN, first: int) -> tuple[int, int]:
        """The last sync-able and last txn-end VLSNs at or before ``lsn`` (0: none in the range)."""
        last_sync = last_txn_end = NULL_VLSN
        for entry in self._require_log().scan_backward(lsn):
            vlsn = stream_vlsn(entry)
            if vlsn is None:
                continue
            if vlsn < first:
                break
            if not last_sync and entry.type_name in SYNC_TYPES:
                last_sync = vlsn
            if not last_txn_end and entry.type_name in TXN_END_TYPES:
                last_txn_end = vlsn
            if last_sync and last_txn_end:
                break
        return last_sync, last_txn_end

    # -- closing and text ----------------------------------------------------------------------------------------
    def close(self) -> None:
        """Release every feeder still waiting (they get IndexClosedError)."""
        with self._lock, self._mapping_synchronizer:
            self.closed = True
            for latch in self._latches.values():
                latch.terminate()
            self._latches.clear()
            self._mapping_synchronizer.notify_all()

    def mapping_count(self) -> int:
        return self.tracker.mapping_count()

    def stored_size(self) -> int:
        """Bytes of the index's records (the buckets and the range), as the database stores them."""
        from minidb.replication.vlsn.range import RANGE_SIZE

        return sum(b.encoded_size() for b in self.tracker.buckets()) + RANGE_SIZE

    def dump(self) -> str:
        """The index as text: the range, then every bucket with its mappings (golden-tested)."""
        return "VLSN index: " + self.tracker.dump().split(": ", 1)[1]

    def __repr__(self) -> str:
        return f"VLSNIndex(range {self.range}, {self.tracker.bucket_count} buckets)"


# every replicated environment builds its index here: the reference, or a course project's class (minidb.impl)
VLSN_INDEX = impl.hot_spot(VLSNIndex, twin=False, project="vlsn_index")

__all__ = ["VLSNIndex", "VLSN_INDEX", "FlushResult", "HeadTruncationResult", "INDEX_STATS"]
