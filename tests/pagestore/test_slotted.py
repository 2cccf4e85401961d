"""The page frame and slotted pages: layout, torn pages, space reservation, coalescing."""

import struct

import pytest
from hypothesis import given, settings, strategies as st

from minidb.log import LSN
from minidb.pagestore import PageId, PageTag, RecordWontFitError, SlotError, SlottedPage, SpaceUser, StoreFlags
from minidb.pagestore.errors import TornPageError
from minidb.pagestore.pages.page import FOOTER_SIZE, HEADER, HEADER_SIZE, NO_PAGE_LSN, stamp_checksum
from minidb.pagestore.pages.slotted import NO_TXN

PID = PageId(1, 3, 48)


def file_page(size=512) -> SlottedPage:
    page = SlottedPage(bytearray(size))
    page.format(PID, PageTag.FILE)
    return page


def test_header_layout_is_the_documented_bytes():
    assert HEADER_SIZE == 48 and FOOTER_SIZE == 12
    page = file_page()
    page.lsn = LSN(2, 0x1A0)
    page.next, page.prev = 49, 47
    raw = bytes(page.buf)
    assert struct.unpack_from("<Q", raw, 0)[0] == (2 << 32) | 0x1A0
    assert struct.unpack_from("<III", raw, 8) == (1, 3, 48)
    assert struct.unpack_from("<II", raw, 20) == (49, 47)
    assert raw[28] == PageTag.FILE and raw[29] == StoreFlags.REGULAR
    assert struct.unpack_from("<HHHHH", raw, 30) == (0, 452, 0, 0, 48)
    assert raw[-8:] == raw[:8]  # the footer copies the LSN
    assert raw[-12:-8] == bytes(4)  # the checksum field: 0 in memory, set when written
    assert HEADER.unpack_from(raw)[0] == page.lsn.packed
    assert page.header_fields()["pid"] == PID


def test_docstring_worked_example_one_record():
    page = file_page()
    assert page.nfree == 452 and page.record_end == 48
    assert page.insert(b"x" * 20) == 0
    assert (page.nfree, page.record_end, page.slot_table_start) == (428, 68, 496)


def test_a_torn_page_is_detected():
    page = file_page()
    page.lsn = LSN(1, 0x26)
    old = bytes(page.buf)
    page.lsn = LSN(1, 0x80)
    torn = SlottedPage(bytearray(bytes(page.buf)[:100] + old[100:]))  # only the first 100 bytes were written
    assert torn.is_torn()
    with pytest.raises(TornPageError, match=r"vol page 48: torn page: header LSN 0x1/0x80 but footer LSN 0x1/0x26"):
        torn.check("vol page 48")
    SlottedPage(bytearray(stamp_checksum(page.buf))).check("fine")  # an intact page, as written, passes


def test_a_page_never_written_is_free_and_not_torn():
    page = SlottedPage(bytearray(512))
    assert page.tag == PageTag.FREE and page.lsn == NO_PAGE_LSN and not page.is_torn()


def test_insert_read_remove_without_transactions():
    page = file_page()
    slots = [page.insert(data) for data in (b"alpha", b"bravo!", b"c")]
    assert slots == [0, 1, 2]
    assert page.read(1) == b"bravo!"
    assert page.remove(1) == b"bravo!"
    assert page.slot_state(1) == "free"  # no transaction: nothing is reserved
    assert page.insert(b"delta") == 1  # the free slot is reused
    assert page.records() == [(0, b"alpha"), (1, b"delta"), (2, b"c")]
    page.check_space()
    with pytest.raises(SlotError, match="slot 7 out of range"):
        page.read(7)


def test_space_reservation_worked_example():
    """The module's example: 40, 60 and 30 bytes; transaction 2 frees the 60."""
    page = file_page()
    t1 = SpaceUser(tid=1, oldest_active=1)
    for size in (40, 60, 30):
        page.insert(bytes(size), t1)
    assert page.nfree == 452 - 3 * 4 - 130 == 310
    page.remove(1, SpaceUser(tid=2, oldest_active=1))
    assert (page.nfree, page.nrsvd, page.rsvd_tid, page.xct_rsvd) == (370, 60, 2, 60)
    assert page.slot_state(1) == "reserved"
    while_2_active = 2
    assert page.usable_space(SpaceUser(tid=3, oldest_active=while_2_active)) == 310
    assert page.usable_space(SpaceUser(tid=2, oldest_active=while_2_active)) == 370
    assert page.usable_space(SpaceUser(tid=3, oldest_active=1, rolling_back=True)) == 370
    # Transaction 3 may not take the reserved bytes, nor the reserved slot.
    with pytest.raises(RecordWontFitError, match="needs 316 bytes, 310 are usable"):
        page.insert(bytes(312), SpaceUser(tid=3, oldest_active=2))
    assert page.insert(b"t3", SpaceUser(tid=3, oldest_active=2)) == 3
    # Once 3 is the oldest active transaction, the 60 bytes and slot 1 are free for all.
    assert page.usable_space(SpaceUser(tid=4, oldest_active=3)) == 370 - 6
    assert (page.nrsvd, page.rsvd_tid, page.slot_state(1)) == (0, 0, "free")
    assert page.insert(b"reuse", SpaceUser(tid=4, oldest_active=3)) == 1
    page.check_space()


def test_an_insert_alone_voids_a_reservation_whose_reservers_all_ended():
    """No usable_space() first: the insert itself finds transaction 2 older than every active one,
    voids its reservation and takes the slot it had reserved (SlottedPage._place, place_record)."""
    page = file_page()
    for size in (40, 60, 30):
        page.insert(bytes(size), SpaceUser(tid=1, oldest_active=1))
    page.remove(1, SpaceUser(tid=2, oldest_active=1))
    with pytest.raises(RecordWontFitError):
        page.insert(bytes(320), SpaceUser(tid=3, oldest_active=2))
    assert (page.nrsvd, page.slot_state(1)) == (60, "reserved")
    assert page.insert(bytes(320), SpaceUser(tid=3, oldest_active=3)) == 1
    assert (page.nrsvd, page.rsvd_tid, page.xct_rsvd) == (0, 0, 0)
    page.check_space()


def test_the_slot_table_read_at_once_matches_each_entry():
    """slot_table() unpacks the table in one call; it must list slot 0 first, as slot_entry reads them,
    and an insert takes the first free entry of it (slot 0 lies nearest the footer, so a table read in
    memory order would put the free slot last)."""
    page = file_page()
    user = SpaceUser(tid=1, oldest_active=1)
    for size in (40, 60, 30, 20):
        page.insert(bytes(size), user)
    page.remove(1, SpaceUser(tid=1, oldest_active=1))  # reserved for T1
    page.remove(2, NO_TXN)  # free at once
    table = page.slot_table()
    assert table == [page.slot_entry(s) for s in range(page.nslots)]
    assert table[0] == (48, 40) and table[1] == (0, 60) and table[2] == (0, 0) and table[3][1] == 20
    assert page.insert(b"x", SpaceUser(tid=3, oldest_active=1)) == 2
    assert page.records() == [(0, bytes(40)), (2, b"x"), (3, bytes(20))]
    assert SlottedPage(bytearray(512)).slot_table() == []


def test_rollback_puts_a_freed_record_back_in_its_slot():
    page = file_page()
    t1 = SpaceUser(tid=1, oldest_active=1)
    page.insert(b"keep", t1)
    page.insert(b"the record", t1)
    t5 = SpaceUser(tid=5, oldest_active=1)
    data = page.remove(1, t5)
    with pytest.raises(SlotError, match="reserved for a transaction"):
        page.insert_at(1, b"thief", SpaceUser(tid=6, oldest_active=1))
    page.insert_at(1, data, SpaceUser(tid=5, oldest_active=1, rolling_back=True))
    assert page.read(1) == b"the record"
    assert (page.nrsvd, page.xct_rsvd) == (0, 0)
    page.check_space()


def test_the_youngest_reserver_uses_its_own_reserved_bytes_first():
    page = file_page()
    old = SpaceUser(tid=1, oldest_active=1)
    page.insert(bytes(100), old)
    page.remove(0, SpaceUser(tid=3, oldest_active=1))
    assert (page.nrsvd, page.xct_rsvd) == (100, 100)
    page.insert(bytes(30), SpaceUser(tid=3, oldest_active=1))  # the record's 30 from its own reservation,
    assert (page.nrsvd, page.xct_rsvd) == (70, 70)  # the new slot entry's 4 from unreserved bytes
    # an older reserver only adds to nrsvd; the youngest stays 3
    page.insert(bytes(10), old)
    page.remove(2, SpaceUser(tid=2, oldest_active=1))
    assert (page.nrsvd, page.xct_rsvd, page.rsvd_tid) == (80, 70, 3)
    page.check_space()


def test_holes_are_coalesced_only_when_needed():
    page = file_page()
    for i in range(4):
        page.insert(bytes([65 + i]) * 100)
    page.remove(0)
    page.remove(2)
    assert page.contiguous_free == 452 - 16 - 400
    assert page.nfree == page.contiguous_free + 200
    page.insert(bytes(30))  # fits the gap: no coalescing
    assert page.record_end == 48 + 430
    slot = page.insert(b"Z" * 150)  # fits only after the holes are slid out
    assert page.read(1) == b"B" * 100 and page.read(3) == b"D" * 100 and page.read(slot) == b"Z" * 150
    assert page.record_end == 48 + 100 + 100 + 30 + 150
    page.check_space()


def test_errors_change_nothing():
    page = file_page()
    page.insert(bytes(200))
    page.insert(b"gone")
    page.remove(1)
    before = bytes(page.buf)
    with pytest.raises(RecordWontFitError, match="never fit"):
        page.insert(bytes(600))
    with pytest.raises(RecordWontFitError, match="needs 300 bytes, 244 are usable"):
        page.insert(bytes(300))
    with pytest.raises(RecordWontFitError, match="at least one byte"):
        page.insert(b"")
    with pytest.raises(SlotError, match="slot 0 is in use"):
        page.insert_at(0, b"x")
    with pytest.raises(SlotError, match="slot 1 is not in use"):
        page.remove(1)
    with pytest.raises(SlotError, match="slot 9 out of range"):
        page.remove(9)
    assert bytes(page.buf) == before


def test_redo_can_put_a_record_beyond_the_slot_table():
    page = file_page()
    page.insert_at(3, b"late")  # slots 0-2 become free slots
    assert page.nslots == 4 and [page.slot_state(s) for s in range(4)] == ["free", "free", "free", "in use"]
    page.check_space()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["insert", "remove", "coalesce"]), st.integers(1, 120),
                          st.integers(0, 5), st.integers(1, 6)), max_size=40))
def test_space_accounting_invariant_under_random_operations(ops):
    page = file_page()
    model: dict[int, bytes] = {}
    oldest = 1
    for op, size, pick, tid in ops:
        user = SpaceUser(tid=tid, oldest_active=oldest)
        if op == "insert":
            data = bytes([size % 251]) * size
            try:
                slot = page.insert(data, user)
            except RecordWontFitError:
                continue
            assert slot not in model
            model[slot] = data
        elif op == "remove" and model:
            slot = sorted(model)[pick % len(model)]
            assert page.remove(slot, user) == model.pop(slot)
        else:
            page.coalesce()
            oldest = max(oldest, tid)
        page.check_space()
        assert dict(page.records()) == model


REDO_USER = SpaceUser(tid=0, oldest_active=(1 << 64) - 1, rolling_back=True)  # restart's redo user


def shortcut_or_careful(page, shortcut, careful, took, kind):
    """``shortcut(copy)`` and ``careful(copy)`` on two copies of ``page``: the shortcut acts only where the
    careful method succeeds, and then writes its bytes; where it declines, its copy is untouched. Returns
    the careful copy (the page as redo leaves it)."""
    fast, slow, before = page.copy(), page.copy(), bytes(page.buf)
    acted = shortcut(fast)
    try:
        careful(slow)
    except (SlotError, RecordWontFitError):
        assert not acted
    assert bytes(fast.buf) == (bytes(slow.buf) if acted else before)
    took[kind if acted else "declined"] += 1
    return slow


def test_redos_shortcuts_write_the_careful_bytes_or_leave_the_page_alone():
    """insert_plain and overwrite_plain, on pages in every state a seeded run of inserts, removals (some
    reserved), resizing and same-length splices gives: where they act, the page is byte for byte what
    insert_at / splice by redo's user make of it; where they decline, it is untouched."""
    import random

    from minidb.fast.pagestore.restart.redo import insert_plain, overwrite_plain  # the fast redo's (a twin)

    rng = random.Random(11)
    took = {"insert": 0, "overwrite": 0, "declined": 0}
    for _ in range(40):
        page = file_page(rng.choice([256, 512]))
        for _ in range(60):
            slots = page.nslots
            if rng.random() < 0.5:  # an insert by redo: in a free, reserved, used or new slot
                slot = rng.randrange(0, slots + 3)
                data = bytes([rng.randrange(256)]) * rng.choice([0, 1, 5, 30, 90, 300])
                page = shortcut_or_careful(page, lambda p, slot=slot, data=data: insert_plain(p, slot, data),
                                           lambda p, slot=slot, data=data: p.insert_at(slot, data, REDO_USER),
                                           took, "insert")
            elif rng.random() < 0.5 and slots:  # a splice by redo, often of the same length
                slot = rng.randrange(slots)
                length = page.slot_entry(slot)[1]
                start, cut = rng.randrange(0, length + 2), rng.randrange(0, length + 2)
                data = bytes([rng.randrange(256)]) * (cut if rng.random() < 0.7 else rng.randrange(0, 8))
                change = (slot, start, cut, data)
                page = shortcut_or_careful(page, lambda p, change=change: overwrite_plain(p, *change),
                                           lambda p, change=change: p.splice(*change, REDO_USER), took, "overwrite")
            elif slots:  # a removal, by a transaction (its space stays reserved) or by redo
                slot = rng.randrange(slots)
                if page.is_in_use(slot):
                    page.remove(slot, rng.choice([SpaceUser(tid=rng.randrange(1, 9), oldest_active=1), REDO_USER]))
            page.check_space()
    assert min(took.values()) > 50


def test_a_rollback_always_finds_the_bytes_it_reserved():
    """A transaction frees records, inserts (new slot entries), grows and shrinks records on one page, then
    aborts, or crashes and is undone by restart: the rollback must put every freed byte back. The new
    slot entries of its inserts stay after their undo, so they must not have been paid from its own
    reservation (before that rule, about one seed in sixteen failed its abort with RecordWontFitError)."""
    import random

    from minidb.errors import MinidbError

    from tests.pagestore.sm_helpers import new_sm, reopen

    def bodies(sm, rids):
        with sm.transaction() as reader:
            return {rid: sm.read_rec(reader, rid).body for rid in rids}

    for seed in range(80):
        rng = random.Random(seed)
        sm = new_sm(f"rsvd{seed}", num_pages=128, frames=16)
        with sm.transaction() as t:
            fid = sm.create_file(t)
            rids = [sm.create_rec(t, fid, bytes(rng.randrange(1, 60))) for _ in range(12)]
        before = bodies(sm, rids)
        t = sm.begin()
        for _ in range(rng.randrange(2, 8)):
            roll = rng.random()
            try:
                if roll < 0.3 and rids:
                    sm.free_rec(t, rids.pop(rng.randrange(len(rids))))
                elif roll < 0.6 and rids:
                    sm.append_rec(t, rng.choice(rids), bytes(rng.randrange(1, 40)))
                elif roll < 0.8:
                    rids.append(sm.create_rec(t, fid, bytes(rng.randrange(1, 60))))
                elif rids:
                    sm.truncate_rec(t, rng.choice(rids), 1)
            except MinidbError:
                pass  # a record that does not fit: the transaction goes on
        if seed % 2:
            sm.abort(t)
        else:
            sm.log.flush()
            sm = reopen(sm)  # a crash; restart undoes the loser
        assert bodies(sm, before) == before, f"seed {seed}"
        assert sm.check() == [], f"seed {seed}"
