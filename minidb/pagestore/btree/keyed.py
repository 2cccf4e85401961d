"""Keyed pages (Shore's ``keyed_p``): the pages of a B+tree, entries kept sorted by key in their slots.

A keyed page is a slotted page with tag ``BTREE``. Unlike a file page, its
slots are *positions*: entry ``i`` is in slot ``i + 1``, and inserting or
removing an entry shifts the slot entries after it (the records' bytes stay
where they are; only the 4-byte slot entries move), so the slot order is the
key order. There is no space reservation on keyed pages: a B+tree's undo is
logical (a key goes back wherever it belongs then), so freed space is free.

**Slot 0 is the keyed page's header** (Shore keeps it there too)::

    offset size field
       0     2  level   1 for a leaf, 2 for its parent, ...; the root has the largest
       2     4  pid0    interior page: the leftmost child's page number (0 on a leaf)

The page header's ``prev`` and ``next`` fields link the *leaves*, in key
order, both ways (0: none). Interior pages are not linked.

**Entries** (slots 1..n), sorted by their *sort key* ``sk``::

    leaf:      offset 0: klen (2 bytes) | key (klen bytes) | el (the rest)
    interior:  offset 0: child (4 bytes, a page number) | sk (the rest)

``key`` is the encoded key (:mod:`minidb.pagestore.btree.keydesc`); ``el``
the element (the value, opaque bytes). A leaf entry's sort key is its key
in a *unique* index, and key + el in a non-unique one (so equal keys are
ordered by element, and each entry has a sort key of its own). An interior
page with entries (s1, c1) .. (sn, cn) and leftmost child c0 = ``pid0``
sends sort keys below s1 to c0, and those from si (included) to s(i+1)
(excluded) to ci: every sort key in the subtree of ci lies in [si, s(i+1)).

The redo handlers of the B+tree's entries (``page_link``, ``btree_header``,
``page_insert``, ``page_remove``, ``btree_insert``, ``btree_remove``) are
here, as are the undo handlers of the first four: they change the same page
back, logging the same entry type with the values swapped (their flag L:
the inverse is an operation, then rollback's ``compensate``).

Worked example (512-byte page, unique index on ``u2`` keys): after
formatting, slot 0 holds level 1 and pid0 0; inserting keys 7 and 3 with
1-byte elements puts ``00 02 | 00 07 | el`` in slot 1, then shifts it to
slot 2 when ``00 02 | 00 03 | el`` takes slot 1.
"""

from __future__ import annotations

import bisect
import struct
from typing import Any

from minidb.log.types import EntryType
from minidb.pagestore.buffer.latch import EX
from minidb.pagestore.errors import PageStoreCorruptionError, RecordWontFitError
from minidb.pagestore.pages.page import FOOTER_SIZE, HEADER_SIZE, SLOT, SLOT_SIZE, PageTag
from minidb.pagestore.pages.slotted import SlottedPage
from minidb.pagestore.wal.logdef import BTREE_HEADER, PAGE_INSERT, PAGE_LINK, PAGE_REMOVE
from minidb.pagestore.wal.logrec import APPLY_AND_LOG, LogContext, page_id_of, redo_handler, undo_handler

KEYED_HEADER = struct.Struct("<HI")  # level, pid0
KLEN = struct.Struct("<H")
CHILD = struct.Struct("<I")
LEAF_LEVEL = 1
HEADER_SLOT = KEYED_HEADER.size + SLOT_SIZE


def max_entry(page_size: int) -> int:
    """The largest key + element a page of ``page_size`` takes: a quarter of its room, so that a split
    leaves each half room for the largest entry, an interior entry included (its child number)."""
    return (page_size - HEADER_SIZE - FOOTER_SIZE - HEADER_SLOT) // 4 - 2 * SLOT_SIZE - CHILD.size


def leaf_entry(key: bytes, el: bytes) -> bytes:
    return KLEN.pack(len(key)) + key + el


def parse_leaf(data: bytes) -> tuple[bytes, bytes]:
    (klen,) = KLEN.unpack_from(data)
    return data[2:2 + klen], data[2 + klen:]


def node_entry(child: int, sk: bytes) -> bytes:
    return CHILD.pack(child) + sk


def parse_node(data: bytes) -> tuple[int, bytes]:
    return CHILD.unpack_from(data)[0], data[4:]


def sort_key(key: bytes, el: bytes, unique: bool) -> bytes:
    return key if unique else key + el


class KeyedPage:
    """A view of a fixed ``BTREE`` page (see the module documentation)."""

    __slots__ = ("page",)

    def __init__(self, page: SlottedPage):
        self.page = page

    @property
    def pid(self):
        return self.page.pid

    @property
    def level(self) -> int:
        return KEYED_HEADER.unpack(self.page.read(0))[0]

    @property
    def pid0(self) -> int:
        return KEYED_HEADER.unpack(self.page.read(0))[1]

    @property
    def is_leaf(self) -> bool:
        return self.level == LEAF_LEVEL

    @property
    def count(self) -> int:
        """Entries on the page (slot 0, the header, not counted)."""
        return self.page.nslots - 1

    @property
    def nfree(self) -> int:
        return self.page.nfree

    def raw(self, i: int) -> bytes:
        return self.page.read(i + 1)

    def raws(self, start: int = 0, end: int | None = None) -> list[bytes]:
        end = self.count if end is None else end
        return [self.page.read(i + 1) for i in range(start, end)]

    def leaf(self, i: int) -> tuple[bytes, bytes]:
        return parse_leaf(self.raw(i))

    def node(self, i: int) -> tuple[int, bytes]:
        return parse_node(self.raw(i))

    def sk(self, i: int, unique: bool) -> bytes:
        if self.is_leaf:
            key, el = self.leaf(i)
            return sort_key(key, el, unique)
        return self.node(i)[1]

    def sks(self, unique: bool) -> list[bytes]:
        keys = _SortKeys(self, unique)  # the headers read once
        return [keys[i] for i in range(len(keys))]

    def position(self, sk: bytes, unique: bool) -> int:
        """The index of the first entry whose sort key is >= ``sk`` (``count`` if none)."""
        return bisect.bisect_left(_SortKeys(self, unique), sk)

    def child_for(self, sk: bytes) -> tuple[int, int]:
        """Interior page: (index of the separator used, -1 for pid0; the child for sort key ``sk``)."""
        i = bisect.bisect_right(_SortKeys(self, True), sk) - 1
        return i, (self.pid0 if i < 0 else self.node(i)[0])

    def child_below(self, sk: bytes | None) -> tuple[int, int]:
        """Interior page: the child holding the largest sort keys below ``sk`` (strictly; None: the last)."""
        i = (self.count if sk is None else bisect.bisect_left(_SortKeys(self, True), sk)) - 1
        return i, (self.pid0 if i < 0 else self.node(i)[0])

    def children(self) -> list[int]:
        return [self.pid0] + [self.node(i)[0] for i in range(self.count)]


class _SortKeys:
    """One page's sort keys as a sequence, for one ``bisect``: the headers read once, each probe decoding
    only the entry it asks for.

    Here, at the start of the search, the page header gives the entry count and slot 0 whether the page
    is a leaf; a probe then reads one slot-table entry and the sort key of the record it points at. (Read
    through :meth:`KeyedPage.sk`, every probe would read the page header and slot 0 again.) The search
    holds the page fixed, so neither header changes under it. A binary search of ``n`` entries makes at
    most ``ceil(log2(n + 1))`` probes: about 8 on a full 8 KB leaf of 16-byte keys and 100-byte elements.
    """

    __slots__ = ("page", "n", "leaf", "unique")

    def __init__(self, kp: KeyedPage, unique: bool):
        page = self.page = kp.page
        self.n, self.unique = page.nslots - 1, unique
        if self.n < 0:
            raise PageStoreCorruptionError(f"{page.pid}: a keyed page without its header slot")
        offset, _ = self._slot(0)
        self.leaf = KEYED_HEADER.unpack_from(page.buf, offset)[0] == LEAF_LEVEL

    def __len__(self) -> int:
        return self.n

    def _slot(self, slot: int) -> tuple[int, int]:
        """(offset, length) of ``slot`` (below the count read at the start: bisect asks only inside it)."""
        page = self.page
        offset, length = SLOT.unpack_from(page.buf, page._slot_pos(slot))
        if not offset or offset + length > page.size:
            raise PageStoreCorruptionError(f"{page.pid}: slot {slot} of a keyed page is ({offset}, {length})")
        return offset, length

    def __getitem__(self, i: int) -> bytes:
        buf = self.page.buf
        offset, length = self._slot(i + 1)
        if not self.leaf:  # child (4 bytes) | sk
            return bytes(buf[offset + CHILD.size:offset + length])
        if not self.unique:  # klen | key | el: key + el, the whole entry after klen
            return bytes(buf[offset + KLEN.size:offset + length])
        (klen,) = KLEN.unpack_from(buf, offset)  # a unique index sorts by the key alone
        if KLEN.size + klen > length:
            raise PageStoreCorruptionError(f"{self.page.pid}: entry {i} of a keyed page has a key of {klen} bytes "
                                           f"in {length}")
        return bytes(buf[offset + KLEN.size:offset + KLEN.size + klen])


# -- changing the slots (used by the redo handlers only) ------------------------------------------
def insert_slots(page: SlottedPage, idx: int, datas: list[bytes]) -> None:
    """Put ``datas`` in slots ``idx``, ``idx+1``, ...; the slots from ``idx`` on move up."""
    if idx == page.nslots and _append_slots(page, datas):
        return
    for k, data in enumerate(datas):
        need = len(data) + SLOT_SIZE
        if need > page.nfree or not data:
            raise RecordWontFitError(f"{page.pid}: an entry of {len(data)} bytes needs {need}, {page.nfree} free")
        if page.contiguous_free < need:
            page.coalesce()
        at, n = idx + k, page.nslots
        if not 0 <= at <= n:
            raise PageStoreCorruptionError(f"{page.pid}: slot {at} is past the {n} slots of a keyed page")
        _shift_slots(page, at, n, -SLOT_SIZE)  # slots at..n-1 become at+1..n
        page.nslots = n + 1
        offset = page.record_end
        page.buf[offset:offset + len(data)] = data
        page.record_end = offset + len(data)
        page._set_slot(at, offset, len(data))
        page.nfree -= need


def _shift_slots(page: SlottedPage, first: int, end: int, by: int) -> None:
    """Move the entries of slots ``first`` .. ``end-1`` ``by`` bytes in the slot table (negative: towards the
    records, a slot number up) in one move of their bytes: the table lies from slot ``end-1`` (lowest
    address) to slot ``first``, so the run of entries moves whole, as C's ``memmove`` would move it."""
    if first < end:
        low, high = page._slot_pos(end - 1), page._slot_pos(first) + SLOT_SIZE
        page.buf[low + by:high + by] = page.buf[low:high]


def _append_slots(page: SlottedPage, datas: list[bytes]) -> bool:
    """Put ``datas`` after the last slot in one go (a bulk load's whole page), if they fit the
    contiguous free space; False (nothing changed) if not, or if one is empty."""
    need = sum(map(len, datas)) + SLOT_SIZE * len(datas)
    if need > page.contiguous_free or not all(datas):
        return False
    n, offset = page.nslots, page.record_end
    page.nslots = n + len(datas)
    page.buf[offset:offset + need - SLOT_SIZE * len(datas)] = b"".join(datas)
    for s, data in enumerate(datas, n):
        page._set_slot(s, offset, len(data))
        offset += len(data)
    page.record_end = offset
    page.nfree -= need
    return True


def remove_slots(page: SlottedPage, idx: int, count: int) -> list[bytes]:
    """Take out slots ``idx`` .. ``idx+count-1`` (the later slots move down); return their bytes."""
    taken = [page.read(s) for s in range(idx, idx + count)]
    n = page.nslots
    _shift_slots(page, idx + count, n, SLOT_SIZE * count)  # slots idx+count..n-1 become idx..n-1-count
    page.nslots = n - count
    page.nfree += sum(len(d) for d in taken) + SLOT_SIZE * count
    return taken


def check_entries(page: SlottedPage, idx: int, expected: list[bytes], what: str) -> None:
    if not 0 <= idx <= idx + len(expected) <= page.nslots:
        raise PageStoreCorruptionError(f"{page.pid}: {what}: slots {idx}..{idx + len(expected) - 1} are not all "
                                       f"there ({page.nslots} slots)")
    found = [page.read(s) for s in range(idx, idx + len(expected))]
    if found != expected:
        raise PageStoreCorruptionError(f"{page.pid}: {what}: slots from {idx} do not hold the logged entries")


# -- redo handlers ----------------------------------------------------------------------------------
@redo_handler("page_link")
def _redo_page_link(page: SlottedPage, v: dict[str, Any]) -> None:
    page.prev, page.next = v["prev"], v["next"]


@redo_handler("btree_header")
def _redo_btree_header(page: SlottedPage, v: dict[str, Any]) -> None:
    write_header_slot(page, KEYED_HEADER.pack(v["level"], v["pid0"]), PageTag.BTREE, "btree_header")


def write_header_slot(page: SlottedPage, data: bytes, tag: PageTag, what: str) -> None:
    """Put a node's header ``data`` in slot 0 of a ``tag`` page (made if absent): a header entry's redo."""
    if page.tag != tag:
        raise PageStoreCorruptionError(f"{page.pid}: {what} on a {page.tag.name} page")
    if page.nslots == 0:
        insert_slots(page, 0, [data])
    else:
        offset, _ = page.slot_entry(0)
        page.buf[offset:offset + len(data)] = data


@redo_handler("page_insert")
def redo_insert_slots(page: SlottedPage, v: dict[str, Any]) -> None:
    """The redo of an entry that puts ``entries`` in slots ``idx``.. (``page_insert``, ``rtree_page_insert``)."""
    insert_slots(page, v["idx"], [e["data"] for e in v["entries"]])


@redo_handler("page_remove")
def redo_remove_slots(page: SlottedPage, v: dict[str, Any]) -> None:
    """The redo of an entry that takes out the slots ``idx``.. holding ``entries`` (``page_remove``,
    ``rtree_page_remove``), checking they hold them."""
    expected = [e["data"] for e in v["entries"]]
    check_entries(page, v["idx"], expected, "page_remove")
    remove_slots(page, v["idx"], len(expected))


@redo_handler("btree_insert")
def _redo_btree_insert(page: SlottedPage, v: dict[str, Any]) -> None:
    insert_slots(page, v["idx"], [leaf_entry(v["key"], v["el"])])


@redo_handler("btree_remove")
def _redo_btree_remove(page: SlottedPage, v: dict[str, Any]) -> None:
    check_entries(page, v["idx"], [leaf_entry(v["key"], v["el"])], "btree_remove")
    remove_slots(page, v["idx"], 1)


# -- logging the structure changes ------------------------------------------------------------------
def log_link(volume: Any, xct: LogContext, page: SlottedPage, prev: int, nxt: int) -> None:
    APPLY_AND_LOG.call(volume.log, page, PAGE_LINK,
                  {"prev": prev, "next": nxt, "old_prev": page.prev, "old_next": page.next}, xct)


def log_header(volume: Any, xct: LogContext, page: SlottedPage, level: int, pid0: int) -> None:
    old = KEYED_HEADER.unpack(page.read(0)) if page.nslots else (0, 0)
    APPLY_AND_LOG.call(volume.log, page, BTREE_HEADER,
                  {"level": level, "pid0": pid0, "old_level": old[0], "old_pid0": old[1]}, xct)


def log_insert_slots(volume: Any, xct: LogContext, page: SlottedPage, idx: int, datas: list[bytes],
                     entry_type: EntryType = PAGE_INSERT) -> None:
    if datas:
        APPLY_AND_LOG.call(volume.log, page, entry_type, {"idx": idx, "entries": [{"data": d} for d in datas]}, xct)


def log_remove_slots(volume: Any, xct: LogContext, page: SlottedPage, idx: int, count: int,
                     entry_type: EntryType = PAGE_REMOVE) -> None:
    if count:
        entries = [{"data": page.read(s)} for s in range(idx, idx + count)]
        APPLY_AND_LOG.call(volume.log, page, entry_type, {"idx": idx, "entries": entries}, xct)


# -- undo handlers of the structure changes: the same change the other way, on the same page -----------
def undo_on_page(volume: Any, v: dict[str, Any], change) -> None:
    page = volume.bp.fix(page_id_of(v), EX)
    try:
        change(page)
    finally:
        volume.bp.unfix(page, dirty=True)


@undo_handler("page_link")
def _undo_page_link(volume: Any, v: dict[str, Any], xct: LogContext | None) -> None:
    undo_on_page(volume, v, lambda page: log_link(volume, xct, page, v["old_prev"], v["old_next"]))


@undo_handler("btree_header")
def _undo_btree_header(volume: Any, v: dict[str, Any], xct: LogContext | None) -> None:
    undo_on_page(volume, v, lambda page: log_header(volume, xct, page, v["old_level"], v["old_pid0"]))


def undo_insert_slots(name: str, remove_type: EntryType):
    """The undo of ``name``, an entry that put slots on a page: check they are there, take them out
    (``remove_type``)."""
    def undo(volume: Any, v: dict[str, Any], xct: LogContext | None) -> None:
        def change(page: SlottedPage) -> None:
            check_entries(page, v["idx"], [e["data"] for e in v["entries"]], f"undo of {name}")
            log_remove_slots(volume, xct, page, v["idx"], len(v["entries"]), remove_type)
        undo_on_page(volume, v, change)
    return undo


def undo_remove_slots(insert_type: EntryType):
    """The undo of an entry that took slots off a page: put them back (``insert_type``)."""
    def undo(volume: Any, v: dict[str, Any], xct: LogContext | None) -> None:
        undo_on_page(volume, v, lambda page: log_insert_slots(volume, xct, page, v["idx"],
                                                              [e["data"] for e in v["entries"]], insert_type))
    return undo


undo_handler("page_insert")(undo_insert_slots("page_insert", PAGE_REMOVE))
undo_handler("page_remove")(undo_remove_slots(PAGE_INSERT))
