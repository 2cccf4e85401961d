"""Waiting for new VLSNs: the wait latch and the cache of recently logged items.

Feeders stream the log to replicas by VLSN. A feeder that has sent
everything blocks on the VLSN index until the next VLSN is logged
(``VLSNIndex.wait_for_vlsn(vlsn, timeout)``): it never polls, and it wakes
once per put that reaches its VLSN. The most recent log entries are held in
a two-level cache inside the index (JE `VLSNIndex`, "Gatekeeper for waiting
for the most recently logged entries"); a wait goes through:

1. the log item stored in the wait latch, if the call did wait: the put
   that released the latch hands over its own item when it is the VLSN
   waited for;
2. the log item cache: the last few items put, in a small array indexed by
   ``vlsn % size`` (JE's ``LogItemCache``, je.rep.vlsn.logCacheSize = 32);

and if both fail the feeder reads the entry from the log, through the
index's mappings (a scanner). An item holds the entry as logged (header and
item, handed over by the log's entry listener, JE's ``LogItem``), so a
feeder served by the latch or the cache reads nothing from the log; an
item put without its entry (``VLSNIndex.put`` called directly) gives the
LSN only, and the feeder reads the entry there. A put releases every latch
whose VLSN the range has reached: mappings arrive out of order, so VLSN 8
may be put before 7, and a feeder waiting for 7 then finds 7 in the cache
or the log (it was written, under the log write latch, before 8 got its
number). :func:`VLSNIndex.await_item` says which of the three served.

Example: the range ends at 41; a feeder calls ``wait_for_vlsn(42, 5.0)``
and blocks on a :class:`VLSNAwaitLatch` for 42; an application thread logs
VLSN 42 at 0x3/0x1c0 and its put releases the latch with
``LogItem(42, 0x3/0x1c0, "LN_TX")``, which the feeder gets back. Had nothing
been logged within 5 s, the feeder would get ``WaitTimeoutError``.

Ways out of a wait, besides the put: the timeout; :meth:`VLSNIndex.close`
(every waiter gets ``IndexClosedError``); and the waiter's own
:class:`WaitCancel` (a feeder that stops: ``cancel()`` wakes that one
waiter, ``WaitCancelledError``, and leaves the others waiting). A latch is a
condition variable, so a wake-up is a notification, never a poll.

Locking: the latches and the cache are guarded by the index's *mapping
synchronizer* (VLSNIndex -> mappingSynchronizer); the wait itself happens
outside every mutex, on the latch's own condition. A ``WaitCancel`` takes
its own lock, then the latch's condition.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from minidb.log import LSN, LogEntry

DEFAULT_LOG_ITEM_CACHE_SIZE = 32
# Where a feeder found an entry (JE's two-level cache, then the log): the names of its counters.
FROM_WAIT_LATCH, FROM_CACHE, FROM_LOG = "nItemsFromWaitLatch", "nItemsFromCache", "nItemsFromLog"


@dataclass(frozen=True)
class LogItem:
    """A recently logged replicated entry, as the put that registered it saw it (JE's ``LogItem``)."""

    vlsn: int
    lsn: LSN
    type_name: str
    entry: LogEntry | None = field(default=None, compare=False, repr=False)  # as logged; None: read it at lsn

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

    def clear_to(self, vlsn: int) -> None:
        """Forget items up to ``vlsn`` (a truncated head: their files may be erased or deleted)."""
        self._items = [i if i is None or i.vlsn > vlsn else None for i in self._items]


class VLSNAwaitLatch:
    """One wait for a VLSN (JE's ``VLSNAwaitLatch``): released by the put that reaches it."""

    def __init__(self, vlsn: int):
        self.vlsn = vlsn
        self.log_item: LogItem | None = None
        self.terminated = False
        self.waiters = 0
        self._released = False
        self._condition = threading.Condition(threading.Lock())

    def count_down(self, range_last: int, item: LogItem) -> bool:
        """A put made the range end at ``range_last``; release the latch if that reaches its VLSN."""
        if range_last < self.vlsn:
            return False
        with self._condition:
            if item.vlsn == self.vlsn:
                self.log_item = item
            self._released = True
            self._condition.notify_all()
        return True

    def terminate(self) -> None:
        """Release the waiters without an item: the index is closing."""
        with self._condition:
            self.terminated = self._released = True
            self._condition.notify_all()

    def wait(self, timeout: float | None, cancel: "WaitCancel | None" = None) -> bool:
        """Block until released (True), ``cancel`` is cancelled or the timeout passes (False)."""
        if cancel is not None and not cancel.enter(self):
            return self.released
        try:
            with self._condition:
                return self._condition.wait_for(lambda: self._released or (cancel is not None and cancel.cancelled),
                                                timeout) and self._released
        finally:
            if cancel is not None:
                cancel.leave()

    def wake(self) -> None:
        """Let the waiters look again (one of them was cancelled); the others go on waiting."""
        with self._condition:
            self._condition.notify_all()

    @property
    def released(self) -> bool:
        return self._released


class WaitCancel:
    """One waiter's own way out of its waits (a feeder that stops): :meth:`cancel` wakes it, and only it."""

    def __init__(self) -> None:
        self.cancelled = False
        self._lock = threading.Lock()
        self._latch: VLSNAwaitLatch | None = None

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            latch = self._latch
        if latch is not None:
            latch.wake()

    def enter(self, latch: VLSNAwaitLatch) -> bool:
        """The waiter is about to wait on ``latch``; False if it was cancelled already (then it must not)."""
        with self._lock:
            if self.cancelled:
                return False
            self._latch = latch
            return True

    def leave(self) -> None:
        with self._lock:
            self._latch = None


__all__ = ["LogItem", "LogItemCache", "VLSNAwaitLatch", "WaitCancel", "DEFAULT_LOG_ITEM_CACHE_SIZE",
           "FROM_WAIT_LATCH", "FROM_CACHE", "FROM_LOG"]
