"""Slotted pages and space reservation on a page.

All pages are slotted (those that need no slot structure use one slot). A
record is found by its slot number, and a record id ``r(1.3.48.2)`` names
the page and the slot, so **records cannot move to another slot**: when a
transaction frees a record, the slot and the bytes it held must stay
available in case the transaction aborts and its record has to come back
in the very same slot. Shore calls this *space reservation*; pages that use
it (file pages, ``rsvd_mode``) keep in their header (see
:mod:`minidb.pagestore.pages.page`):

- ``nfree``: free bytes on the page (the gap, holes, and reserved bytes);
- ``nrsvd``: the bytes reserved by transactions that freed space here;
- ``rsvd_tid``: the *youngest* transaction that reserved space, and
  ``xct_rsvd``: how many bytes it reserved.

Rules (Shore's ``space_t``):

- When a transaction frees a slot, the slot stays *reserved* (offset 0, the
  record's length kept in the slot entry) and its bytes are added to
  ``nrsvd``; if the transaction is younger than ``rsvd_tid`` it becomes the
  youngest reserver and ``xct_rsvd`` is its count, if it is the same one
  ``xct_rsvd`` grows.
- In forward processing a transaction may use ``nfree - nrsvd`` bytes, plus
  ``xct_rsvd`` if it is the youngest reserver (the only one whose
  reservation the page knows). Its own reserved bytes pay for records
  only: a new slot entry is paid from the unreserved bytes, because undoing
  the insert gives the record's bytes back but not the entry (the slot
  table never shrinks), and the transaction's rollback needs every byte it
  reserved. A rolling-back transaction may use all of ``nfree``. Reserved slots are reused only by rollback (which puts the
  freed record back in its slot), never by a forward insert.
- When ``rsvd_tid`` is older than the oldest active transaction, every
  transaction that reserved space here has ended: the reservation is void,
  reserved slots become free and ``nrsvd`` drops to 0. The check is made
  whenever a transaction asks for space on the page.
- The reservation fields are not logged (the actions behind them are, as
  inserts and removals), as in Shore.

Holes left by freed records are *coalesced* (the records slid together
towards the header) only when the total free space fits a request but the
contiguous gap does not.

Where a record goes is decided by one pure function, :func:`place_record`
(the slot, whether the reservation is void, whether the record fits, whether
to coalesce first), from the slot table and the space fields alone; every
insert (forward, redo, undo) asks it through ``SlottedPage._place``.

Worked example (512-byte file page, 452 bytes free after formatting):
transaction 1 inserts records of 40, 60 and 30 bytes into slots 0, 1, 2:
``nfree`` = 452 - 3 * 4 - 130 = 310. Transaction 2 frees slot 1: ``nfree``
= 370, ``nrsvd`` = 60, ``rsvd_tid`` = 2, ``xct_rsvd`` = 60. While 2 is
active, transaction 3 may use 370 - 60 = 310 bytes, transaction 2 itself
370; once the oldest active transaction is 3, the 60 bytes are free to all
and slot 1 can be reused.

Users identify themselves with a :class:`SpaceUser`: their transaction id
(0: none), the oldest active transaction id, and whether they are rolling
back. The transaction manager provides these; without transactions,
:data:`NO_TXN` makes every reservation void at once.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from minidb import impl
from minidb.pagestore.errors import RecordWontFitError, SlotError
from minidb.pagestore.pages.page import FOOTER_SIZE, HEADER_SIZE, SLOT, SLOT_SIZE, Page, PageTag

MAX_TID = (1 << 64) - 1
FREE_SLOT = (0, 0)  # a free slot's entry: no offset, no length
_SPACE_FIELDS = struct.Struct("<HHHHQ")  # nfree, nrsvd, xct_rsvd, record_end, rsvd_tid (header offsets 32-47)


@dataclass(frozen=True)
class SpaceUser:
    """Who asks for space on a page (see the module documentation)."""

    tid: int = 0
    oldest_active: int = MAX_TID
    rolling_back: bool = False


NO_TXN = SpaceUser()

SLOT_IN_USE, SLOT_RESERVED, SLOT_FREE = "in use", "reserved", "free"


class SlottedPage(Page):
    """A page with slots; ``rsvd_mode`` pages (file pages) reserve freed space."""

    __slots__ = ()

    @property
    def rsvd_mode(self) -> bool:
        return self.buf[28] == PageTag.FILE

    # -- the slot table -------------------------------------------------------------
    def _slot_pos(self, slot: int) -> int:
        return self.size - FOOTER_SIZE - SLOT_SIZE * (slot + 1)

    def slot_entry(self, slot: int) -> tuple[int, int]:
        """(offset, length) of ``slot``'s entry."""
        if not 0 <= slot < self.nslots:
            raise SlotError(f"{self.pid}: slot {slot} out of range (the page has {self.nslots} slots)")
        return SLOT.unpack_from(self.buf, self._slot_pos(slot))

    def _set_slot(self, slot: int, offset: int, length: int) -> None:
        SLOT.pack_into(self.buf, self._slot_pos(slot), offset, length)

    def slot_state(self, slot: int) -> str:
        offset, length = self.slot_entry(slot)
        if offset:
            return SLOT_IN_USE
        return SLOT_RESERVED if length else SLOT_FREE

    def is_in_use(self, slot: int) -> bool:
        return 0 <= slot < self.nslots and self.slot_entry(slot)[0] != 0

    def slot_table(self) -> list[tuple[int, int]]:
        """Every slot's ``(offset, length)``, slot 0 first.

        The table is read as one array of ``2 * nslots`` 16-bit values; it
        lies in memory from slot ``n-1`` to slot 0, so the values are taken
        backwards in pairs.
        """
        n = self.nslots
        flat = struct.unpack_from(f"<{2 * n}H", self.buf, self.size - FOOTER_SIZE - SLOT_SIZE * n)
        return list(zip(flat[-2::-2], flat[-1::-2], strict=True))

    @property
    def slot_table_start(self) -> int:
        return self.size - FOOTER_SIZE - SLOT_SIZE * self.nslots

    @property
    def contiguous_free(self) -> int:
        """The gap between the record area and the slot table."""
        return self.slot_table_start - self.record_end

    def read(self, slot: int) -> bytes:
        offset, length = self.slot_entry(slot)
        if not offset:
            raise SlotError(f"{self.pid}: slot {slot} is not in use")
        return bytes(self.buf[offset:offset + length])

    def records(self) -> list[tuple[int, bytes]]:
        """(slot, record) for every slot in use, in slot order."""
        buf = self.buf
        return [(s, bytes(buf[offset:offset + length])) for s, (offset, length) in enumerate(self.slot_table())
                if offset]

    def space_view(self) -> "SpaceView":
        nfree, nrsvd, xct_rsvd, record_end, rsvd_tid = _SPACE_FIELDS.unpack_from(self.buf, 32)
        return SpaceView(nfree, nrsvd, xct_rsvd, rsvd_tid, self.slot_table_start - record_end)

    # -- space reservation -------------------------------------------------------------
    def expire_reservation(self, user: SpaceUser) -> bool:
        """Void the reservation if its youngest transaction is older than the oldest active one."""
        if not reservation_void(self.space_view(), user):
            return False
        self._void_reservation()
        return True

    def _void_reservation(self) -> None:
        self.nrsvd = self.xct_rsvd = 0
        self.rsvd_tid = 0
        for slot, (offset, length) in enumerate(self.slot_table()):
            if not offset and length:
                self._set_slot(slot, 0, 0)

    def usable_space(self, user: SpaceUser = NO_TXN) -> int:
        """Bytes ``user`` may take on this page (records and new slot entries)."""
        if not self.rsvd_mode:
            return self.nfree
        self.expire_reservation(user)
        return usable_bytes(self.space_view(), user)

    def _acquire(self, need: int, user: SpaceUser, slot_bytes: int = 0) -> None:
        """Take ``need`` bytes of free space for ``user`` (already checked to fit), ``slot_bytes`` of them for
        new slot entries."""
        if self.rsvd_mode and self.nrsvd:
            if user.rolling_back:
                # A rollback puts back what it freed: its reservation shrinks.
                take = min(need, self.nrsvd)
                self.nrsvd -= take
                if user.tid and user.tid == self.rsvd_tid:
                    self.xct_rsvd -= min(take, self.xct_rsvd)
            elif user.tid and user.tid == self.rsvd_tid:
                # Its own reserved bytes first, as Shore does, but for the record only: undoing the insert
                # gives those back, while the new slot entries stay (see the module documentation).
                take = min(need - slot_bytes, self.xct_rsvd)
                self.xct_rsvd -= take
                self.nrsvd -= take
        self.nfree -= need

    def _reserve(self, length: int, user: SpaceUser) -> bool:
        """Record that ``user`` freed ``length`` bytes that stay reserved; False if nothing is reserved."""
        if not self.rsvd_mode or not user.tid or user.rolling_back:
            return False
        self.nrsvd += length
        if user.tid > self.rsvd_tid:
            self.rsvd_tid = user.tid
            self.xct_rsvd = length
        elif user.tid == self.rsvd_tid:
            self.xct_rsvd += length
        return True

    def reserve_again(self, slot: int | None, length: int, tid: int) -> bool:
        """Restart: reserve again ``length`` bytes (and ``slot``, if given) that transaction ``tid``, still
        prepared, freed here: the reservation fields are not logged, so redo did not restore them.

        Does nothing (False) on a page without reservation, or if ``slot`` is
        not free (still reserved: the page was written with its reservation).
        The bytes are capped so that no more than the free bytes are reserved.
        """
        if not self.rsvd_mode or (slot is not None and self.slot_entry(slot) != (0, 0)):
            return False
        if slot is not None:
            self._set_slot(slot, 0, length)
        self._reserve(min(length, self.nfree - self.nrsvd), SpaceUser(tid))
        return True

    # -- inserting and removing records ----------------------------------------------------
    def _place(self, length: int, user: SpaceUser, slot: int | None = None) -> Placement:
        """Where a record of ``length`` bytes goes (see :func:`place_record`); voids the reservation if it
        says so; raises if the record cannot go there."""
        self._check_length(length)
        if slot is not None and self.is_in_use(slot):
            raise SlotError(f"{self.pid}: slot {slot} is in use")
        plan = PLACE_RECORD.call(self.slot_table(), self.space_view(), length, user, slot)
        if plan.void:
            self._void_reservation()
        if not plan.fits:
            if slot is not None and slot < self.nslots and self.slot_entry(slot)[1] and not user.rolling_back:
                raise SlotError(f"{self.pid}: slot {slot} is reserved for a transaction that freed it")
            need = length + SLOT_SIZE * max(0, plan.slot + 1 - self.nslots)
            usable = usable_bytes(self.space_view(), user) if self.rsvd_mode else self.nfree
            what = f"a record of {length} bytes" if slot is None else f"slot {slot}"
            raise RecordWontFitError(f"{self.pid}: {what} needs {need} bytes, {usable} are usable "
                                     f"(free {self.nfree}, reserved {self.nrsvd})")
        return plan

    def find_slot(self, length: int, user: SpaceUser = NO_TXN) -> int:
        """The slot an insert of ``length`` bytes would take; raises if it cannot fit."""
        return self._place(length, user).slot

    def plan_insert(self, length: int, user: SpaceUser = NO_TXN) -> Placement:
        """:meth:`find_slot`'s whole placement. A caller that inserts next, with the page unchanged
        (still latched EX), hands it to :meth:`insert_at`, which then need not place the record again."""
        return self._place(length, user)

    def insert(self, data: bytes, user: SpaceUser = NO_TXN) -> int:
        """Insert a record into a free slot (or a new one); return the slot number."""
        slot = self.find_slot(len(data), user)
        self.insert_at(slot, data, user)
        return slot

    def insert_at(self, slot: int, data: bytes, user: SpaceUser = NO_TXN, plan: Placement | None = None) -> None:
        """Put a record in slot ``slot``, a free slot, a reserved slot (rollback only),
        or the next new slot(s) of the table. Redo and undo use this.

        ``plan``: :meth:`plan_insert`'s answer for this record, taken on the
        page as it is now (the forward insert: found, locked and logged under
        one EX latch); without it, the record is placed here (redo, undo)."""
        length = len(data)
        if plan is None or plan.slot != slot:
            plan = self._place(length, user, slot)
        new_slots = max(0, slot + 1 - self.nslots)
        need = length + SLOT_SIZE * new_slots
        if plan.coalesce:
            self.coalesce()
        self._acquire(need, user, SLOT_SIZE * new_slots)
        first_new = self.nslots
        self.nslots = first_new + new_slots
        for extra in range(first_new, first_new + new_slots):
            self._set_slot(extra, 0, 0)
        offset = self.record_end
        self.buf[offset:offset + length] = data
        self.record_end = offset + length
        self._set_slot(slot, offset, length)

    def remove(self, slot: int, user: SpaceUser = NO_TXN) -> bytes:
        """Free the record in ``slot`` and return it; its space stays reserved for ``user``'s transaction."""
        data = self.read(slot)
        self.nfree += len(data)
        reserved = self._reserve(len(data), user)
        self._set_slot(slot, 0, len(data) if reserved else 0)
        return data

    def splice(self, slot: int, start: int, cut: int, data: bytes, user: SpaceUser = NO_TXN) -> bytes:
        """Replace ``cut`` bytes at ``start`` of the record in ``slot`` by ``data``; return the bytes cut.

        The record stays in its slot (its id cannot change). A record that
        shrinks leaves a hole whose bytes stay reserved for ``user``'s
        transaction, like a freed slot, since rolling back will need them; a
        record that grows takes ``user``'s usable space and moves to the gap
        (coalescing first if the gap is too small).
        """
        old = self.read(slot)
        if not 0 <= start <= start + cut <= len(old):
            raise SlotError(f"{self.pid}: slot {slot} holds {len(old)} bytes; cannot cut {cut} at {start}")
        new = old[:start] + bytes(data) + old[start + cut:]
        self._check_length(len(new))
        delta = len(new) - len(old)
        offset, _ = self.slot_entry(slot)
        if delta <= 0:
            self.buf[offset:offset + len(new)] = new
            self._set_slot(slot, offset, len(new))
            self.nfree += -delta
            if delta:
                self._reserve(-delta, user)
            return old[start:start + cut]
        usable = self.usable_space(user)
        if delta > usable:
            raise RecordWontFitError(
                f"{self.pid}: slot {slot} grows by {delta} bytes, {usable} are usable "
                f"(free {self.nfree}, reserved {self.nrsvd})"
            )
        self._acquire(delta, user)
        self._set_slot(slot, 0, 0)  # the old bytes become a hole; the record moves to the gap
        if self.contiguous_free < len(new):
            self.coalesce()
        position = self.record_end
        self.buf[position:position + len(new)] = new
        self.record_end = position + len(new)
        self._set_slot(slot, position, len(new))
        return old[start:start + cut]

    def coalesce(self) -> int:
        """Slide the records together towards the header; return the bytes of holes removed."""
        in_use = sorted((offset, length, slot) for slot, (offset, length) in enumerate(self.slot_table()) if offset)
        position = HEADER_SIZE
        before = self.record_end
        for offset, length, slot in in_use:
            if offset != position:
                self.buf[position:position + length] = self.buf[offset:offset + length]
                self._set_slot(slot, position, length)
            position += length
        self.buf[position:before] = bytes(before - position)
        self.record_end = position
        return before - position

    def _check_length(self, length: int) -> None:
        if length < 1:
            raise RecordWontFitError(f"{self.pid}: a record needs at least one byte")
        if length > self.size - HEADER_SIZE - FOOTER_SIZE - SLOT_SIZE:
            raise RecordWontFitError(f"{self.pid}: a record of {length} bytes can never fit a page of {self.size}")

    def check_space(self) -> None:
        """Assert the accounting invariant: nfree = gap + holes + free slot bytes."""
        used = sum(length for offset, length in self.slot_table() if offset)
        expected = self.size - HEADER_SIZE - FOOTER_SIZE - SLOT_SIZE * self.nslots - used
        if self.nfree != expected or not 0 <= self.nrsvd <= self.nfree or self.xct_rsvd > self.nrsvd:
            raise AssertionError(f"{self.pid}: nfree {self.nfree} (expected {expected}), nrsvd {self.nrsvd}, "
                                 f"xct_rsvd {self.xct_rsvd}")


class SpaceView(NamedTuple):
    """A slotted page's space fields, as :func:`place_record` reads them."""

    nfree: int
    nrsvd: int
    xct_rsvd: int
    rsvd_tid: int
    contiguous: int


class Placement(NamedTuple):
    """Where a record goes on a slotted page (:func:`place_record`)."""

    slot: int        # the slot it takes (``len(slots)`` and up: new slot entries)
    void: bool       # the page's reservation is void: reserved slots are free, nothing is reserved
    fits: bool       # the slot is the user's to take and the bytes are within the user's usable space
    coalesce: bool   # it fits, but the gap does not hold it: slide the records together first


def reservation_void(space: SpaceView, user: SpaceUser) -> bool:
    """Every transaction that reserved space on the page has ended (its youngest is older than the oldest
    active one), or bytes are reserved with no reserver known."""
    if not space.nrsvd and not space.rsvd_tid:
        return False
    return not (space.rsvd_tid and space.rsvd_tid >= user.oldest_active)


def usable_bytes(space: SpaceView, user: SpaceUser) -> int:
    """Bytes ``user`` may take, given a reservation that is not void: all free bytes when rolling back,
    else those not reserved, plus its own reservation if it is the youngest reserver."""
    if user.rolling_back:
        return space.nfree
    own = space.xct_rsvd if user.tid and user.tid == space.rsvd_tid else 0
    return space.nfree - space.nrsvd + own


def unreserved_after(space: SpaceView, user: SpaceUser, length: int) -> int:
    """The bytes no reservation holds once ``user`` has placed a record of ``length`` bytes, paying with its
    own reserved bytes first: what is left for new slot entries (a rollback may take any free byte)."""
    if user.rolling_back:
        return space.nfree - length
    own = space.xct_rsvd if user.tid and user.tid == space.rsvd_tid else 0
    return space.nfree - space.nrsvd - max(0, length - own)


def place_record(slots: Sequence[tuple[int, int]], space: SpaceView, length: int, user: SpaceUser,
                 slot: int | None = None) -> Placement:
    """Where a record of ``length`` bytes goes on a slotted page, for ``user``.

    ``slots`` is the slot table, ``(offset, length)`` per slot: in use if the
    offset is not 0, *reserved* if only the length is, free if both are 0.
    ``space`` holds the page's ``nfree``, ``nrsvd``, ``xct_rsvd``, ``rsvd_tid``
    and ``contiguous`` (the gap between the records and the slot table).
    ``slot`` is the slot redo or undo must use; None lets the page choose: the
    first free slot, else a new one (``SLOT_SIZE`` more bytes). The rules are
    the module documentation's; this function changes nothing.
    """
    void = reservation_void(space, user)
    if void:
        slots = [(offset, 0) if not offset else (offset, size) for offset, size in slots]
        space = SpaceView(space.nfree, 0, 0, 0, space.contiguous)
    if slot is None:
        slot = first_free_slot(slots)
    available = slot >= len(slots) or slots[slot] == FREE_SLOT or (not slots[slot][0] and user.rolling_back)
    entries = SLOT_SIZE * max(0, slot + 1 - len(slots))
    need = length + entries
    fits = available and need <= usable_bytes(space, user) and entries <= unreserved_after(space, user, length)
    return Placement(slot, void, fits, fits and space.contiguous < need)


def first_free_slot(slots: Sequence[tuple[int, int]]) -> int:
    """The first free slot of the table, else ``len(slots)`` (a new slot)."""
    try:
        return slots.index(FREE_SLOT)
    except ValueError:
        return len(slots)


def _place_from_exercise(hook: impl.Hook, student: Callable[..., Any]) -> Callable[..., Placement]:
    """A student's ``place_record`` (exercise 02a answers a plain tuple), checked for form: a slot number and
    three truth values."""
    def place(slots: Sequence[tuple[int, int]], space: SpaceView, length: int, user: SpaceUser,
              slot: int | None = None) -> Placement:
        answer = student(list(slots), space, length, user, slot)
        if not (isinstance(answer, tuple) and len(answer) == 4 and isinstance(answer[0], int)
                and answer[0] >= 0 and all(isinstance(a, bool) for a in answer[1:])):
            raise hook.wrong(f"returned {answer!r}, not (slot, void, fits, coalesce)")
        if slot is not None and answer[0] != slot:
            raise hook.wrong(f"put the record in slot {answer[0]}, but redo or undo asked for slot {slot}")
        return Placement(*answer)
    return place


#: where :meth:`SlottedPage._place` asks :func:`place_record` (exercise 02a's hook)
PLACE_RECORD = impl.register("02a_slotted_insert", "place_record", place_record, _place_from_exercise)
