"""The cleaner's run with the cyclic collector paused (twin of :class:`minidb.logstore.cleaner.cleaner.Cleaner`).

``clean`` cleans file after file. Each file's entries are read whole before
any is judged (a damaged entry stops the file before anything is migrated),
so hundreds of small objects (entries, their values, LSNs) live through
every file, and each :class:`~minidb.logstore.cleaner.cleaner.FileCleaning`
keeps the LSN of every entry read until the run ends. Python's cyclic
collector counts these as survivors and, once enough have piled up, walks
the whole heap again; the heap holds the utilization records and the tree,
which grow with the log. So a run made a full collection every few dozen
files, each the size of the log: cleaning a log of 100 MB spent over a third
of its time in the collector, and the run's MB/s fell as the log grew.

Here the collector waits until the run ends (:func:`minidb.collector.collector_paused`).
Nothing else changes: the same files, in the same order, the same entries read,
checked and judged, the same bytes logged. Why that is safe: reference
counting frees each file's entries as before (only a cycle, if the run made
one, waits for the collector's next pass), and the collector is left as it
was found when the run ends, an exception included. A run holds the
environment latch throughout, as the reference's does.
"""

from __future__ import annotations

from minidb.collector import collector_paused
from minidb.logstore.cleaner.cleaner import Cleaner as ReferenceCleaner, FileCleaning


class Cleaner(ReferenceCleaner):
    def clean(self, max_files: int | None = None) -> list[FileCleaning]:
        with collector_paused():
            return super().clean(max_files)


__all__ = ["Cleaner"]
