"""The utilization tracker: per log file, how much is still live (JE's ``UtilizationTracker``).

The log cleaner (:mod:`minidb.logstore.cleaner`, this module's folder) reclaims space by deleting whole
log files whose few live entries it has copied forward. To choose files it needs, per
file, the total entries and bytes, and which entries are *obsolete*: no
longer needed by the tree or by recovery. This tracker keeps that, from the
first entry on:

- every appended entry adds to its file's totals; entries that are not nodes
  (FileHeader, Commit, Abort, CkptStart, CkptEnd) count as obsolete at once,
  since a cleaner never needs to migrate them;
- a node version becomes obsolete when a newer version replaces it
  *non-provisionally* (see :mod:`minidb.logstore.tree.node_logger` for INs and
  :mod:`minidb.logstore.records` / :mod:`minidb.logstore.txn.txn` for LNs).

Obsolete entries are remembered by offset (with their size) in a set per
file, so counting the same entry twice changes nothing: recovery can simply
re-apply the rules to the entries it reads.

Checkpoint step 7 writes a ``FileSummaryLN`` for every file whose counts
changed, into the internal database ``_utilization`` (key: the file number),
making the counts recoverable. Each summary covers the entries of its file
logged before the summary itself; recovery loads the summaries and counts
the entries of each file at or after its summary's LSN, one at a time as
:meth:`UtilizationTracker.count_new` counts an appended entry
(:meth:`UtilizationTracker.finish_recovery`).

Example: put k1 (LN at 0x1/0x40), put k1 again (LN at 0x1/0x70, no txn)::

    file 1: total 3 entries (FileHeader, 2 LNs), 2 nodes; obsolete: 0x0 (FileHeader), 0x40
            utilization = live node bytes / total bytes

A wrong obsolete count is the dangerous kind of error: a cleaner trusting it
deletes a file that still holds a live node. :func:`live_but_obsolete`
(:mod:`minidb.logstore.tools.verify`) checks for exactly that.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from minidb.log.logdef import FILE_HEADER, FILE_HEADER_ENTRY_SIZE
from minidb.logstore.logdef import NODE_TYPES
from minidb.stats import Stats

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from minidb.log import LSN, LogManager


def file_key(file_number: int) -> bytes:
    """The key of a file's FileSummaryLN: the number, big-endian, so keys sort by number."""
    return struct.pack(">I", file_number)


@dataclass
class FileSummary:
    """One file's counts (JE's ``FileSummary`` plus its tracked obsolete offsets)."""

    file_number: int
    total_count: int = 0
    total_size: int = 0
    node_count: int = 0
    node_size: int = 0
    obsolete: dict[int, int] = field(default_factory=dict)  # offset -> size

    @property
    def obsolete_count(self) -> int:
        return len(self.obsolete)

    @property
    def obsolete_size(self) -> int:
        return sum(self.obsolete.values())

    @property
    def live_size(self) -> int:
        """Bytes of nodes not (yet) obsolete: what a cleaner would have to copy."""
        return self.total_size - self.obsolete_size

    @property
    def utilization(self) -> float:
        return self.live_size / self.total_size if self.total_size else 0.0

    def values(self) -> dict:
        return {
            "file_number": self.file_number, "total_count": self.total_count, "total_size": self.total_size,
            "node_count": self.node_count, "node_size": self.node_size,
            "obsolete": [{"offset": o, "size": s} for o, s in sorted(self.obsolete.items())],
        }

    @classmethod
    def from_values(cls, values: dict) -> "FileSummary":
        return cls(values["file_number"], values["total_count"], values["total_size"], values["node_count"],
                   values["node_size"], {r["offset"]: r["size"] for r in values["obsolete"]})

    def __str__(self) -> str:
        return (f"file {self.file_number}: {self.total_count} entries, {self.total_size} bytes, "
                f"{self.obsolete_count} obsolete ({self.obsolete_size} bytes), "
                f"utilization {self.utilization:.0%}")


class UtilizationTracker:
    """The counts of every log file. ``write_summary(key, values)`` logs one FileSummaryLN (the
    environment gives it: a record of its internal ``_utilization`` database)."""

    def __init__(self, log: LogManager, write_summary: Callable[[bytes, dict], LSN]):
        self.log = log
        self.write_summary = write_summary
        self.files: dict[int, FileSummary] = {}
        self.sizes: dict[LSN, int] = {}  # sizes of node entries logged since the environment opened
        self.dirty: set[int] = set()  # files whose counts changed since their last FileSummaryLN
        self.deferred: list[tuple[LSN, int, str]] | None = None  # appends while recovery runs
        self.stats = Stats("utilization", ["nEntriesCounted", "nObsoleteCounted", "nFileSummaryLNs"])

    def summary(self, file_number: int) -> FileSummary:
        found = self.files.get(file_number)
        if found is None:
            found = self.files[file_number] = FileSummary(file_number)
        return found

    # -- counting ---------------------------------------------------------------------------
    def count_new(self, lsn: LSN, size: int, type_name: str) -> None:
        """An entry was appended at ``lsn`` (during recovery: kept for :meth:`finish_recovery`)."""
        if self.deferred is not None:
            self.deferred.append((lsn, size, type_name))
            return
        summary = self.summary(lsn.file)
        if lsn.offset == FILE_HEADER_ENTRY_SIZE:
            # The first entry of a file follows the file's FileHeader, which the log wrote itself.
            self._count_file_header(summary, FILE_HEADER_ENTRY_SIZE)
        self._count(summary, lsn, size, type_name)

    def _count(self, summary: FileSummary, lsn: LSN, size: int, type_name: str) -> None:
        if type_name == FILE_HEADER.name:
            self._count_file_header(summary, size)
            return
        summary.total_count += 1
        summary.total_size += size
        if type_name in NODE_TYPES:
            summary.node_count += 1
            summary.node_size += size
            self.sizes[lsn] = size
        else:
            summary.obsolete[lsn.offset] = size
        self.dirty.add(lsn.file)
        self.stats.add_held("nEntriesCounted")  # under the environment latch, as every count is

    def _count_file_header(self, summary: FileSummary, size: int) -> None:
        """Count a file's FileHeader (at offset 0) once."""
        if size == FILE_HEADER_ENTRY_SIZE and 0 not in summary.obsolete:
            summary.total_count += 1
            summary.total_size += size
            summary.obsolete[0] = size
            self.dirty.add(summary.file_number)

    def count_obsolete(self, lsn: LSN, size: int | None = None) -> None:
        """The node version at ``lsn`` is obsolete (counting it again changes nothing)."""
        if lsn.is_null or lsn.file < self.log.head:  # a deleted file: nothing to count any more
            return
        summary = self.summary(lsn.file)
        if lsn.offset in summary.obsolete:
            return
        if size is None:
            size = self.sizes.get(lsn)
        if size is None:
            size = self.log.read(lsn).size
        summary.obsolete[lsn.offset] = size
        self.dirty.add(lsn.file)
        self.stats.add_held("nObsoleteCounted")

    def forget_file(self, number: int) -> None:
        """The cleaner deleted the file: drop its counts (its FileSummaryLN is dead from now on)."""
        self.files.pop(number, None)
        self.dirty.discard(number)

    def is_obsolete(self, lsn: LSN) -> bool:
        summary = self.files.get(lsn.file)
        return summary is not None and lsn.offset in summary.obsolete

    # -- checkpoint step 7 ------------------------------------------------------------------
    def flush(self, files: list[int] | None = None) -> list[tuple[int, LSN]]:
        """Log a FileSummaryLN for each changed file (or the given ones); return (file, LSN) pairs."""
        written = []
        targets = sorted(self.dirty) if files is None else sorted(files)
        for number in targets:
            summary = self.summary(number)
            self.dirty.discard(number)
            lsn = self.write_summary(file_key(number), summary.values())
            written.append((number, lsn))
            self.stats.add("nFileSummaryLNs")
        return written

    # -- recovery --------------------------------------------------------------------------
    def begin_recovery(self) -> None:
        """Recovery is about to run: keep appended entries aside until the summaries are known."""
        self.files.clear()
        self.sizes.clear()
        self.dirty.clear()
        self.deferred = []

    def note_sizes(self, sized: Iterable[tuple[LSN, int]]) -> None:
        """Recovery read these node entries, (lsn, size): remember their sizes, for counting them obsolete later."""
        self.sizes.update(sized)

    def finish_recovery(self, summaries: list[tuple[dict, LSN]], scanned: list[tuple[LSN, int, str]]) -> None:
        """Rebuild the counts: each file's last FileSummaryLN, plus the entries after it.

        ``summaries``: (FileSummaryLN values, its LSN) per file; ``scanned``: the
        entries recovery read, (lsn, size, type), each counted as :meth:`count_new`
        counts an appended entry.
        Obsolete offsets counted during recovery are kept (counting twice changes nothing).
        """
        summary_lsn = self._restore_summaries(summaries)
        for lsn, size, type_name in scanned:
            covered = summary_lsn.get(lsn.file)
            if covered is None or lsn >= covered:
                self._count(self.summary(lsn.file), lsn, size, type_name)
        self._count_deferred()

    def _restore_summaries(self, summaries: list[tuple[dict, LSN]]) -> dict[int, LSN]:
        """The first half of finishing recovery: each file's summary, and what recovery counted obsolete."""
        counted_obsolete = {n: dict(s.obsolete) for n, s in self.files.items()}
        self.files.clear()
        summary_lsn: dict[int, LSN] = {}
        head = self.log.head
        for values, lsn in summaries:
            if values["file_number"] < head:  # a file the cleaner deleted
                continue
            self.files[values["file_number"]] = FileSummary.from_values(values)
            summary_lsn[values["file_number"]] = lsn
        for number, obsolete in counted_obsolete.items():
            if number < head:
                continue
            self.summary(number).obsolete.update(obsolete)
            self.dirty.add(number)
        return summary_lsn

    def _count_deferred(self) -> None:
        """The last step of finishing recovery: count the entries appended while it ran."""
        deferred = self.deferred or []
        self.deferred = None
        for lsn, size, type_name in deferred:
            self.count_new(lsn, size, type_name)

    def report(self) -> list[FileSummary]:
        return [self.files[n] for n in sorted(self.files)]


def summary_of_entry(entry) -> FileSummary:
    """The FileSummary a FileSummaryLN entry holds."""
    return FileSummary.from_values(entry.values)


__all__ = ["UtilizationTracker", "FileSummary", "file_key", "summary_of_entry", "FILE_HEADER_ENTRY_SIZE",
           "FILE_HEADER"]
