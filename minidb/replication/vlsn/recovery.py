"""Recovering the VLSN index: the flushed buckets, re-tracked mappings, and their merge.

The VLSN index's database is recovered like every other database, but the
part of the range that was never flushed is missing from it. Recovery
piggybacks on the log scan it does anyway: a
:class:`VLSNRecoveryTracker` (JE's ``VLSNRecoveryTracker``) is a recovery
listener of the log store, which shows it every entry from the last
CkptStart to the end of the log; it re-tracks every replicated entry. The
tracker is then merged into the index loaded from the database
(:func:`merge`). The JE documentation's example (000, "Recovery")::

    LSN
    100  firstActiveLSN
    200  CkptStart
    300  VLSN 78
    400  VLSNIndex flushed here      (range 1..78)
    500  CkptEnd
    600  VLSN 79
         crash

The index loaded from the database is the version flushed at 400: it does
not include VLSN 79. The tracking pass from CkptStart (200) to the end of the
log sweeps up 78 and 79; merged, the index maps 1..79. This works because a
checkpoint's flush holds every mapping logged before its CkptStart
(recovery re-tracks from CkptStart on), so the two always meet or overlap.

Merge rules:

- where the two overlap, the recovery tracker wins: the flushed buckets from
  the recovery tracker's first VLSN on are dropped, one that straddles it is
  cut back;
- a gap between them (the flushed range ends before the recovery tracker's
  first VLSN minus one) is an error: mappings would be missing;
- the merged range runs from the flushed range's first VLSN (head truncation
  is durable) to the recovery tracker's last; its landmarks are the later of
  the two.

The recovery tracker also checks the stream itself: the visible replicated
entries it sees must carry consecutive VLSNs, and every invisible one must
be replaced later in the log by a visible entry with its VLSN. A syncup
rollback marks the entries after the matchpoint invisible and the master's
entries then take their VLSNs again, in place; the checksum leaves the flag
out (it is set in place), so an invisible entry that nothing replaced is a
flipped bit, and corruption, unless a ``RollbackStart`` after it names it
(its VLSN is after that rollback's matchpoint). A ``RollbackStart`` without
its ``RollbackEnd`` is a rollback a crash cut short: the tracker keeps it as
``pending_rollback`` and the environment finishes it when it opens
(:mod:`.rollback`). Every rollback it sees, finished or not, is kept in
``rollbacks``: the environment undoes the finished ones again on the
recovered tree, whose BINs logged before a rollback may still point at the
versions it rolled back.

Byte formats of what the database holds: :mod:`.bucket` and :mod:`.range`;
keys: :mod:`.vlsn`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from minidb.log import LSN, NULL_LSN, LogEntry
from minidb.replication.errors import VLSNIndexCorruptionError
from minidb.replication.vlsn.allocator import NULL_VLSN, RANGE_KEY_VLSN, decode_key
from minidb.replication.vlsn.bucket import VLSNBucket
from minidb.replication.vlsn.range import EMPTY_RANGE, VLSNRange
from minidb.replication.vlsn.tracker import VLSNTracker, plural


@dataclass
class PendingRollback:
    """A RollbackStart the VLSN recovery tracker saw (after the CkptStart recovery starts from): without its
    RollbackEnd it is finished at open (:func:`redo_marks_and_undo`), with it its undo is done again
    (:func:`undo_again`)."""

    matchpoint_vlsn: int
    matchpoint_lsn: LSN
    start_lsn: LSN
    txn_ids: tuple[int, ...]
    undone: int = 0
    marked: list[tuple[int, LSN, str]] = field(default_factory=list)


class VLSNRecoveryTracker(VLSNTracker):
    """Collects the mappings recovery finds from CkptStart to the end of the log."""

    def __init__(self, stride: int, max_mappings: int, max_distance: int):
        super().__init__(stride, max_mappings, max_distance, name="recovery tracker")
        self.entries_seen = 0
        self.unreplaced: dict[int, LSN] = {}  # invisible entries no later entry has replaced (VLSN -> LSN)
        self.first_lsn = NULL_LSN  # where the tracking pass began (the last CkptStart)
        self.pending_rollback: PendingRollback | None = None  # a RollbackStart without its RollbackEnd
        self.rollbacks: list[PendingRollback] = []  # every RollbackStart seen, in log order (the pending one last)

    def check_rollbacks(self) -> None:
        """Every invisible entry must have been replaced by a later one with its VLSN (see the module doc)."""
        if self.unreplaced:
            vlsn = min(self.unreplaced)
            raise VLSNIndexCorruptionError(
                f"the entry at {self.unreplaced[vlsn]} (VLSN {vlsn}) is marked INVISIBLE, but no later entry "
                f"replaces it as a syncup rollback would: the flag bit, which the checksum leaves out, was "
                f"changed on disk")

    def track_entry(self, entry: LogEntry) -> None:
        """A recovery listener: called with every entry from CkptStart to the end of the log, in order."""
        if self.first_lsn.is_null:
            self.first_lsn = entry.lsn
        self.entries_seen += 1
        vlsn = entry.vlsn
        if vlsn is None:
            self._track_rollback(entry)
            return
        if entry.header.invisible:
            self.unreplaced[vlsn] = entry.lsn
            return
        for rolled_back in [v for v in self.unreplaced if v >= vlsn]:  # the master's entries replace them
            del self.unreplaced[rolled_back]
        last = self.range.last
        if last != NULL_VLSN and vlsn != last + 1:
            raise VLSNIndexCorruptionError(f"the log holds VLSN {vlsn} at {entry.lsn} right after VLSN {last}: "
                                 f"the replication stream has a gap or goes backwards")
        self.track(vlsn, entry.lsn, entry.type_name)


    def _track_rollback(self, entry: LogEntry) -> None:
        if entry.type_name == "RollbackStart":
            values = entry.values
            matchpoint = values["matchpoint_vlsn"]
            for rolled_back in [v for v in self.unreplaced if v > matchpoint]:  # this rollback's entries
                del self.unreplaced[rolled_back]
            self.pending_rollback = PendingRollback(matchpoint, values["matchpoint_lsn"], entry.lsn,
                                                    tuple(t["txn_id"] for t in values["txn_ids"]))
            self.rollbacks.append(self.pending_rollback)
        elif entry.type_name == "RollbackEnd":
            self.pending_rollback = None


def read_index_database(db) -> tuple[list[VLSNBucket], VLSNRange]:
    """The buckets and range stored in the VLSN index's database ``db`` (a log store Database)."""
    buckets: list[VLSNBucket] = []
    stored_range = EMPTY_RANGE
    for key, value in db.items():
        try:
            number = decode_key(key)
        except ValueError as e:
            raise VLSNIndexCorruptionError(f"database {db.name}: key {key.hex()} is not a VLSN index key ({e})") from None
        if number == RANGE_KEY_VLSN:
            stored_range = VLSNRange.decode(value)
            continue
        bucket = VLSNBucket.decode(value)
        if bucket.first != number:
            raise VLSNIndexCorruptionError(f"database {db.name}: bucket stored under key {number} starts at VLSN {bucket.first}")
        buckets.append(bucket)
    if stored_range.is_empty:
        return [], stored_range
    kept = [b for b in buckets if not b.is_empty and b.last >= stored_range.first and b.first <= stored_range.last]
    return kept, stored_range


@dataclass(frozen=True)
class MergeResult:
    """What :func:`merge` found and did."""

    flushed_range: VLSNRange
    recovered_range: VLSNRange
    merged_range: VLSNRange
    buckets_loaded: int
    buckets_dropped: int  # flushed buckets the recovery tracker replaced
    buckets_cut: int  # flushed buckets cut back where the recovery tracker begins
    recovery_buckets: int
    entries_seen: int

    def lines(self) -> list[str]:
        return [
            f"loaded the flushed index: range {self.flushed_range}, {plural(self.buckets_loaded, 'bucket')}",
            f"re-tracked {self.entries_seen} entries from CkptStart: range {self.recovered_range}, "
            f"{plural(self.recovery_buckets, 'bucket')}",
            f"merged (the recovery tracker wins where they overlap): {self.buckets_dropped} flushed buckets "
            f"replaced, {self.buckets_cut} cut back; range {self.merged_range}",
        ]


def merge(index_tracker: VLSNTracker, recovered: VLSNRecoveryTracker) -> MergeResult:
    """Merge ``recovered`` into ``index_tracker`` (loaded from the database); see the module documentation."""
    recovered.check_rollbacks()
    flushed = index_tracker.range
    found = recovered.range
    loaded = index_tracker.buckets()
    if found.is_empty:
        return MergeResult(flushed, found, flushed, len(loaded), 0, 0, 0, recovered.entries_seen)
    if flushed.last < found.first - 1:
        where = f"ends at VLSN {flushed.last}" if not flushed.is_empty else "is empty"
        raise VLSNIndexCorruptionError(f"the flushed VLSN index {where} but recovery found VLSNs only from {found.first} "
                             f"(from {recovered.first_lsn}): VLSNs {flushed.last + 1}..{found.first - 1} "
                             f"have no mappings")
    kept: list[VLSNBucket] = []
    dropped = cut = 0
    for bucket in loaded:
        if bucket.first >= found.first:
            dropped += 1
            continue
        if bucket.last >= found.first:
            bucket.remove_from_tail(found.first)
            cut += 1
        kept.append(bucket)
    first = flushed.first if not flushed.is_empty else found.first
    tail = [b for b in recovered.buckets() if b.last >= first]

    def landmark(*values: int) -> int:
        inside = [v for v in values if first <= v <= found.last]
        return max(inside) if inside else NULL_VLSN

    merged = VLSNRange(first, found.last, landmark(flushed.last_sync, found.last_sync),
                       landmark(flushed.last_txn_end, found.last_txn_end))
    index_tracker.replace(kept + tail, merged, first)
    return MergeResult(flushed, found, merged, len(loaded), dropped, cut, len(tail), recovered.entries_seen)


__all__ = ["VLSNRecoveryTracker", "read_index_database", "merge", "MergeResult"]
