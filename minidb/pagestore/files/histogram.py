"""The file manager's free-space cache per file: a heap and a histogram (Shore's ``histoid_t``).

To place a new record the file manager wants a page of the file with enough
free space, without fixing every page to look. It keeps, per file, two
*transient* structures (rebuilt after a restart):

- the **heap**: the free bytes of recently used pages, searchable for the
  page with the *smallest* free space that is still large enough (a best
  fit, which keeps other pages' large holes for large records). The value is
  the most liberal one, the page's ``nfree``: part of it may be reserved for
  a transaction that freed a record (space reservation), so a candidate is
  verified on the page itself;
- the **histogram**: a few buckets, each counting the file's pages whose
  free space falls in the bucket's range. It answers "is there any page
  with at least this much free space?" before a linear search is tried.

Buckets are the 4-bit advisory *page buckets* the volume keeps in each
extlink (unlogged, :meth:`Volume.set_page_bucket`): bucket ``b`` holds pages
with at least ``b * unit`` free bytes, ``unit = page_size // 16``. The
histogram is *primed* from them the first time a file is searched after a
restart.

Worked example (512-byte pages, unit 32): pages 12, 13 and 14 of a file have
300, 40 and 120 free bytes: buckets 9, 1 and 3. A record needing 100 bytes
(bucket ceil(100 / 32) = 4) is offered page 14 first (the smallest fit,
120 bytes), then page 12; the histogram counts one page in bucket 9, one
in 3 and one in 1, so a search for 350 bytes (bucket 11) is not even tried.
"""

from __future__ import annotations

import threading
from bisect import bisect_left, insort
from collections.abc import Iterator

from minidb.pagestore.volume.extmap import BUCKETS

NUM_BUCKETS = BUCKETS  # 16: a page bucket is 4 bits


def bucket_unit(page_size: int) -> int:
    return page_size // NUM_BUCKETS


def bucket_of(free: int, page_size: int) -> int:
    """The bucket of a page with ``free`` free bytes (it has at least bucket * unit)."""
    return max(0, min(NUM_BUCKETS - 1, free // bucket_unit(page_size)))


def bucket_needed(need: int, page_size: int) -> int:
    """The lowest bucket whose pages surely have ``need`` free bytes (NUM_BUCKETS if none can)."""
    unit = bucket_unit(page_size)
    return min(NUM_BUCKETS, (need + unit - 1) // unit)


class Histoid:
    """The heap and histogram of one file (see the module documentation)."""

    def __init__(self, page_size: int):
        self.page_size = page_size
        self.primed = False
        self._free: dict[int, int] = {}  # page number -> free bytes (heap entries)
        self._sorted: list[tuple[int, int]] = []  # (free, page), ascending: the searchable heap
        self._buckets: dict[int, int] = {}  # page number -> bucket (histogram membership)
        self.counts = [0] * NUM_BUCKETS
        self._mutex = threading.Lock()

    def prime(self, buckets: dict[int, int]) -> None:
        """Load the histogram from the volume's page buckets (page number -> bucket)."""
        with self._mutex:
            self._buckets = dict(buckets)
            self.counts = [0] * NUM_BUCKETS
            for bucket in buckets.values():
                self.counts[bucket] += 1
            self.primed = True

    def update(self, page: int, free: int) -> int:
        """Page ``page`` now has ``free`` free bytes; return its bucket."""
        bucket = bucket_of(free, self.page_size)
        with self._mutex:
            old = self._free.get(page)
            if old != free:
                if old is not None:
                    self._sorted.pop(bisect_left(self._sorted, (old, page)))
                self._free[page] = free
                insort(self._sorted, (free, page))
            known = self._buckets.get(page)
            if known != bucket:
                if known is not None:
                    self.counts[known] -= 1
                self._buckets[page] = bucket
                self.counts[bucket] += 1
        return bucket

    def remove(self, page: int) -> None:
        """Page ``page`` left the file (freed)."""
        with self._mutex:
            old = self._free.pop(page, None)
            if old is not None:
                self._sorted.pop(bisect_left(self._sorted, (old, page)))
            known = self._buckets.pop(page, None)
            if known is not None:
                self.counts[known] -= 1

    def forget(self, page: int) -> None:
        """Drop a page from the heap only (it proved to have less space than cached)."""
        with self._mutex:
            old = self._free.pop(page, None)
            if old is not None:
                self._sorted.pop(bisect_left(self._sorted, (old, page)))

    def candidates(self, need: int) -> Iterator[tuple[int, int]]:
        """(page, free) of heap pages with at least ``need`` free bytes, smallest fit first."""
        with self._mutex:
            start = bisect_left(self._sorted, (need, -1))
            found = [(page, free) for free, page in self._sorted[start:]]
        return iter(found)

    def pages_at_least(self, bucket: int) -> int:
        """How many of the file's pages the histogram puts in ``bucket`` or above."""
        return sum(self.counts[bucket:]) if bucket < NUM_BUCKETS else 0

    def heap(self) -> list[tuple[int, int]]:
        """(page, free) of every heap entry, smallest free space first."""
        with self._mutex:
            return [(page, free) for free, page in self._sorted]

    def __repr__(self) -> str:
        return f"Histoid(heap={self.heap()}, counts={self.counts})"
