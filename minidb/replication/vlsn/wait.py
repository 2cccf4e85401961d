"""Waiting for new VLSNs: the wait latch and the cache of recently logged items.

Feeders stream the log to replicas by VLSN. A feeder that has sent
everything asks the VLSN index for the next VLSN and blocks until it is
logged (``VLSNIndex.wait_for_vlsn(vlsn, timeout)``). The most recent log
entries are held in a two-level cache inside the index (JE `VLSNIndex`,
"Gatekeeper for waiting for the most recently logged entries"); a wait
goes through:

1. the log item stored in the wait latch, if the call did wait: the put
   that released the latch hands over its own item when it is the VLSN
   waited for;
2. the log item cache: the last few items put, in a small array indexed by
   ``vlsn % size`` (JE's ``LogItemCache``, je.rep.vlsn.logCacheSize = 32);

and if both fail the feeder reads the entry from the log, through the
index's mappings (a scanner). A put releases every latch whose VLSN the
range has reached: mappings arrive out of order, so VLSN 8 may be put
before 7, and a feeder waiting for 7 then finds 7 in the log (it was
written, under the log write latch, before 8 got its number).

Example: the range ends at 41; a feeder calls ``wait_for_vlsn(42, 5.0)``
and blocks on a :class:`VLSNAwaitLatch` for 42; an application thread logs
VLSN 42 at 0x3/0x1c0 and its put releases the latch with
``LogItem(42, 0x3/0x1c0, "LN_TX")``, which the feeder gets back. Had nothing
been logged within 5 s, the feeder would get ``WaitTimeoutError``.

Locking: the latches and the cache are guarded by the index's *mapping
synchronizer* (VLSNIndex -> mappingSynchronizer); the wait itself happens
outside every mutex.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from minidb.log import LSN

DEFAULT_LOG_ITEM_CACHE_SIZE = 32


@dataclass(frozen=True)
class LogItem:
    """A recently logged replicated entry, as the put that registered it saw it (JE's ``LogItem``)."""

    vlsn: int
    lsn: LSN
    type_name: str

    def __str__(self) -> str:
        return f"VLSN {self.vlsn} at {self.lsn} ({self.type_name})"


class LogItemCache:
    """The last few log items, by ``vlsn % size`` (a newer item pushes out an older one)."""

    def __init__(self, size: int = DEFAULT_LOG_ITEM_CACHE_SIZE):
        if size < 1:
            raise ValueError(f"the log item cache needs at least one slot, not {size}")
        self.size = size
        self._items: list[LogItem | None] = [None] * size
        self.hits = 0
        self.misses = 0

    def put(self, item: LogItem) -> None:
        self._items[item.vlsn % self.size] = item

    def get(self, vlsn: int) -> LogItem | None:
        item = self._items[vlsn % self.size]
        if item is not None and item.vlsn == vlsn:
            self.hits += 1
            return item
        self.misses += 1
        return None

    def clear_from(self, vlsn: int) -> None:
        """Forget items from ``vlsn`` on (a truncated tail)."""
        self._items = [i if i is None or i.vlsn < vlsn else None for i in self._items]


class VLSNAwaitLatch:
    """One wait for a VLSN (JE's ``VLSNAwaitLatch``): released by the put that reaches it."""

    def __init__(self, vlsn: int):
        self.vlsn = vlsn
        self.log_item: LogItem | None = None
        self.terminated = False
        self.waiters = 0
        self._event = threading.Event()

    def count_down(self, range_last: int, item: LogItem) -> bool:
        """A put made the range end at ``range_last``; release the latch if that reaches its VLSN."""
        if range_last < self.vlsn:
            return False
        if item.vlsn == self.vlsn:
            self.log_item = item
        self._event.set()
        return True

    def terminate(self) -> None:
        """Release the waiters without an item: the index is closing."""
        self.terminated = True
        self._event.set()

    def wait(self, timeout: float | None) -> bool:
        return self._event.wait(timeout)

    @property
    def released(self) -> bool:
        return self._event.is_set()


__all__ = ["LogItem", "LogItemCache", "VLSNAwaitLatch", "DEFAULT_LOG_ITEM_CACHE_SIZE"]
