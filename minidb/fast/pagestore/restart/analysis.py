"""Analysis that decodes each entry once and keeps what it read for redo.

The reference :func:`~minidb.pagestore.restart.analysis.analysis_pass`
reads the log from the master checkpoint through ``log.scan`` and takes each
entry's values from :attr:`LogEntry.values` (a cached property); redo then
scans the log from the redo LSN again, reading, checksumming and decoding
the same bytes a second time. This twin:

- decodes each entry once, into a :class:`ScannedEntry` (LSN, type, values,
  size), looking each type code and its codec up once per pass, and appends these to
  ``keep`` (up to ``KEEP_BYTES`` of log), from which the fast redo takes
  them (:func:`minidb.fast.pagestore.restart.redo.redo_entries`);
- reads the log's last file from ``checked``, the entries opening the log
  checked already (``LogManager.take_opening_scan``), instead of reading
  and checking its bytes again.

Safe because the entries are those a scan gives, in the same order, decoded
by the same table (:func:`scanned_entry`, which a test holds equal to
``LogEntry.values``), and handed to the same
:func:`~minidb.pagestore.restart.analysis.rebuild_tables`; the erased-type
check runs on every entry read, as in the reference. The kept entries hold
no reference cycle, so reference counting frees them once redo has run.
Without ``keep`` and ``checked`` it is the reference with the type look-up
per code.
"""

from __future__ import annotations

from typing import Any, Iterator, NamedTuple

from minidb.log.codec import CODEC_OF
from minidb.log.end import CheckedFile
from minidb.log.entry import LogEntry
from minidb.log.header import HEADER_SIZE, MAX_HEADER_SIZE, VLSN_PRESENT
from minidb.log.lsn import LSN
from minidb.log.types import EntryType, type_by_code
from minidb.pagestore.restart.analysis import AnalysisResult, analysis_result, check_not_erased, rebuild_tables
from minidb.pagestore.wal.logdef import PAGESTORE_TYPES
from minidb.stats import Trace

KEEP_BYTES = 16 * 1024 * 1024  # analysis keeps at most this much log for redo (its entries take a few times that in memory)


class ScannedEntry(NamedTuple):
    """An entry as restart reads it: where it is, its type, its values (decoded once) and its size."""

    lsn: LSN
    entry_type: EntryType | None
    values: dict[str, Any]
    size: int

    @property
    def end(self) -> LSN:
        return LSN(self.lsn.file, self.lsn.offset + self.size)  # an entry lies in one file


#: a ScannedEntry from a tuple of its four fields, without the call of its class's ``__new__`` (one per entry)
_new_scanned = tuple.__new__


def scanned_entry(entry: LogEntry) -> ScannedEntry:
    """``entry`` decoded for restart: the values :attr:`LogEntry.values` gives, without its per-entry cache
    (a ``cached_property`` takes a lock on Python 3.11; restart decodes each entry once)."""
    entry_type = entry.entry_type
    values = entry.values if entry_type is None else entry_type.decode(entry.item)  # {} for an unknown type
    return ScannedEntry(entry.lsn, entry_type, values, entry.header.entry_size)


def analysis_pass(log: Any, master: LSN, trace: Trace | None = None, keep: list | None = None,
                  checked: CheckedFile | None = None) -> AnalysisResult:
    """The reference pass; ``keep`` receives every entry read, as a :class:`ScannedEntry`, until
    ``KEEP_BYTES`` of log are in it; ``checked``: the log's last file as opening checked it."""
    trace = trace if trace is not None else Trace(enabled=False)
    if master.is_null:
        trace.emit("analysis: no checkpoint completed: scanning the whole log")
    else:
        trace.emit("analysis: master LSN %s: scanning from there", master)
    count, first, kept_bytes = 0, None, 0

    def entries() -> Iterator[tuple[LSN, EntryType, dict[str, Any]]]:
        # scanned_entry, written out: a declared type is never the erased code, so an entry whose type is
        # known is decoded, any other has no values
        nonlocal kept_bytes, count, first
        owner = PAGESTORE_TYPES.owner
        # type code -> (its type, is it the page store's, its codec's decode)
        known: dict[int, tuple[EntryType | None, bool, Any]] = {}
        for entry in log.scan(None if master.is_null else master, checked=checked):
            count += 1
            header, lsn = entry.header, entry.lsn
            if first is None:
                first = lsn
            code = header.type_code
            found = known.get(code)
            if found is None:
                check_not_erased(code, lsn)
                entry_type = type_by_code(code)
                decode = CODEC_OF.call(entry_type).decode if entry_type is not None else None
                found = known[code] = (entry_type, entry_type is not None and entry_type.owner == owner, decode)
            entry_type, mine, decode = found
            if keep is not None and kept_bytes < KEEP_BYTES:
                size = (MAX_HEADER_SIZE if header.flags & VLSN_PRESENT else HEADER_SIZE) + header.item_size
                values = decode(entry.item) if decode is not None else {}
                keep.append(_new_scanned(ScannedEntry, (lsn, entry_type, values, size)))
                kept_bytes += size
                if mine:
                    yield lsn, entry_type, values
            elif mine:
                yield lsn, entry_type, entry.values

    tables = rebuild_tables(entries(), master, trace)
    return analysis_result(log, master, tables, first, count, trace)
