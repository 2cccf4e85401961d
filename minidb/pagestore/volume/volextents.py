"""Extents of a store: finding free ones, linking them at the tail, freeing them, repairing lists.

(A part of :class:`~minidb.pagestore.volume.volume.Volume`.)

**Finding.** A free extent (owner 0) is searched from the lowest free extent
number cached since the volume was mounted; an extent another transaction
has locked is skipped and the one taken is IX-locked (``alloc_locks``), as
Shore's free-extent search does. The search is one function,
:func:`find_free_extents`; freeing an extent lowers the cached number, so a
freed extent is the first reused.

**Linking.** New extents are linked at the *tail* of the store's list:
``create_ext_list`` on the new extent's extent-map page (it also sets the old
tail's ``next`` when that lies on the same page), and ``set_ext_next`` on the
old tail's page when it lies on another.

**Freeing** an extent with no allocated page (unless it is the store's only
extent) first *unlinks* it, then frees it:

1. ``set_ext_next`` on the previous extent's page, if that is another page;
2. ``set_ext_prev`` on the next extent's page, if that is another page;
3. ``store_operation set_first_ext`` if it headed the list;
4. ``free_ext_list`` on its own page (owner 0, no links; it also relinks
   neighbours that share its page).

A transaction frees an extent only when it commits (the pages it freed may
come back if it aborts): the transaction layer calls :meth:`free_page` with
``free_empty_extent=False`` and later :meth:`free_extent_if_empty`.

**Repairing.** An operation of several entries is cut short by a crash
after any prefix of them. The order above makes every prefix harmless to a
walk of the list from the store node: the extent being freed is unlinked
before it is freed, a new extent is owned before it is linked. What a cut
can leave is an *orphan* (an extent the store owns that its list does not
reach) and stale ``prev`` links. :meth:`repair_extent_lists`, called by
restart once the losers are rolled back, frees the orphans and resets the
``prev`` links from the walk, finishing the cut operations.

Worked example (``ext_sz`` 4, 13 extlinks per extent-map page): a store
with extents 11, 12, 13 frees 12. Extent 11 is on page 1, 12 on page 1, 13 on
page 2: one ``set_ext_prev`` (x(1.13).prev := 11) on page 2, then
``free_ext_list`` [12] on page 1, which also sets x(1.11).next := 13. Cut
after the first entry, the walk 11 -> 12 -> 13 still works; repair sets
x(1.13).prev back to 12 (the walk's truth) and the extent stays, empty.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from minidb import impl
from minidb.pagestore.errors import BadRequestError, VolumeFullError
from minidb.pagestore.ids import ExtentId, PageId, StoreId
from minidb.pagestore.volume.extmap import Extlink
from minidb.pagestore.volume.stores import Deleting
from minidb.pagestore.volume.volheader import VolumeHeader
from minidb.pagestore.wal.logdef import CREATE_EXT_LIST, FREE_EXT_LIST, SET_EXT_NEXT, SET_EXT_PREV
from minidb.pagestore.wal.logrec import LogContext


class ExtentAllocation:
    vid: int
    header: Any
    ext_sz: int
    stats: Any
    trace: Any
    use_caches: bool
    alloc_locks: Any
    _mutex: Any

    def _find_free_extents(self, count: int, xct: Any = None) -> list[int]:
        """``count`` free extents by :func:`find_free_extents`, from the cached lowest free extent; an
        extent another transaction has locked is skipped, those taken are locked IX."""
        locks = self.alloc_locks

        def may_take(ext: int) -> bool:
            if locks is None or locks.free_extent(xct, ExtentId(self.vid, ext)):
                return True
            self.trace.emit("skipped %s: another transaction has it locked", ExtentId(self.vid, ext))
            return False

        found, lowest_free = FIND_FREE_EXTENTS.call(_Owners(self), self._min_free_ext, count, may_take)
        if len(found) < count:
            raise VolumeFullError(f"v({self.vid}) is full: {count} free extent(s) wanted, {len(found)} left")
        self._min_free_ext = lowest_free
        return found

    def _link_extents(self, snum: int, tail: int, exts: list[int], xct: LogContext | None) -> None:
        """Give ``exts`` to store ``snum``, linked after ``tail``: one entry per extent-map page."""
        groups = list(by_page(exts, self.header))
        prev = tail
        for i, (page_number, group) in enumerate(groups):
            nxt = groups[i + 1][1][0] if i + 1 < len(groups) else 0
            self._update(PageId(self.vid, 0, page_number), CREATE_EXT_LIST,
                         {"snum": snum, "prev": prev, "next": nxt, "exts": [{"ext": e} for e in group]}, xct)
            prev = group[-1]
        if tail and self.header.extmap_page(tail) != self.header.extmap_page(exts[0]):
            self._update(self._extmap_pid(tail), SET_EXT_NEXT, {"ext": tail, "next": exts[0], "old_next": 0}, xct)
        self.stats.add("nExtentsAllocated", len(exts))

    def _last_extent(self, snum: int) -> tuple[int, Extlink]:
        """The store's last extent and its extlink: from the last-page cache if still valid, else by walking."""
        cached = self._last_ext_cache.get(snum) if self.use_caches else None
        if cached is not None:
            link = self.extlink(cached)
            if link.owner == snum and link.next == 0:
                self.stats.add("nLastPageCacheHits")
                return cached, link
        self.stats.add("nLastPageCacheMisses")
        exts = self._walk(snum, self.store_node(snum).first_ext)
        self._last_ext_cache[snum] = exts[-1]
        return exts[-1], self.extlink(exts[-1])

    def _grow(self, snum: int, xct: LogContext | None, count: int = 1) -> int:
        """Allocate ``count`` new extents (a list, for a large record) at the tail of the store's list; the first."""
        tail, _ = self._last_extent(snum)
        exts = self._find_free_extents(count, xct)
        self._link_extents(snum, tail, exts, xct)
        self._last_ext_cache[snum] = exts[-1]
        if snum in self._reserved_cache:
            for ext in exts:
                self._reserved_cache[snum].add(ext)
        self.trace.emit("new extent(s) %s for %s after %s", ", ".join(str(ExtentId(self.vid, e)) for e in exts),
                        self.stid(snum), ExtentId(self.vid, tail))
        return exts[0]

    def free_extent(self, stid: StoreId, ext: int, xct: LogContext | None = None) -> None:
        """Unlink an extent with no allocated page from its store, then free it (see above)."""
        with self._mutex:
            node = self._check_store(stid, allow_deleting=True)
            self._check_ext(ext)
            link = self.extlink(ext)
            if link.owner != stid.store or ext < self.header.first_data_ext:
                raise BadRequestError(f"{ExtentId(self.vid, ext)} does not belong to {stid}")
            if link.pmap:
                raise BadRequestError(f"{ExtentId(self.vid, ext)} still has allocated pages "
                                      f"({link.pmap_text(self.ext_sz)})")
            if not link.prev and not link.next:
                raise BadRequestError(f"{ExtentId(self.vid, ext)} is the only extent of {stid}; a store keeps one")
            prev, nxt = link.prev, link.next
            page_of = self.header.extmap_page
            if prev and page_of(prev) != page_of(ext):
                self._update(self._extmap_pid(prev), SET_EXT_NEXT, {"ext": prev, "next": nxt, "old_next": ext}, xct)
            if nxt and page_of(nxt) != page_of(ext):
                self._update(self._extmap_pid(nxt), SET_EXT_PREV, {"ext": nxt, "prev": prev, "old_prev": ext}, xct)
            if not prev:
                self._store_op(stid.store, "set_first_ext", nxt, node.first_ext, xct)
            self._update(self._extmap_pid(ext), FREE_EXT_LIST,
                         {"snum": stid.store, "prev": prev, "next": nxt, "exts": [{"ext": ext}]}, xct)
            if stid.store in self._reserved_cache:
                self._reserved_cache[stid.store].discard(ext)
            if self._last_ext_cache.get(stid.store) == ext:
                self._last_ext_cache[stid.store] = prev
            self._min_free_ext = min(self._min_free_ext, ext)
            self.stats.add("nExtentsFreed")
            self.trace.emit("freed extent %s of %s", ExtentId(self.vid, ext), stid)

    def free_extent_if_empty(self, stid: StoreId, ext: int, xct: LogContext | None = None) -> bool:
        """Free ``ext`` if it holds no allocated page and is not the store's only extent."""
        with self._mutex:
            link = self.extlink(ext)
            if link.owner != stid.store or link.pmap or not (link.prev or link.next):
                return False
            self.free_extent(stid, ext, xct)
            return True

    def repair_extent_lists(self, xct: LogContext | None = None) -> list[str]:
        """Finish extent-list operations cut short by a crash; return what was repaired (see above).

        Stores marked for deletion are left alone: removing them frees all
        their extents whatever their links. A store in use whose list is
        empty was being created when the crash came: it is removed.
        """
        with self._mutex:
            done: list[str] = []
            # The maps, read once: a store's repair changes only its own node and its own extents' links
            # (removing a store frees only its extents), so what is read here stays true for the stores after
            # it, and for its own extents until it changes them (each link below is changed once at most).
            links = self.extlinks()
            owners = self.extents_by_owner(links)
            for stid, node in self.store_nodes().items():
                if node.deleting != Deleting.NOT_DELETING or stid.store < 3:
                    continue
                owned = owners.get(stid.store, [])
                chain = self._walk_owned(stid.store, links, node.first_ext)
                if not chain and not owned:
                    self.destroy_store(stid, xct)
                    self.remove_store(stid, xct)
                    done.append(f"{stid} had no extent (a creation cut short): removed")
                    continue
                if not chain:
                    chain = [owned[0]]
                    self._store_op(stid.store, "set_first_ext", owned[0], node.first_ext, xct)
                    done.append(f"{stid}: first extent set to {ExtentId(self.vid, owned[0])}")
                for i, ext in enumerate(chain):
                    want = chain[i - 1] if i else 0
                    link = links[ext]
                    if link.prev != want:
                        self._update(self._extmap_pid(ext), SET_EXT_PREV,
                                     {"ext": ext, "prev": want, "old_prev": link.prev}, xct)
                        done.append(f"{stid}: {ExtentId(self.vid, ext)}.prev {link.prev} -> {want}")
                last = links[chain[-1]]  # its prev may have just been set: its next is as read
                if last.next:
                    self._update(self._extmap_pid(chain[-1]), SET_EXT_NEXT,
                                 {"ext": chain[-1], "next": 0, "old_next": last.next}, xct)
                    done.append(f"{stid}: {ExtentId(self.vid, chain[-1])}.next {last.next} -> 0")
                for ext in sorted(set(owned) - set(chain)):
                    self._update(self._extmap_pid(ext), FREE_EXT_LIST,
                                 {"snum": stid.store, "prev": 0, "next": 0, "exts": [{"ext": ext}]}, xct)
                    self._min_free_ext = min(self._min_free_ext, ext)
                    done.append(f"{stid}: orphan {ExtentId(self.vid, ext)} freed")
                if done:
                    self._forget_store(stid.store)
            for line in done:
                self.trace.emit("repair: %s", line)
            return done


class _Owners(Sequence):
    """The owner of every extent of a volume, read from its extlinks as asked (one search step each)."""

    def __init__(self, volume: Any):
        self.volume = volume

    def __len__(self) -> int:
        return self.volume.header.num_exts

    def __getitem__(self, ext):  # type: ignore[override]
        self.volume.stats.add("nFreeExtentSearchSteps")
        return self.volume.extlink(ext).owner


def find_free_extents(owners: Sequence[int], start: int, count: int,
                      may_take: Callable[[int], bool]) -> tuple[list[int], int]:
    """Up to ``count`` free extents (owner 0) for a store, lowest first, and the new lowest-free hint.

    ``owners[e]`` is extent ``e``'s owner; no extent below ``start`` (the
    hint) is free. ``may_take(e)`` is asked for each free extent in turn, and
    only until ``count`` are found: it locks the extent, or says another
    transaction has it (then it is skipped, but stays free). The hint
    returned is the lowest free extent seen, taken or skipped (``len(owners)``
    if none): the next search may start there.
    """
    found: list[int] = []
    lowest_free = None
    for ext in range(start, len(owners)):
        if owners[ext] != 0:
            continue
        lowest_free = ext if lowest_free is None else lowest_free
        if may_take(ext):
            found.append(ext)
            if len(found) == count:
                break
    return found, len(owners) if lowest_free is None else lowest_free


def _extents_from_exercise(hook: impl.Hook, student: Callable[..., Any]) -> Callable[..., tuple[list[int], int]]:
    """A student's ``find_free_extents`` (exercise 03a), checked for form: at most ``count`` distinct free
    extents and a hint inside the volume."""
    def extents(owners: Sequence[int], start: int, count: int, may_take: Callable[[int], bool]) -> tuple[list[int], int]:
        answer = student(owners, start, count, impl.engine_callback(may_take))
        if not (isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[0], list)
                and isinstance(answer[1], int) and 0 <= answer[1] <= len(owners)):
            raise hook.wrong(f"returned {answer!r}, not (extents, hint) with a hint from 0 to {len(owners)}")
        found = answer[0]
        if len(found) > count or len(set(found)) != len(found) or not all(
                isinstance(e, int) and 0 <= e < len(owners) and owners[e] == 0 for e in found):
            raise hook.wrong(f"returned the extents {found!r}: not up to {count} distinct free extents")
        return found, answer[1]
    return extents


#: where :meth:`ExtentAllocation._find_free_extents` asks :func:`find_free_extents` (exercise 03a's hook)
FIND_FREE_EXTENTS = impl.register("03a_extent_alloc", "find_free_extents", find_free_extents,
                                            _extents_from_exercise)


def by_page(exts: list[int], header: VolumeHeader) -> Iterator[tuple[int, list[int]]]:
    """Consecutive runs of ``exts`` that lie on the same extent-map page."""
    group: list[int] = []
    for ext in exts:
        if group and header.extmap_page(group[-1]) != header.extmap_page(ext):
            yield header.extmap_page(group[0]), group
            group = []
        group.append(ext)
    if group:
        yield header.extmap_page(group[0]), group
