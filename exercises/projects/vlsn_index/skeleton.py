"""Project vlsn_index: the replication VLSN index, whole (see README.md).

Every replicated environment builds its VLSN index through the hot spot
``VLSN_INDEX`` (``ReplicatedEnvironment.open``, the crash tests, the tour);
with ``--impl student --project vlsn_index`` it constructs the ``VLSNIndex``
of this file instead. Every method below is one the engine (the log's entry
listener, the checkpointer's step 6, recovery, the cleaner and the eraser,
feeders, syncup's rollback), its scanners or its pictures call; its
docstring is the contract.

The contracts, in one place (JE's ``VLSNIndex``):

- **Mappings.** ``put(vlsn, lsn, type)`` registers where a replicated entry
  was logged. Puts arrive after the log write latch is released, so out of
  order; the range (first, last, last sync-able, last txn end) only ever
  moves forward over a contiguous prefix, and every VLSN of the range can be
  found: ``get_lte_lsn(v) <= lsn of v <= get_gte_lsn(v)``.
- **Sparse buckets.** Mappings are kept in buckets (one log file each,
  ordered by VLSN, only the last one updated, a written bucket closed); the
  given ``VLSNTracker`` keeps them and the range, with the stride, the
  mapping limit and the distance of the configuration.
- **Waiting.** ``wait_for_vlsn`` blocks until the VLSN is in the range, its
  timeout passes (``WaitTimeoutError``), the index closes
  (``IndexClosedError``) or the waiter cancels (``WaitCancelledError``); a
  put that reaches the VLSN hands its log item to the waiters.
- **Flushing.** At every checkpoint (step 6) the changed buckets, the
  deleted ones and the range are written to the internal database
  ``config.database_name`` in ONE internal transaction (keys:
  ``encode_key(first VLSN)``, the range under ``RANGE_KEY``), never on a put.
- **Recovery.** Recovery re-tracks the log from the last CkptStart in a
  ``VLSNRecoveryTracker`` (fed by ``recovery_listener``); at the first
  checkpoint the flushed buckets and range are loaded and merged with it
  (``read_index_database``, ``merge``), and VLSNs continue after the last.
- **Truncation.** From the head before the cleaner deletes or the eraser
  erases files (never below ``min_vlsn_index_size`` VLSNs; made durable at
  once); from the tail only inside a syncup rollback (a direct
  ``truncate_from_tail`` is refused and changes nothing).

Given, to build on: ``VLSNTracker`` (buckets and the range in memory),
``VLSNBucket``, ``VLSNRange``, ``VLSNAllocator``, the recovery tracker and
``merge``, the scanners, ``LogItemCache`` and ``VLSNAwaitLatch``, the errors,
``Stats`` and ``Trace``; the records ``FlushResult`` and
``HeadTruncationResult`` and ``INDEX_STATS`` (:mod:`minidb.replication.vlsn.results`).
Not the reference index itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidb.log import LSN, LogEntry, LogManager
from minidb.log.types import EntryType
from minidb.logstore import Durability
from minidb.replication.vlsn.config import VLSNIndexConfig
from minidb.replication.vlsn.range import VLSNRange
from minidb.replication.vlsn.recovery import MergeResult, VLSNRecoveryTracker
from minidb.replication.vlsn.results import INDEX_STATS, FlushResult, HeadTruncationResult  # noqa: F401
from minidb.replication.vlsn.scanner import BackwardVLSNScanner, ForwardVLSNScanner
from minidb.replication.vlsn.wait import LogItem, WaitCancel

if TYPE_CHECKING:
    from minidb.logstore import Environment

class VLSNIndex:
    """The VLSN index of one node; see the module documentation."""

    def __init__(self, config: VLSNIndexConfig | None = None, log: LogManager | None = None):
        """``config``: stride, mapping limit, distance, cache size, database name, ``min_vlsn_index_size``,
        trace (``VLSNIndexConfig()`` if None). ``log``: the log to scan (set later by :meth:`attach`).

        Attributes the engine, scanners, pictures and tests read: ``config``; ``tracker`` (a given
        ``VLSNTracker`` built from the configuration: the scanners and pictures read its buckets);
        ``allocator`` (a ``VLSNAllocator``: the log takes VLSNs from it); ``log`` and ``env`` (None until
        attached); ``merge_result`` (the last recovery's ``MergeResult``, None before); ``flushes`` (every
        ``FlushResult``, in order); ``closed``; ``stats`` (``Stats("vlsnIndex", INDEX_STATS)``, counted as
        the names say) and ``trace`` (``Trace(enabled=config.trace)``)."""
        raise NotImplementedError("VLSNIndex.__init__")

    @property
    def range(self) -> VLSNRange:
        """The current range: readable at any time without blocking, never a half-updated one."""
        raise NotImplementedError("VLSNIndex.range")

    def put(self, vlsn: int, lsn: LSN, type_name: str, entry: LogEntry | None = None) -> None:
        """Register that the entry with ``vlsn`` (of type ``type_name``) was logged at ``lsn``; puts come in
        any order. Keeps its log item (with ``entry``) in the cache and wakes the waiters it satisfies."""
        raise NotImplementedError("VLSNIndex.put")

    def log_listener(self, lsn: LSN, entry_type: EntryType, vlsn: int | None) -> None:
        """A log listener: a put for an entry with a VLSN, nothing for one without."""
        raise NotImplementedError("VLSNIndex.log_listener")

    def entry_listener(self, entry: LogEntry) -> None:
        """The log's entry listener: a put of the entry's VLSN, LSN, type and the entry (none without a VLSN)."""
        raise NotImplementedError("VLSNIndex.entry_listener")

    def get_lte_lsn(self, vlsn: int) -> LSN:
        """The LSN of the nearest mapping at or below ``vlsn``; ``VLSNRangeError`` outside the range."""
        raise NotImplementedError("VLSNIndex.get_lte_lsn")

    def get_gte_lsn(self, vlsn: int) -> LSN:
        """The LSN of the nearest mapping at or above ``vlsn``; ``VLSNRangeError`` outside the range."""
        raise NotImplementedError("VLSNIndex.get_gte_lsn")

    def forward_scanner(self) -> ForwardVLSNScanner:
        """A given ``ForwardVLSNScanner`` over this index."""
        raise NotImplementedError("VLSNIndex.forward_scanner")

    def backward_scanner(self) -> BackwardVLSNScanner:
        """A given ``BackwardVLSNScanner`` over this index."""
        raise NotImplementedError("VLSNIndex.backward_scanner")

    def find(self, vlsn: int) -> LogEntry:
        """The log entry that carries ``vlsn``."""
        raise NotImplementedError("VLSNIndex.find")

    def wait_for_vlsn(self, vlsn: int, timeout: float | None, cancel: WaitCancel | None = None) -> LogItem | None:
        """Block until ``vlsn`` is in the range; its log item if a put handed it over or the cache holds it,
        None if it must be read from the log. ``VLSNRangeError`` for a VLSN below 1 or a negative timeout;
        ``WaitTimeoutError``, ``IndexClosedError``, ``WaitCancelledError`` as the module docs say. No mutex
        is held while waiting."""
        raise NotImplementedError("VLSNIndex.wait_for_vlsn")

    def await_item(self, vlsn: int, timeout: float | None,
                   cancel: WaitCancel | None = None) -> tuple[LogItem | None, str]:
        """:meth:`wait_for_vlsn`, and where the item came from: ``FROM_WAIT_LATCH``, ``FROM_CACHE`` or
        ``FROM_LOG`` (of :mod:`minidb.replication.vlsn.wait`)."""
        raise NotImplementedError("VLSNIndex.await_item")

    def await_waiter(self, vlsn: int, timeout: float | None = None) -> bool:
        """Block until some thread waits for ``vlsn`` (tests order threads with it, never with sleeps)."""
        raise NotImplementedError("VLSNIndex.await_waiter")

    def waiting_for(self) -> list[int]:
        """The VLSNs threads wait for, ascending."""
        raise NotImplementedError("VLSNIndex.waiting_for")

    def attach(self, env: "Environment") -> None:
        """Use ``env``'s log and internal databases; ``VLSNIndexError`` if attached to another environment."""
        raise NotImplementedError("VLSNIndex.attach")

    def begin_recovery(self) -> VLSNRecoveryTracker:
        """A new recovery tracker (same stride, limit, distance) for the coming recovery, and remember it."""
        raise NotImplementedError("VLSNIndex.begin_recovery")

    def recovery_listener(self, entry: LogEntry) -> None:
        """Recovery read ``entry``: track it. ``VLSNIndexError`` outside a recovery."""
        raise NotImplementedError("VLSNIndex.recovery_listener")

    def recovery_read_done(self) -> None:
        """Recovery has read the log: refuse what the tracker found wrong, before anything is written."""
        raise NotImplementedError("VLSNIndex.recovery_read_done")

    def finish_recovery(self) -> MergeResult:
        """Load the flushed buckets and range, merge the recovery tracker into them, continue VLSNs after the
        merged range's last. ``VLSNIndexError`` without an environment or a recovery to finish."""
        raise NotImplementedError("VLSNIndex.finish_recovery")

    def on_checkpoint(self, run) -> str:
        """The checkpointer's step 6: attach to ``run.env``, finish a pending recovery, flush; the flush's
        ``describe()`` line."""
        raise NotImplementedError("VLSNIndex.on_checkpoint")

    def flush_to_database(self, durability: Durability = Durability.NO_SYNC) -> FlushResult:
        """Write the changed buckets, delete the truncated ones and write the range, in one internal
        transaction committed with ``durability`` under the environment latch; all of it or (aborted) none."""
        raise NotImplementedError("VLSNIndex.flush_to_database")

    def truncate_from_head(self, delete_end: int, delete_file_number: int) -> HeadTruncationResult:
        """Drop VLSNs up to ``delete_end`` (files up to ``delete_file_number`` will go) and flush durably.
        Not done (nothing changes) when the range ends before it or fewer than ``min_vlsn_index_size``
        VLSNs would be left; ``VLSNRangeError`` for the range's last VLSN or beyond. Cached log items up to
        ``delete_end`` are dropped."""
        raise NotImplementedError("VLSNIndex.truncate_from_head")

    def last_vlsn_up_to_file(self, file_number: int) -> int:
        """The last visible VLSN in log files up to ``file_number`` (0: none); ``VLSNRangeError`` for the
        log's last file."""
        raise NotImplementedError("VLSNIndex.last_vlsn_up_to_file")

    def truncate_head_for_file(self, file_number: int) -> HeadTruncationResult:
        """:meth:`truncate_from_head` so that files up to ``file_number`` may be deleted (not done when they
        hold no VLSN)."""
        raise NotImplementedError("VLSNIndex.truncate_head_for_file")

    def release_files(self, file_number: int, *, without_vlsns: bool) -> bool:
        """May files up to ``file_number`` be deleted or erased? Truncates the head past them first; True
        when the range no longer covers them, ``without_vlsns`` when they hold no VLSN."""
        raise NotImplementedError("VLSNIndex.release_files")

    def before_file_deletion(self, file_number: int) -> bool:
        """The cleaner's deletion listener: :meth:`release_files` for a deletion (files without VLSNs: True)."""
        raise NotImplementedError("VLSNIndex.before_file_deletion")

    def release_file_for_erasure(self, file_number: int) -> bool:
        """The eraser's hook: :meth:`release_files` for an erasure (files without VLSNs: False)."""
        raise NotImplementedError("VLSNIndex.release_file_for_erasure")

    def truncate_from_tail(self, delete_start: int, prev_lsn: LSN | None = None) -> VLSNRange:
        """Always refused with ``TailTruncationError``; nothing changes (only a rollback truncates the tail)."""
        raise NotImplementedError("VLSNIndex.truncate_from_tail")

    def truncate_from_tail_in_rollback(self, delete_start: int, prev_lsn: LSN | None = None) -> VLSNRange:
        """Syncup rollback's index step: drop VLSNs from ``delete_start`` on (``prev_lsn``: where VLSN
        ``delete_start - 1`` is, found in the log if None), recompute the last sync and txn end from the log,
        continue VLSNs at ``delete_start``, drop cached items from it, flush durably; the new range.
        ``VLSNRangeError`` below the range's first; beyond its last, nothing changes."""
        raise NotImplementedError("VLSNIndex.truncate_from_tail_in_rollback")

    def close(self) -> None:
        """Mark closed and release every waiter (they raise ``IndexClosedError``)."""
        raise NotImplementedError("VLSNIndex.close")

    def mapping_count(self) -> int:
        """The mappings the buckets hold."""
        raise NotImplementedError("VLSNIndex.mapping_count")

    def stored_size(self) -> int:
        """Bytes of the buckets' and the range's records as the database stores them."""
        raise NotImplementedError("VLSNIndex.stored_size")

    def dump(self) -> str:
        """``"VLSN index: "`` and the tracker's dump after its own prefix (golden-tested)."""
        raise NotImplementedError("VLSNIndex.dump")
