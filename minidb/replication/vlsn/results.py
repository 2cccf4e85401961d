"""What the VLSN index reports: its statistics' names, a flush, a head truncation.

Records, not behaviour: the index (:mod:`.index`) returns them, the
environment's checkpoint trace, the worked cases and the pictures read them.
They live apart from the index so that any class standing in for it (a
course project's) returns the very same records.
"""

from __future__ import annotations

from dataclasses import dataclass

from minidb.log import LSN
from minidb.replication.vlsn.range import VLSNRange
from minidb.replication.vlsn.tracker import plural

INDEX_STATS = ["nPuts", "nFlushes", "nBucketsFlushed", "nBucketsDeleted", "nWaits", "nWaitTimeouts",
               "nWaitLatchHits", "nHits", "nMisses", "nHeadTruncations", "nTailTruncations"]


@dataclass(frozen=True)
class FlushResult:
    """What one flush wrote to the VLSN index's database."""

    written: tuple[int, ...]  # first VLSNs of the buckets written
    deleted: tuple[int, ...]  # ... and of those deleted
    range: VLSNRange
    range_lsn: LSN  # the LN that holds the range
    commit_lsn: LSN  # the flush's Commit

    def describe(self) -> str:
        written = ", ".join(map(str, self.written)) or "none"
        deleted = f"; deleted buckets {', '.join(map(str, self.deleted))}" if self.deleted else ""
        return (f"flushed buckets {written}{deleted} and the range {self.range} at {self.range_lsn} "
                f"(commit {self.commit_lsn})")


@dataclass(frozen=True)
class HeadTruncationResult:
    """What :meth:`VLSNIndex.truncate_from_head` did, or why it did nothing."""

    done: bool
    reason: str
    delete_end: int
    range: VLSNRange
    deleted: tuple[int, ...] = ()
    ghost_vlsn: int | None = None

    def describe(self) -> str:
        if not self.done:
            return f"not truncated at VLSN {self.delete_end}: {self.reason}"
        ghost = f"; ghost bucket at VLSN {self.ghost_vlsn}" if self.ghost_vlsn is not None else ""
        deleted = f"{plural(len(self.deleted), 'bucket')} deleted"
        return (f"truncated the head at VLSN {self.delete_end}: {deleted}{ghost}; "
                f"range {self.range}")


__all__ = ["INDEX_STATS", "FlushResult", "HeadTruncationResult"]
