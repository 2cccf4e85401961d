"""An appended node counted in one step (twin of :class:`minidb.logstore.cleaner.utilization.UtilizationTracker`).

Every entry the log store appends is counted by :meth:`count_new`: a record's
LN on every put and delete, so its cost is paid once per write. The
reference steps through :meth:`summary`, ``_count`` and :meth:`touch`, and
counts ``nEntriesCounted`` under the stats' lock. This twin counts the usual
entry, a node (an LN, an IN or a BIN) of a file already tracked, not the
file's first entry, while recovery is not deferring counts, in one function:

- the file's summary is looked up once (a file not yet tracked, the first
  entry after a FileHeader, a non-node entry and the counts deferred during
  recovery go the reference's way);
- the same totals, the entry's size remembered by LSN, the file marked dirty
  and changed, as ``_count`` and :meth:`touch` do, in the same order;
- ``nEntriesCounted`` counted in place (:func:`minidb.fast.held_counts`): every
  entry is appended and counted under the environment latch (the callers of
  :meth:`EnvCore.log_entry <minidb.logstore.core.EnvCore.log_entry>` hold it),
  and recovery counts what it read before the environment is handed to anyone.

Safe because nothing is skipped: the counts, the sizes and the sets of dirty
and changed files end equal to the reference's, and so do the FileSummaryLNs a
checkpoint logs from them. The agreement scenarios ``scn_logstore.gets_and_puts``
and ``scn_logstore.cleaning`` compare the counts and every byte.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from minidb import fast
from minidb.log.logdef import FILE_HEADER_ENTRY_SIZE
from minidb.logstore.cleaner.utilization import UtilizationTracker as ReferenceTracker
from minidb.logstore.logdef import NODE_TYPES

if TYPE_CHECKING:
    from minidb.log import LSN


class UtilizationTracker(ReferenceTracker):
    def __init__(self, *args: Any, **options: Any):
        super().__init__(*args, **options)
        self._counts = fast.held_counts(self.stats)  # nEntriesCounted: changed under the environment latch only

    def count_new(self, lsn: LSN, size: int, type_name: str) -> None:
        number = lsn.file
        summary = self.files.get(number)
        if (summary is None or self.deferred is not None or lsn.offset == FILE_HEADER_ENTRY_SIZE
                or type_name not in NODE_TYPES):
            super().count_new(lsn, size, type_name)
            return
        summary.total_count += 1
        summary.total_size += size
        summary.node_count += 1
        summary.node_size += size
        self.sizes[lsn] = size
        self.dirty.add(number)
        self.changed.add(number)
        self._counts["nEntriesCounted"] += 1


__all__ = ["UtilizationTracker"]
