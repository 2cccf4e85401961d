"""VLSN scanners (JE's ``VLSNScanner``): cursors over the VLSN index that find entries in the log.

Feeders and syncup fetch log entries by VLSN. The index keeps only a sparse
set of mappings, so finding VLSN v means: take the nearest mapping, read the
log from there, and stop at the entry whose header carries v.

- :class:`ForwardVLSNScanner` (feeders, which read forward) starts at the
  mapping *at or below* v (``get_lte_lsn``) and reads forward;
- :class:`BackwardVLSNScanner` (syncup, which searches backward from the
  end for a matchpoint) starts at the mapping *at or above* v
  (``get_gte_lsn``) and reads backward along the entries' ``prev`` offsets.

A scanner finds and *holds on to* the bucket that gave its last mapping, and
asks that bucket directly as long as it owns the VLSNs asked for, taking
only the bucket's mutex; only when it moves past the bucket does it go back
to the tracker (tracker mutex). This keeps feeders (readers) and application
threads (writers) out of each other's way. A forward scanner also remembers
the last entry it found, so a feeder reading v, v+1, v+2 ... reads each entry
once.

Example (stride 4, buckets [9..13] and [14..15] of the JE documentation's example):
``ForwardVLSNScanner(index).find(11)`` starts at 9 -> 10/100 and reads
VLSNs 9, 10, 11: three entries (plus any non-replicated entries in
between); ``BackwardVLSNScanner(index).find(11)`` starts at 13 -> 10/140
and reads 13, 12, 11.

Entries a syncup rollback made invisible are skipped: they are no longer
part of the replication stream. An erased replicated entry is never skipped:
the eraser truncates the index before it erases a file, so one met here is
corruption naming its file and offset (:func:`not_erased`). ``entries_scanned`` says how many entries
the last lookup read (the cost the stride trades against space).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from minidb.log import LSN, LogEntry, file_name
from minidb.replication.errors import VLSNIndexCorruptionError, VLSNIndexError
from minidb.replication.vlsn.bucket import VLSNBucket

if TYPE_CHECKING:
    from minidb.log import LogManager
    from minidb.replication.vlsn.index import VLSNIndex


def walk_forward(log: "LogManager", start: LSN) -> Iterator[LogEntry]:
    """Entries from ``start`` to the end of the log, read one at a time (across files)."""
    lsn = start
    while True:
        end = log.end_lsn
        if lsn >= end:
            return
        if lsn.file < end.file and lsn.offset >= log.disk.size(file_name(lsn.file)):
            lsn = LSN(lsn.file + 1, 0)
            continue
        entry = log.read(lsn)
        yield entry
        lsn = entry.end


def not_erased(entry: LogEntry) -> LogEntry:
    """``entry``, unless it is a replicated entry that was erased: the data eraser truncates the VLSN index
    before it erases a file, so no entry a lookup by VLSN reaches can be erased; one that is is corruption
    (never skipped: a feeder would stream a hole, syncup would match past it)."""
    if entry.header.erased and entry.vlsn is not None:
        raise VLSNIndexCorruptionError(f"{file_name(entry.lsn.file)} at offset 0x{entry.lsn.offset:x}: the entry of "
                                       f"VLSN {entry.vlsn} at {entry.lsn} is erased, inside the VLSN index's range "
                                       "(the data eraser truncates the index before it erases a file)")
    return entry


def stream_vlsn(entry: LogEntry) -> int | None:
    """The VLSN an entry holds in the replication stream (None: not replicated, or rolled back)."""
    if entry.vlsn is None or entry.header.invisible:
        return None
    return entry.vlsn


class VLSNScanner:
    """What both scanners share: the index, the bucket held, the counts.

    ``start_side`` names the mapping a lookup starts from: ``"lte"`` (at or
    below the VLSN asked for) or ``"gte"`` (at or above); each scanner sets it.
    """

    start_side: str

    def __init__(self, index: "VLSNIndex"):
        self.index = index
        self.bucket: VLSNBucket | None = None
        self._generation = -1
        self.entries_scanned = 0  # by the last find
        self.total_scanned = 0
        self.bucket_hits = 0  # lookups answered by the bucket held
        self.tracker_lookups = 0  # lookups that went to the tracker for a bucket

    def _log(self) -> "LogManager":
        if self.index.log is None:
            raise VLSNIndexError("this VLSN index is not attached to a log; it can give LSNs but not read entries")
        return self.index.log

    def _held(self, vlsn: int) -> VLSNBucket | None:
        tracker = self.index.tracker
        bucket = self.bucket
        if bucket is None or self._generation != tracker.generation or not tracker.range.contains(vlsn):
            return None
        return bucket if bucket.owns(vlsn) else None

    def _hold(self, bucket: VLSNBucket) -> None:
        self.bucket = bucket
        self._generation = self.index.tracker.generation

    def get_start_mapping(self, vlsn: int) -> tuple[int, LSN]:
        """The (VLSN, LSN) mapping this scanner starts reading from: the nearest one on its side of
        ``vlsn`` (its VLSN is 0 when a ghost bucket only knows a file)."""
        bound = f"get_{self.start_side}_mapping"
        bucket = self._held(vlsn)
        if bucket is not None:
            found = getattr(bucket, bound)(vlsn)
            if found is not None:
                self.bucket_hits += 1
                return found
        found, bucket = getattr(self.index.tracker, bound)(vlsn)
        self.tracker_lookups += 1
        self._hold(bucket)
        return found

    def get_start_lsn(self, vlsn: int) -> LSN:
        return self.get_start_mapping(vlsn)[1]

    def _count(self, entries: int) -> None:
        self.entries_scanned = entries
        self.total_scanned += entries


class ForwardVLSNScanner(VLSNScanner):
    """Finds entries by VLSN reading forward from the mapping at or below (for feeders)."""

    start_side = "lte"

    def __init__(self, index: "VLSNIndex"):
        super().__init__(index)
        self._position: tuple[int, LSN] | None = None  # the last entry found

    def find(self, vlsn: int) -> LogEntry:
        """The visible log entry that carries ``vlsn``."""
        mapped, start = self.get_start_mapping(vlsn)
        if self._position is not None and mapped <= self._position[0] < vlsn:
            start = self._position[1]
        scanned = 0
        for entry in walk_forward(self._log(), start):
            scanned += 1
            found = stream_vlsn(not_erased(entry))
            if found is None or found < vlsn:
                continue
            self._count(scanned)
            if found > vlsn:
                raise VLSNIndexCorruptionError(f"reading forward from {start} for VLSN {vlsn}, found VLSN {found} at "
                                     f"{entry.lsn} first: the index and the log disagree")
            self._position = (vlsn, entry.lsn)
            return entry
        self._count(scanned)
        raise VLSNIndexCorruptionError(f"VLSN {vlsn} is not in the log after {start}")


class BackwardVLSNScanner(VLSNScanner):
    """Finds entries by VLSN reading backward from the mapping at or above (for syncup)."""

    start_side = "gte"

    def find(self, vlsn: int) -> LogEntry:
        """The visible log entry that carries ``vlsn``."""
        _, start = self.get_start_mapping(vlsn)
        scanned = 0
        for entry in self._log().scan_backward(start):
            scanned += 1
            found = stream_vlsn(not_erased(entry))
            if found is None or found > vlsn:
                continue
            self._count(scanned)
            if found < vlsn:
                raise VLSNIndexCorruptionError(f"reading backward from {start} for VLSN {vlsn}, found VLSN {found} at "
                                     f"{entry.lsn} first: the index and the log disagree")
            return entry
        self._count(scanned)
        raise VLSNIndexCorruptionError(f"VLSN {vlsn} is not in the log before {start}")


__all__ = ["ForwardVLSNScanner", "BackwardVLSNScanner", "VLSNScanner", "walk_forward", "stream_vlsn", "not_erased"]
