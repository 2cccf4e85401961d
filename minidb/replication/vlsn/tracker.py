"""The VLSN tracker (JE's ``VLSNTracker``): the buckets in memory and the range.

The tracker holds the index's buckets, ordered by first VLSN, and the
current :class:`~minidb.replication.vlsn.range.VLSNRange`. Its invariants (seed
000, "Persistent storage"):

- buckets are ordered by VLSN;
- only the last bucket is the target of updates at any time (the tracker
  closes a bucket when it starts the next one);
- a bucket written to disk is immutable: a flush closes the last bucket
  before writing it (:meth:`flush_snapshot`), so the next mapping starts a
  new bucket; only a tail truncation changes a written bucket again;
- a bucket maps a single file, but a file may have several buckets;
- there may be gaps *between* buckets: ``put`` is not serialized, so a VLSN
  that arrives after the next bucket was started has nowhere to go and is
  simply not kept, just as if the index had optimized it away;
- the range's first and last VLSN always have mappings (a ghost bucket
  stands in at the head after cleaning), so every VLSN of the range has a
  mapping at or below it and one at or above it.

:meth:`VLSNTracker.track` registers one mapping::

    VLSN above the last bucket's last   -> the last bucket, or, if it refuses
                                           (other file, full, too far), a new
                                           bucket; the old one is closed
    VLSN inside the last bucket         -> the last bucket (may fill a hole)
    VLSN below the range's first        -> a new bucket at the head (only
                                           before any head truncation)
    any other VLSN (an older bucket's)  -> not kept
    and in every case the range is updated (an out-of-order VLSN does not move it)

Example (stride 4, max 1000): 9..13 in file 10 make bucket [9..13]; 14 in
file 11 is refused by it, so it is closed and bucket [14..] starts. If 16
then arrives before 15, bucket [14..16] keeps 14 and 16 (last); 15 changes
nothing and the range stays 9..16.

Truncation. From the head (log cleaning, :meth:`remove_from_head`): buckets
wholly at or below ``delete_end`` go; if no bucket maps ``delete_end + 1``
a :class:`~minidb.replication.vlsn.bucket.GhostBucket` is put at the head. From
the tail (syncup rollback, :meth:`remove_from_tail`): buckets from
``delete_start`` on go, the one that straddles it is cut, and ``delete_start
- 1`` keeps a mapping. Deleted buckets that were on disk are remembered, so
the next flush deletes their records.

Locking: the tracker's mutex guards the bucket list and the range; the range
is replaced, never changed, so readers may read it without the mutex. The
mutex comes after the index's (VLSNIndex -> VLSNTracker) and before a
bucket's (VLSNTracker -> VLSNBucket).
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass

from minidb.log import LSN
from minidb.replication.errors import VLSNRangeError
from minidb.replication.vlsn.allocator import FIRST_VLSN
from minidb.replication.vlsn.bucket import (
    DEFAULT_MAX_DISTANCE,
    DEFAULT_MAX_MAPPINGS,
    DEFAULT_STRIDE,
    GhostBucket,
    VLSNBucket,
)
from minidb.replication.vlsn.range import EMPTY_RANGE, VLSNRange
from minidb.stats import Stats, Trace

TRACKER_STATS = ["nPuts", "nOutOfOrderPuts", "nMappingsNotKept", "nBucketsCreated", "nHeadBucketsDeleted",
                 "nTailBucketsDeleted", "nGhostBuckets"]


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


@dataclass(frozen=True)
class HeadTruncation:
    """What :meth:`VLSNTracker.remove_from_head` did."""

    delete_end: int
    deleted: tuple[int, ...]  # first VLSNs of the buckets deleted
    ghost: GhostBucket | None


class VLSNTracker:
    """Buckets in VLSN order and the range (see the module documentation)."""

    def __init__(self, stride: int = DEFAULT_STRIDE, max_mappings: int = DEFAULT_MAX_MAPPINGS,
                 max_distance: int = DEFAULT_MAX_DISTANCE, name: str = "tracker", trace: Trace | None = None):
        VLSNBucket(1, stride, max_mappings, max_distance, FIRST_VLSN)  # checks the parameters
        self.stride = stride
        self.max_mappings = max_mappings
        self.max_distance = max_distance
        self.name = name
        self.lock = threading.RLock()  # the tracker mutex
        self.range: VLSNRange = EMPTY_RANGE  # replaced atomically, read without the mutex
        self.stats = Stats(name, TRACKER_STATS)
        self.trace = trace if trace is not None else Trace()
        self._buckets: list[VLSNBucket] = []
        self._firsts: list[int] = []
        self._floor = FIRST_VLSN  # no bucket is ever made below this (raised by head truncation)
        self.generation = 0  # bumped when buckets are deleted or replaced: scanners drop the bucket they hold
        self.on_disk: set[int] = set()  # first VLSNs of the buckets the database holds
        self.deleted_on_disk: set[int] = set()  # ... of buckets deleted here, still in the database

    # -- reading ------------------------------------------------------------------------------
    def buckets(self) -> list[VLSNBucket]:
        with self.lock:
            return list(self._buckets)

    @property
    def bucket_count(self) -> int:
        return len(self._buckets)

    def last_bucket(self) -> VLSNBucket | None:
        with self.lock:
            return self._buckets[-1] if self._buckets else None

    def get_lte_bucket(self, vlsn: int) -> VLSNBucket | None:
        """The bucket with the largest first VLSN at or below ``vlsn``."""
        with self.lock:
            i = bisect.bisect_right(self._firsts, vlsn) - 1
            return self._buckets[i] if i >= 0 else None

    def get_gte_bucket(self, vlsn: int) -> VLSNBucket | None:
        """The bucket that owns ``vlsn``, else the first bucket after it."""
        with self.lock:
            i = bisect.bisect_right(self._firsts, vlsn) - 1
            if i >= 0 and self._buckets[i].last >= vlsn:
                return self._buckets[i]
            return self._buckets[i + 1] if i + 1 < len(self._buckets) else None

    def _check_in_range(self, vlsn: int) -> VLSNRange:
        current = self.range
        if not isinstance(vlsn, int):
            raise VLSNRangeError(f"a VLSN is a positive integer, not {vlsn!r} (the index holds {current})")
        if not current.contains(vlsn):
            raise VLSNRangeError(f"VLSN {vlsn} is outside the range of the VLSN index ({current})")
        return current

    def get_lte_mapping(self, vlsn: int) -> tuple[tuple[int, LSN], VLSNBucket]:
        """The nearest mapping at or below ``vlsn`` (in the range), and the bucket that gave it."""
        with self.lock:
            self._check_in_range(vlsn)
            i = bisect.bisect_right(self._firsts, vlsn) - 1
            while i >= 0:
                found = self._buckets[i].get_lte_mapping(vlsn)
                if found is not None:
                    return found, self._buckets[i]
                i -= 1
        raise AssertionError(f"{self.name}: no mapping at or below VLSN {vlsn} in range {self.range}")

    def get_gte_mapping(self, vlsn: int) -> tuple[tuple[int, LSN], VLSNBucket]:
        """The nearest mapping at or above ``vlsn`` (in the range), and the bucket that gave it."""
        with self.lock:
            self._check_in_range(vlsn)
            i = max(0, bisect.bisect_right(self._firsts, vlsn) - 1)
            while i < len(self._buckets):
                found = self._buckets[i].get_gte_mapping(vlsn)
                if found is not None:
                    return found, self._buckets[i]
                i += 1
        raise AssertionError(f"{self.name}: no mapping at or above VLSN {vlsn} in range {self.range}")

    def get_lte_lsn(self, vlsn: int) -> LSN:
        return self.get_lte_mapping(vlsn)[0][1]

    def get_gte_lsn(self, vlsn: int) -> LSN:
        return self.get_gte_mapping(vlsn)[0][1]

    def mapping_count(self) -> int:
        """Mappings kept in all buckets (stored offsets plus each bucket's last)."""
        with self.lock:
            return sum(len(b.mappings()) for b in self._buckets)

    # -- registering mappings ------------------------------------------------------------------------
    def _new_bucket(self, vlsn: int, lsn: LSN) -> VLSNBucket:
        bucket = VLSNBucket(lsn.file, self.stride, self.max_mappings, self.max_distance, vlsn)
        bucket.put(vlsn, lsn)
        self.stats.add("nBucketsCreated")
        return bucket

    def _insert(self, bucket: VLSNBucket) -> None:
        i = bisect.bisect_left(self._firsts, bucket.first)
        if i < len(self._firsts) and self._firsts[i] == bucket.first:
            raise AssertionError(f"{self.name}: two buckets start at VLSN {bucket.first}")
        self._firsts.insert(i, bucket.first)
        self._buckets.insert(i, bucket)

    def track(self, vlsn: int, lsn: LSN, type_name: str) -> str:
        """Register ``vlsn`` -> ``lsn`` (an entry of type ``type_name``); returns what happened."""
        if vlsn < FIRST_VLSN or lsn.is_null:
            raise ValueError(f"cannot track VLSN {vlsn} at {lsn}")
        with self.lock:
            self.stats.add("nPuts")
            current = self.range
            if vlsn <= current.last:
                self.stats.add("nOutOfOrderPuts")
            last = self._buckets[-1] if self._buckets else None
            if last is None:
                if vlsn < self._floor:
                    what = f"not kept: VLSN {vlsn} was truncated from the head"
                else:
                    self._insert(self._new_bucket(vlsn, lsn))
                    what = f"first bucket, file 0x{lsn.file:x}"
            elif vlsn > last.last:
                why = last.refusal(vlsn, lsn)
                if why is None:
                    last.put(vlsn, lsn)
                    what = f"bucket {last.first}"
                else:
                    last.close()
                    self._insert(self._new_bucket(vlsn, lsn))
                    what = f"new bucket {vlsn} ({why})"
            elif vlsn >= last.first:
                kept = last.put(vlsn, lsn) and last.get_lsn(vlsn) == lsn
                what = f"bucket {last.first}, out of order" + ("" if kept else ", not kept")
                if not kept:
                    self.stats.add("nMappingsNotKept")
            elif vlsn < current.first and vlsn >= self._floor:
                head = self._new_bucket(vlsn, lsn)
                head.close()
                self._insert(head)
                what = f"new head bucket {vlsn} (out of order, before the range)"
            else:
                self.stats.add("nMappingsNotKept")
                what = f"not kept: bucket {last.first} is the only one updated"
            self.range = current.get_update_for_new_mapping(vlsn, type_name)
        return what

    # -- loading (recovery) ---------------------------------------------------------------------------
    def load(self, buckets: list[VLSNBucket], stored_range: VLSNRange) -> None:
        """Take the buckets and range read from the database (an empty tracker only)."""
        with self.lock:
            if self._buckets or not self.range.is_empty:
                raise AssertionError(f"{self.name}: load into a tracker that holds mappings")
            for bucket in sorted(buckets, key=lambda b: b.first):
                bucket.dirty = False
                self._insert(bucket)
                self.on_disk.add(bucket.first)
            for bucket in self._buckets[:-1]:
                bucket.closed = True
            self.range = stored_range
            if not stored_range.is_empty:
                self._floor = stored_range.first

    def replace(self, buckets: list[VLSNBucket], new_range: VLSNRange, floor: int) -> None:
        """Install a merged set of buckets (see :mod:`.recovery`)."""
        with self.lock:
            kept = {b.first for b in buckets}
            self.generation += 1
            self.deleted_on_disk |= {first for first in self.on_disk if first not in kept}
            self._buckets, self._firsts = [], []
            for bucket in sorted(buckets, key=lambda b: b.first):
                self._insert(bucket)
            for bucket in self._buckets[:-1]:
                if not bucket.closed:
                    bucket.close()
            self.range = new_range
            self._floor = floor

    # -- truncation ------------------------------------------------------------------------------------
    def _delete(self, bucket: VLSNBucket, stat: str) -> None:
        self.generation += 1
        i = self._buckets.index(bucket)
        del self._buckets[i]
        del self._firsts[i]
        if bucket.first in self.on_disk:
            self.deleted_on_disk.add(bucket.first)
        self.stats.add(stat)

    def remove_from_head(self, delete_end: int, delete_file_number: int) -> HeadTruncation:
        """Forget the mappings up to ``delete_end``; files up to ``delete_file_number`` go away.

        Every VLSN in the deleted files must be at most ``delete_end`` (else
        nothing changes and this raises). The range is shortened first, so
        that no reader or writer touches the buckets about to go, then the
        dead buckets are deleted (JE `VLSNIndex`, "Log cleaning truncates the
        VLSNIndex from the beginning").
        """
        with self.lock:
            current = self.range
            if current.is_empty or delete_end < current.first:
                return HeadTruncation(delete_end, (), None)
            if delete_end >= current.last:
                raise VLSNRangeError(f"cannot truncate the head at VLSN {delete_end}: the range is {current}")
            dead = [b for b in self._buckets if b.last <= delete_end]
            for bucket in self._buckets:
                if bucket not in dead and not bucket.is_ghost and bucket.file_number <= delete_file_number:
                    raise VLSNRangeError(
                        f"cannot delete file 0x{delete_file_number:x} with the index truncated at VLSN {delete_end}: "
                        f"{bucket.describe()} still maps it")
            self.range = current.shorten_from_head(delete_end)
            for bucket in dead:
                self._delete(bucket, "nHeadBucketsDeleted")
            self._floor = delete_end + 1
            ghost = None
            head = self._buckets[0]
            if head.first > delete_end + 1:
                next_first = head.get_gte_mapping(head.first)
                assert next_first is not None
                ghost = GhostBucket(delete_end + 1, LSN(delete_file_number + 1, 0), next_first[1],
                                    self.stride, self.max_mappings, self.max_distance)
                self._insert(ghost)
                self.stats.add("nGhostBuckets")
            self.trace.emit("%s: truncated the head at VLSN %d (files up to 0x%x): %d buckets deleted%s", self.name,
                            delete_end, delete_file_number, len(dead),
                            f"; ghost bucket at VLSN {ghost.first}" if ghost else "")
            return HeadTruncation(delete_end, tuple(b.first for b in dead), ghost)

    def remove_from_tail(self, delete_start: int, prev_lsn: LSN, last_sync: int | None = None,
                         last_txn_end: int | None = None) -> list[int]:
        """Forget the mappings from ``delete_start`` on; ``prev_lsn`` is where ``delete_start - 1`` is."""
        with self.lock:
            current = self.range
            if current.is_empty or delete_start > current.last:
                return []
            new_last = delete_start - 1
            if new_last >= current.first and prev_lsn.is_null:
                holder = self.get_lte_bucket(new_last)
                exact = holder.get_lsn(new_last) if holder is not None else None
                if exact is None:
                    raise VLSNRangeError(f"truncating at VLSN {delete_start} needs the LSN of VLSN {new_last}")
                prev_lsn = exact
            self.generation += 1
            deleted = []
            for bucket in [b for b in self._buckets if b.first >= delete_start]:
                self._delete(bucket, "nTailBucketsDeleted")
                deleted.append(bucket.first)
            if self._buckets:
                last = self._buckets[-1]
                last.remove_from_tail(delete_start, prev_lsn)
                if last.is_empty:
                    self._delete(last, "nTailBucketsDeleted")
                    deleted.append(last.first)
            new_range = current.shorten_from_end(delete_start, last_sync, last_txn_end)
            if not new_range.is_empty:
                last = self._buckets[-1] if self._buckets else None
                if last is None or last.last != new_last:
                    if last is None or not last.put(new_last, prev_lsn):
                        if last is not None:
                            last.close()
                        self._insert(self._new_bucket(new_last, prev_lsn))
            self.range = new_range
            self.trace.emit("%s: truncated the tail from VLSN %d: range %s; %d buckets deleted", self.name,
                            delete_start, new_range, len(deleted))
            return deleted

    # -- flushing ------------------------------------------------------------------------------------------
    def flush_snapshot(self) -> tuple[list[tuple[VLSNBucket, int, bytes]], list[int], VLSNRange]:
        """Under the mutex: the dirty buckets (with their change counts and bytes), deletions, the range.

        A bucket written to disk is immutable: the last bucket, if it is about to be written, is closed
        first, so the next mapping starts a new bucket and a flush never rewrites a flushed bucket (only
        a tail truncation, on a quiescent system, changes one again).
        """
        with self.lock:
            last = self._buckets[-1] if self._buckets else None
            if last is not None and last.dirty and not last.closed:
                last.close()
            dirty = [(b, b.changes, b.encode()) for b in self._buckets if b.dirty]
            return dirty, sorted(self.deleted_on_disk), self.range

    def flushed(self, written: list[tuple[VLSNBucket, int, bytes]], deleted: list[int]) -> None:
        """The snapshot's records are in the database: clean what did not change meanwhile."""
        with self.lock:
            for bucket, changes, _ in written:
                self.on_disk.add(bucket.first)
                with bucket.lock:
                    if bucket.changes == changes:
                        bucket.dirty = False
            for first in deleted:
                self.on_disk.discard(first)
                self.deleted_on_disk.discard(first)

    # -- text -------------------------------------------------------------------------------------------------
    def dump(self) -> str:
        with self.lock:
            count = sum(len(b.mappings()) for b in self._buckets)
            lines = [f"{self.name}: range {self.range}; {plural(len(self._buckets), 'bucket')}, "
                     f"{plural(count, 'mapping')}"]
            for bucket in self._buckets:
                lines += ["  " + line for line in bucket.dump().splitlines()]
            return "\n".join(lines)

    def __repr__(self) -> str:
        return f"VLSNTracker({self.name}, range {self.range}, {len(self._buckets)} buckets)"


__all__ = ["VLSNTracker", "HeadTruncation", "TRACKER_STATS"]
