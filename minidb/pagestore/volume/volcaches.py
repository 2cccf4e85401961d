"""The volume manager's transient caches: reserved-page cache, last-page cache, lowest free extent.

Shore's volume manager keeps three caches, none of them persistent:

- the *reserved-page cache*: store number -> the extents of that store that
  have reserved (unallocated) pages, consulted before a new extent is
  allocated to the store; empty after mounting and *primed* by a search of
  the store's extents the first time the store needs a page;
- the *last-page cache*: store number -> the store's last extent, from which
  the last page (reserved or allocated) is found arithmetically;
- the lowest free extent number, where the next search for a free extent
  starts (reset to the first extent after store 0's on mount).

They are primed lazily, kept exact by every operation, and checked against
the extlink before use (a stale entry is dropped, as Shore does). Priming
on mount would be too costly, because volumes are mounted and dismounted
several times during recovery.

Worked example: after ``create_store()`` gives ``s(1.3)`` extent ``x(1.3)``,
the reserved-page cache is ``{3: [3]}`` and the last-page cache ``{3: 3}``;
once four pages fill ``x(1.3)``, the reserved-page cache for store 3 is
empty (``{3: []}``: primed, and known to hold nothing).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator
from typing import Any

from minidb.pagestore.volume.stores import FIRST_USER_STORE


class SortedExtents:
    """A small sorted set of extent numbers: the reserved-page cache of one store.

    The lowest extent is wanted at every compact allocation, so it is kept
    first rather than searched for.
    """

    def __init__(self, exts: Iterable[int] = ()):
        self._exts = sorted(set(exts))

    def add(self, ext: int) -> None:
        i = bisect_left(self._exts, ext)
        if i == len(self._exts) or self._exts[i] != ext:
            self._exts.insert(i, ext)

    def discard(self, ext: int) -> None:
        i = bisect_left(self._exts, ext)
        if i < len(self._exts) and self._exts[i] == ext:
            del self._exts[i]

    def first(self) -> int:
        return self._exts[0]

    def __iter__(self) -> Iterator[int]:
        return iter(list(self._exts))

    def __len__(self) -> int:
        return len(self._exts)

    def __contains__(self, ext: object) -> bool:
        return ext in self._exts


class VolumeCaches:
    """The caches' state and reset (a part of :class:`~minidb.pagestore.volume.volume.Volume`)."""

    header: Any
    _mutex: Any

    def _init_caches(self) -> None:
        self._min_free_ext = self.header.first_data_ext
        self._store_cursor = FIRST_USER_STORE
        self._reserved_cache: dict[int, SortedExtents] = {}
        self._last_ext_cache: dict[int, int] = {}

    def reset_caches(self) -> None:
        """Forget the transient caches, as after mounting."""
        with self._mutex:
            self._reserved_cache.clear()
            self._last_ext_cache.clear()
            self._min_free_ext = self.header.first_data_ext
            self._store_cursor = FIRST_USER_STORE

    def cache_state(self) -> dict[str, Any]:
        return {
            "min_free_ext": self._min_free_ext,
            "reserved_page_cache": {s: sorted(e) for s, e in sorted(self._reserved_cache.items())},
            "last_page_cache": dict(sorted(self._last_ext_cache.items())),
        }

    def _forget_store(self, snum: int) -> None:
        self._reserved_cache.pop(snum, None)
        self._last_ext_cache.pop(snum, None)
