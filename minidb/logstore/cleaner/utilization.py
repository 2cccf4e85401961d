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

Checkpoint step 7 makes the counts recoverable, as JE's incremental file
summaries do: for every file whose counts changed it logs a new
``FileSummaryLN`` into the internal database ``_utilization``, holding the
file's counts (cumulative: the newest record's counts are the file's) and only
the obsolete offsets tracked *since the file's previous record*. So an idle
checkpoint writes a few offsets, not the whole list, however big the file is.
A file may have several records, one per flush that changed it (a small one
may have one: see below), keyed by file number and sequence (big-endian, so
the keys of a file sort together, oldest first)::

    key of a FileSummaryLN (8 bytes)         key of an OldFileSummaryLN (4 bytes)
    +--------+------+-----------------+      +--------+------+-------------+
    | offset | size | field           |      | offset | size | field       |
    | 0      | 4    | file number  >I |      | 0      | 4    | file number |
    | 4      | 4    | sequence     >I |      +--------+------+-------------+
    +--------+------+-----------------+

The record's fields are in :mod:`minidb.logstore.logdef`. Logs written before
the records were incremental hold one ``OldFileSummaryLN`` per file, keyed by
the file number alone, carrying the whole list: it is read as sequence 0 (its
key sorts before the file's 8-byte keys), so such an environment opens, and
its next record of the file is sequence 1.

**Small files: one record.** Records that only accumulate make the profile
grow with the checkpoints, not with the files: every record is a new slot, so
writing one splits the 4-slot nodes of a small tree every other time, and with
small files (a checkpoint changes many) the profile and its nodes were most of
what the log held. So with ``cleaner_whole_summary_offsets`` set
(:mod:`minidb.logstore.config`; 0, off, by default, the records of a file all
incremental as in JE), while a file's whole list is short (at most that many
offsets) its next record is the same record again, sequence 0, written whole:
it replaces the previous one in its slot (no new slot, no split; the old
version is obsolete like any replaced record, as the profile's upkeep, see
below), and the profile holds one record per such file. The list only grows,
so past that size a file's records become incremental (sequence 1, 2, ...:
each the offsets since the one before) and stay so; a whole record costs at
most that many offsets, an idle checkpoint of a big file still writes only
what changed.

Reading the profile merges a file's records (:func:`merge_records`): the
union of their offsets, the counts of the newest. Each record covers the
entries of its file logged before it; recovery merges the records it finds in
``_utilization`` (redone like any LN) and counts the entries of each file at or
after its newest record's LSN, one at a time as
:meth:`UtilizationTracker.count_new` counts an appended entry
(:meth:`UtilizationTracker.finish_recovery`). A crash between two records of
one checkpoint is harmless: each file's records are whole, and a file whose
record of this checkpoint is lost keeps its previous ones, plus the entries
recovery reads after them. When the cleaner deletes a file, every record of
the file is removed from ``_utilization`` (:meth:`UtilizationTracker.forget_file`
names their keys); a record still in a recovered tree (a crash before its BIN
was logged again) is dead: recovery drops such records by key, without reading
them, before it reads the profile. A record is never replaced, so every record
of a file still in the log is live, and the cleaner migrates it like any
record, with one exception.

**A file's own summaries.** A checkpoint logs the summary of the file being
written into that same file. Such a record is needed only while its file
exists, and it exists exactly as long as its file: cleaning the file never has
to copy it. So the tracker notes it (``FileSummary.own``, rebuilt by
recovery), the file's live bytes (what a cleaning would copy, which the
selector ranks files by) leave it out, and the cleaner does not migrate it; its
slot goes when the file is deleted. It is not *obsolete*: recovery still reads
it, so the data eraser keeps it. Without this rule every file would keep one
live record of itself until it is deleted, and the log's first file (whose
summary the environment's first checkpoint writes) would rarely be the
emptiest. What this leaves out: the incremental records of a big file are
never folded into one (a file changed at many checkpoints has many small
records until it is deleted).

Example: put k1 (LN at 0x1/0x40), put k1 again (LN at 0x1/0x70, no txn)::

    file 1: total 3 entries (FileHeader, 2 LNs), 2 nodes; obsolete: 0x0 (FileHeader), 0x40
            utilization = live node bytes / total bytes

A checkpoint then logs record (1, 0): 3 entries ..., offsets 0x0, 0x40, and
its own CkptStart and CkptEnd follow in file 1. With small files' records
rewritten whole, the next checkpoint logs (1, 0) again, whole: the counts now
include those two entries (and the record's first version), offsets 0x0, 0x40
and the two checkpoint entries; the first version is obsolete. Without
``cleaner_whole_summary_offsets`` (or with a list longer than it), it logs
(1, 1): the same counts, and the offsets only of CkptStart and CkptEnd;
merged with (1, 0): the counts of (1, 1), the union of the offsets.

**Sums kept as they change.** The selector ranks files by live bytes over
total bytes. Each ``FileSummary`` keeps its obsolete bytes and its own
summaries' live bytes as offsets are noted (``note_obsolete``, ``note_own``),
so a file's utilization is a subtraction, never a sum over its offsets; and
the tracker names the files whose sums changed (``changed``) for the
selector's ranking (:class:`~minidb.logstore.cleaner.selector.FileRanking`),
which therefore never looks at a file that did not change.

**The profile's upkeep.** Records are kept in a tree like any others, so
writing them dirties nodes of ``_utilization``, which are logged in turn (by
the next checkpoint, by eviction, by a split); each such node's previous
version, logged when that part of the tree last changed, becomes obsolete in
the file it lies in, and that file's counts change. Recorded at once, the
upkeep feeds itself: the records of one checkpoint make the next checkpoint
write records for the files holding the old versions, whose records make more
nodes change. With large files the old versions lie in a few files and the
loop dies out; with many small ones nearly every old version lies in a file of
its own, each needing its own record, and every checkpoint writes more than
the one before (a log of 1.5 kB files grew to 1,400 files in 96 operations,
nearly all of it records and their tree). So an old version of a
``_utilization`` node is counted obsolete at once, in memory (the selector and
the data eraser see it), but its file's record *waits*
(:meth:`UtilizationTracker.count_obsolete` with ``upkeep``; the file joins
``waiting``, not ``dirty``), until the file's next record is due for another
reason, or until the upkeep it waits with reaches ``1 / UPKEEP_SHARE`` of the
file's bytes, or until the environment closes (:meth:`UtilizationTracker.closing`:
its last checkpoint writes every waiting record). A record the upkeep sets off then stands for at least
half a file of old versions, more than the node or two that writing it
dirties in turn (in files of a kilobyte or more): the loop dies out. The price: a crash
forgets the upkeep still waiting (recovery rebuilds the counts from the
records and the entries after the last checkpoint), so a file may look up
to half fuller than it is, until it is cleaned. Never emptier: no entry is
counted obsolete that is not, and the totals stay exact. The data eraser
erases nothing of internal databases, so it loses nothing to this.

A wrong obsolete count is the dangerous kind of error: a cleaner trusting it
deletes a file that still holds a live node. :func:`live_but_obsolete`
(:mod:`minidb.logstore.tools.verify`) checks for exactly that.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from minidb import impl
from minidb.log.logdef import FILE_HEADER, FILE_HEADER_ENTRY_SIZE
from minidb.logstore.logdef import NODE_TYPES, OLD_FILE_SUMMARY_LN
from minidb.stats import Stats

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from minidb.log import LSN, LogManager


UPKEEP_SHARE = 2  # a file's record waits while the profile's upkeep it owes is under 1/2 of its bytes
_FILE_KEY = struct.Struct(">I")
_SUMMARY_KEY = struct.Struct(">II")


def file_key(file_number: int) -> bytes:
    """The first 4 bytes of every key of a file's records: the number, big-endian, so keys sort by
    number (and the whole key of an OldFileSummaryLN)."""
    return _FILE_KEY.pack(file_number)


def summary_key(file_number: int, sequence: int) -> bytes:
    """The key of a file's FileSummaryLN number ``sequence`` (see the module documentation)."""
    return _SUMMARY_KEY.pack(file_number, sequence)


def key_of_summary(type_name: str, values: dict) -> bytes:
    """The ``_utilization`` key of a FileSummaryLN's (or an OldFileSummaryLN's) values."""
    if type_name == OLD_FILE_SUMMARY_LN.name:
        return file_key(values["file_number"])
    return summary_key(values["file_number"], values["sequence"])


@dataclass
class FileSummary:
    """One file's counts (JE's ``FileSummary`` plus its tracked obsolete offsets)."""

    file_number: int
    total_count: int = 0
    total_size: int = 0
    node_count: int = 0
    node_size: int = 0
    obsolete: dict[int, int] = field(default_factory=dict)  # offset -> size
    sequence: int = -1  # the file's newest record (-1: none yet)
    keyed_by_file: bool = False  # its newest record is an OldFileSummaryLN (keyed by the file number alone)
    logged: set[int] = field(default_factory=set, repr=False)  # the offsets its records hold
    own: dict[int, int] = field(default_factory=dict, repr=False)  # offset -> size of the file's own summaries
    # Kept as the offsets come, so that no choice or checkpoint goes over all of a file's offsets again:
    obsolete_size: int = field(init=False, repr=False, compare=False)  # sum(obsolete.values())
    own_live_size: int = field(init=False, repr=False, compare=False)  # own summaries' bytes not obsolete
    unlogged: dict[int, int] = field(init=False, repr=False, compare=False)  # obsolete offsets no record holds
    upkeep_size: int = field(default=0, init=False, repr=False, compare=False)  # of them, the profile's upkeep

    def __post_init__(self) -> None:
        self.recount()

    def recount(self) -> None:
        """The sums and ``unlogged`` from the offsets (once when made, and after they changed in bulk)."""
        self.obsolete_size = sum(self.obsolete.values())
        self.own_live_size = sum(size for offset, size in self.own.items() if offset not in self.obsolete)
        self.unlogged = {offset: size for offset, size in self.obsolete.items() if offset not in self.logged}

    def note_obsolete(self, offset: int, size: int) -> None:
        """The entry at ``offset`` (``size`` bytes) is obsolete."""
        before = self.obsolete.get(offset)
        self.obsolete[offset] = size
        if offset not in self.logged:
            self.unlogged[offset] = size
        if before is None:
            self.obsolete_size += size
            self.own_live_size -= self.own.get(offset, 0)
        else:
            self.obsolete_size += size - before

    def note_own(self, offset: int, size: int) -> None:
        """The entry at ``offset`` is a summary of this file, logged in it (see the module documentation)."""
        if offset not in self.obsolete:
            self.own_live_size += size - self.own.get(offset, 0)
        self.own[offset] = size

    @property
    def obsolete_count(self) -> int:
        return len(self.obsolete)

    @property
    def live_size(self) -> int:
        """Bytes of nodes not (yet) obsolete: what a cleaner would have to copy (not the file's own summaries)."""
        return self.total_size - self.obsolete_size - self.own_live_size

    @property
    def utilization(self) -> float:
        return self.live_size / self.total_size if self.total_size else 0.0

    def next_record(self, whole_offsets: int = 0) -> dict:
        """The values of the file's next FileSummaryLN: the counts, and the offsets no record holds yet
        (``unlogged``: only those are sorted, not every offset of the file). While the file has one
        record and at most ``whole_offsets`` obsolete offsets, the next record is that one again,
        whole: sequence 0 and every offset (see "Small files: one record" above; 0: never)."""
        whole = (self.sequence <= 0 and not self.keyed_by_file and 0 < len(self.obsolete) <= whole_offsets)
        offsets = self.obsolete if whole else self.unlogged
        return {
            "file_number": self.file_number, "sequence": 0 if whole else self.sequence + 1,
            "total_count": self.total_count, "total_size": self.total_size, "node_count": self.node_count,
            "node_size": self.node_size, "obsolete": [{"offset": o, "size": s} for o, s in sorted(offsets.items())],
        }

    def record_logged(self, values: dict) -> None:
        """The record ``values`` (of :meth:`next_record`) is in the log."""
        self.sequence = values["sequence"]
        self.upkeep_size = 0
        for r in values["obsolete"]:
            self.logged.add(r["offset"])
            self.unlogged.pop(r["offset"], None)

    @classmethod
    def from_values(cls, values: dict) -> "FileSummary":
        """One record's counts and the offsets it holds (an OldFileSummaryLN's values: sequence 0)."""
        obsolete = {r["offset"]: r["size"] for r in values["obsolete"]}
        return cls(values["file_number"], values["total_count"], values["total_size"], values["node_count"],
                   values["node_size"], obsolete, values.get("sequence", 0), "sequence" not in values,
                   set(obsolete))

    def __str__(self) -> str:
        return (f"file {self.file_number}: {self.total_count} entries, {self.total_size} bytes, "
                f"{self.obsolete_count} obsolete ({self.obsolete_size} bytes), "
                f"utilization {self.utilization:.0%}")


def merge_records(records: Iterable[dict]) -> FileSummary:
    """A file's summary from the values of its records: the newest record's counts (cumulative), the
    union of the offsets (each record holds those tracked since the one before)."""
    ordered = sorted(records, key=lambda values: values.get("sequence", 0))
    merged = FileSummary.from_values(ordered[-1])
    for values in ordered[:-1]:
        for r in values["obsolete"]:
            merged.obsolete.setdefault(r["offset"], r["size"])
    merged.logged = set(merged.obsolete)
    merged.recount()
    return merged


class UtilizationTracker:
    """The counts of every log file. ``write_summary(key, values)`` logs one FileSummaryLN (the
    environment gives it: a record of its internal ``_utilization`` database)."""

    def __init__(self, log: LogManager, write_summary: Callable[[bytes, dict], LSN], whole_offsets: int = 0):
        self.log = log
        self.write_summary = write_summary
        self.whole_offsets = whole_offsets  # a short list's record is rewritten whole (see "Small files")
        self.files: dict[int, FileSummary] = {}
        self.sizes: dict[LSN, int] = {}  # sizes of node entries logged since the environment opened
        self.dirty: set[int] = set()  # files whose next FileSummaryLN is due at the next checkpoint
        self.waiting: set[int] = set()  # files whose only change since their last one is the profile's upkeep
        self.changed: set[int] = set()  # files whose live or total bytes changed since the selector ranked them
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
            summary.note_obsolete(lsn.offset, size)
        self.touch(lsn.file)
        self.stats.add("nEntriesCounted")

    def touch(self, number: int) -> None:
        """File ``number``'s counts changed: its next FileSummaryLN is due, and the selector ranks it anew."""
        self.dirty.add(number)
        self.changed.add(number)

    def _count_file_header(self, summary: FileSummary, size: int) -> None:
        """Count a file's FileHeader (at offset 0) once."""
        if size == FILE_HEADER_ENTRY_SIZE and 0 not in summary.obsolete:
            summary.total_count += 1
            summary.total_size += size
            summary.note_obsolete(0, size)
            self.touch(summary.file_number)

    def count_obsolete(self, lsn: LSN, size: int | None = None, upkeep: bool = False) -> None:
        """The node version at ``lsn`` is obsolete (counting it again changes nothing). ``upkeep``: an old
        version of a node of ``_utilization`` itself, whose file's record may wait (see "The profile's
        upkeep" above): unless the record is due anyway, the file waits while the upkeep it owes is
        under ``1 / UPKEEP_SHARE`` of its bytes."""
        if lsn.is_null or self.log.is_deleted(lsn.file):  # a deleted file: nothing to count any more
            return
        summary = self.summary(lsn.file)
        if lsn.offset in summary.obsolete:
            return
        if size is None:
            size = self.sizes.get(lsn)
        if size is None:
            size = self.log.read(lsn).size
        summary.note_obsolete(lsn.offset, size)
        self.stats.add("nObsoleteCounted")
        if upkeep and lsn.file not in self.dirty:
            summary.upkeep_size += size
            if summary.upkeep_size * UPKEEP_SHARE < summary.total_size:
                self.waiting.add(lsn.file)
                self.changed.add(lsn.file)
                return
        self.touch(lsn.file)

    def forget_file(self, number: int) -> list[bytes]:
        """The cleaner deleted the file: drop its counts; the keys its records may have in
        ``_utilization`` (dead from now on: the cleaner removes them)."""
        summary = self.files.pop(number, None)
        self.dirty.discard(number)
        self.waiting.discard(number)
        self.changed.add(number)
        last = -1 if summary is None else summary.sequence
        return [file_key(number)] + [summary_key(number, sequence) for sequence in range(last + 1)]

    def is_own_summary(self, lsn: LSN) -> bool:
        """Whether ``lsn`` holds a summary of the file it lies in (see the module documentation)."""
        summary = self.files.get(lsn.file)
        return summary is not None and lsn.offset in summary.own

    def is_obsolete(self, lsn: LSN) -> bool:
        summary = self.files.get(lsn.file)
        return summary is not None and lsn.offset in summary.obsolete

    def closing(self) -> None:
        """The environment is about to take its last checkpoint: every record that waits is due now."""
        self.dirty |= self.waiting
        self.waiting.clear()

    # -- checkpoint step 7 ------------------------------------------------------------------
    def flush(self, files: list[int] | None = None) -> list[tuple[int, LSN]]:
        """Log a FileSummaryLN for each file whose record is due (or for the given ones): its counts and
        the offsets tracked since its previous one; return (file, LSN) pairs."""
        written = []
        targets = sorted(self.dirty) if files is None else sorted(files)
        for number in targets:
            summary = self.summary(number)
            self.dirty.discard(number)
            self.waiting.discard(number)
            record = summary.next_record(self.whole_offsets)
            lsn = self.write_summary(summary_key(number, record["sequence"]), record)
            summary.record_logged(record)
            if lsn.file == number:  # a summary of its own file: see "A file's own summaries" above
                summary.note_own(lsn.offset, self.sizes[lsn])
                self.changed.add(number)
            written.append((number, lsn))
            self.stats.add("nFileSummaryLNs")
        return written

    # -- recovery --------------------------------------------------------------------------
    def begin_recovery(self) -> None:
        """Recovery is about to run: keep appended entries aside until the summaries are known."""
        self.changed.update(self.files)
        self.files.clear()
        self.sizes.clear()
        self.dirty.clear()
        self.waiting.clear()
        self.deferred = []

    def note_sizes(self, sized: Iterable[tuple[LSN, int]]) -> None:
        """Recovery read these node entries, (lsn, size): remember their sizes, for counting them obsolete later."""
        self.sizes.update(sized)

    def finish_recovery(self, summaries: list[tuple[dict, LSN]], scanned: list[tuple[LSN, int, str]]) -> None:
        """Rebuild the counts: each file's FileSummaryLNs merged, plus the entries after the newest.

        ``summaries``: (FileSummaryLN values, its LSN), every record of ``_utilization``; ``scanned``: the
        entries recovery read, (lsn, size, type), each counted as :meth:`count_new`
        counts an appended entry.
        Obsolete offsets counted during recovery are kept (counting twice changes nothing).
        """
        summary_lsn = self._restore_summaries(summaries)
        for lsn, size, type_name in scanned:
            covered = summary_lsn.get(lsn.file)
            if covered is None or lsn >= covered:
                self._count(self.summary(lsn.file), lsn, size, type_name)
        self._note_own_summaries(summaries)
        self._count_deferred()

    def _note_own_summaries(self, summaries: list[tuple[dict, LSN]]) -> None:
        """Note each file's own summaries among the records recovery found, as :meth:`flush` notes them."""
        for values, lsn in summaries:
            if values["file_number"] == lsn.file and not self.log.is_deleted(lsn.file):
                self.summary(lsn.file).note_own(lsn.offset, self.sizes.get(lsn) or self.log.read(lsn).size)
                self.changed.add(lsn.file)

    def _restore_summaries(self, summaries: list[tuple[dict, LSN]]) -> dict[int, LSN]:
        """The first half of finishing recovery: each file's records merged, and what recovery counted
        obsolete; returns the LSN of each file's newest record (the entries before it are counted)."""
        counted_obsolete = {n: dict(s.obsolete) for n, s in self.files.items()}
        self.changed.update(self.files)
        self.files.clear()
        records: dict[int, list[dict]] = {}
        summary_lsn: dict[int, LSN] = {}
        newest: dict[int, int] = {}
        deleted = self.log.is_deleted
        for values, lsn in summaries:
            number, sequence = values["file_number"], values.get("sequence", 0)
            if deleted(number):  # a file the cleaner deleted
                continue
            records.setdefault(number, []).append(values)
            if sequence >= newest.get(number, -1):
                newest[number], summary_lsn[number] = sequence, lsn
        for number, values in records.items():
            self.files[number] = merge_records(values)
            self.changed.add(number)
        for number, obsolete in counted_obsolete.items():
            if deleted(number):
                continue
            summary = self.summary(number)
            for offset, size in obsolete.items():
                summary.note_obsolete(offset, size)
            self.touch(number)
        return summary_lsn

    def _count_deferred(self) -> None:
        """The last step of finishing recovery: count the entries appended while it ran."""
        deferred = self.deferred or []
        self.deferred = None
        for lsn, size, type_name in deferred:
            self.count_new(lsn, size, type_name)

    def report(self) -> list[FileSummary]:
        return [self.files[n] for n in sorted(self.files)]


#: the environment's tracker: built as ``UTILIZATION_TRACKER.call(log, write_summary, whole_offsets)``
UTILIZATION_TRACKER = impl.hot_spot(UtilizationTracker)


def summary_of_entry(entry) -> FileSummary:
    """The FileSummary one FileSummaryLN entry holds: the file's counts then, and the offsets it adds."""
    return FileSummary.from_values(entry.values)


__all__ = ["UtilizationTracker", "UTILIZATION_TRACKER", "FileSummary", "file_key", "summary_key", "key_of_summary",
           "merge_records", "summary_of_entry", "FILE_HEADER_ENTRY_SIZE", "FILE_HEADER"]
