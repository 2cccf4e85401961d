"""Exercise 02a: where a record goes on a slotted page, with space reservation (see README.md).

The pages are 512-byte file pages: 452 bytes free once formatted, records
from offset 48 up, the slot table growing down from offset 500.
"""

from types import SimpleNamespace

SLOT_SIZE = 4


def space(nfree, contiguous, nrsvd=0, rsvd_tid=0, xct_rsvd=0):
    return SimpleNamespace(nfree=nfree, nrsvd=nrsvd, xct_rsvd=xct_rsvd, rsvd_tid=rsvd_tid, contiguous=contiguous)


def user(tid, oldest_active, rolling_back=False):
    return SimpleNamespace(tid=tid, oldest_active=oldest_active, rolling_back=rolling_back)


# The README's page: transaction 1 inserted 40, 60 and 30 bytes in slots 0, 1, 2 (records end at
# 178, the slot table starts at 488: a gap of 310), then transaction 2 removed slot 1 (60 bytes).
SLOTS = [(48, 40), (0, 60), (148, 30)]
SPACE = space(nfree=370, contiguous=310, nrsvd=60, rsvd_tid=2, xct_rsvd=60)


def test_the_readme_worked_example(impl):
    """Transaction 3, while 2 is active: slot 1 is reserved, so a new slot 3; 50 + 4 bytes fit in 310."""
    assert impl.place_record(SLOTS, SPACE, 50, user(3, oldest_active=2)) == (3, False, True, False)


def test_reserved_bytes_are_not_usable_by_others(impl):
    """310 bytes are usable by transaction 3: 306 + 4 fit, 307 + 4 do not."""
    assert impl.place_record(SLOTS, SPACE, 306, user(3, 2)) == (3, False, True, False)
    assert impl.place_record(SLOTS, SPACE, 307, user(3, 2))[2] is False


def test_the_youngest_reserver_may_use_its_own_reservation(impl):
    """Transaction 2 may use all 370 bytes, but only 310 are contiguous: coalesce first."""
    assert impl.place_record(SLOTS, SPACE, 307, user(2, 2)) == (3, False, True, True)
    assert impl.place_record(SLOTS, SPACE, 366, user(2, 2)) == (3, False, True, True)
    assert impl.place_record(SLOTS, SPACE, 367, user(2, 2))[2] is False


def test_only_the_youngest_reservers_bytes_are_known(impl):
    """Transactions 4 and 6 freed 40 and 30 bytes: the page knows only 6's 30. Transaction 4 gets
    nothing back, though it reserved 40 of the 70."""
    slots = [(0, 40), (88, 60), (0, 30)]
    page = space(nfree=380, contiguous=310, nrsvd=70, rsvd_tid=6, xct_rsvd=30)
    assert impl.place_record(slots, page, 306, user(4, 4)) == (3, False, True, False)
    assert impl.place_record(slots, page, 307, user(4, 4))[2] is False
    assert impl.place_record(slots, page, 307, user(6, 4)) == (3, False, True, True)


def test_a_reservation_is_void_once_its_reserver_is_older_than_every_active_transaction(impl):
    """Transaction 2 ended; the oldest active one is 3: slot 1 is free again, and the 60 bytes too."""
    assert impl.place_record(SLOTS, SPACE, 50, user(3, oldest_active=3)) == (1, True, True, False)
    assert impl.place_record(SLOTS, SPACE, 370, user(3, oldest_active=3)) == (1, True, True, True)


def test_a_reservation_holds_while_its_reserver_is_the_oldest_active(impl):
    assert impl.place_record(SLOTS, SPACE, 50, user(5, oldest_active=2)) == (3, False, True, False)


def test_a_void_reservation_is_reported_even_when_the_record_does_not_fit(impl):
    assert impl.place_record(SLOTS, SPACE, 371, user(3, 3)) == (1, True, False, False)


def test_a_rollback_may_use_every_free_byte_and_its_reserved_slot(impl):
    """Transaction 2 rolls back its removal: the record goes back into slot 1."""
    assert impl.place_record(SLOTS, SPACE, 60, user(2, 2, rolling_back=True), slot=1) == (1, False, True, False)


def test_a_forward_insert_never_takes_a_reserved_slot(impl):
    """Even its own transaction: the slot must stay for its rollback."""
    assert impl.place_record(SLOTS, SPACE, 20, user(3, 2), slot=1)[2] is False
    assert impl.place_record(SLOTS, SPACE, 20, user(2, 2), slot=1)[2] is False


def test_a_slot_in_use_is_never_taken(impl):
    assert impl.place_record(SLOTS, SPACE, 20, user(2, 2, rolling_back=True), slot=0)[2] is False


def test_the_first_free_slot_is_taken_before_a_new_one(impl):
    """Slots 1 and 3 are free (no reservation on this page): slot 1, and no slot entry to pay for."""
    slots = [(48, 40), (0, 0), (88, 30), (0, 0)]
    page = space(nfree=362, contiguous=334)
    assert impl.place_record(slots, page, 362, user(7, 7)) == (1, False, True, True)


def test_a_new_slot_entry_costs_its_bytes_too(impl):
    """No free slot: 300 + 4 bytes are needed; the gap holds exactly 304, then not 305."""
    slots = [(48, 40), (88, 30)]
    page = space(nfree=314, contiguous=304)
    assert impl.place_record(slots, page, 300, user(1, 1)) == (2, False, True, False)
    assert impl.place_record(slots, page, 301, user(1, 1)) == (2, False, True, True)
    assert impl.place_record(slots, page, 310, user(1, 1)) == (2, False, True, True)
    assert impl.place_record(slots, page, 311, user(1, 1)) == (2, False, False, False)


def test_redo_and_undo_may_name_a_slot_past_the_table(impl):
    """Slot 4 of a 2-slot table: three new entries (slots 2, 3 and 4), 12 bytes."""
    slots = [(48, 40), (88, 30)]
    page = space(nfree=314, contiguous=304)
    assert impl.place_record(slots, page, 292, user(0, 9, rolling_back=True), slot=4) == (4, False, True, False)
    assert impl.place_record(slots, page, 303, user(0, 9, rolling_back=True), slot=4)[2] is False


def test_the_arguments_are_not_changed(impl):
    slots = list(SLOTS)
    impl.place_record(slots, SPACE, 50, user(3, 3))
    assert slots == SLOTS and (SPACE.nrsvd, SPACE.rsvd_tid, SPACE.xct_rsvd) == (60, 2, 60)


def test_a_sequence_of_inserts_on_one_page(impl):
    """A script: the test applies each answer to its own model of the page and checks the outcome."""
    slots, page = [], space(nfree=452, contiguous=452)
    record_end = 48

    def insert(length, who):
        nonlocal record_end
        slot, void, fits, coalesce = impl.place_record(list(slots), page, length, who)
        assert fits and not void
        if coalesce:
            record_end = 48 + sum(size for offset, size in slots if offset)
        new = max(0, slot + 1 - len(slots))
        slots.extend([(0, 0)] * new)
        slots[slot] = (record_end, length)
        record_end += length
        page.nfree -= length + SLOT_SIZE * new
        page.contiguous = 500 - SLOT_SIZE * len(slots) - record_end
        return slot, coalesce

    assert [insert(100, user(1, 1)) for _ in range(3)] == [(0, False), (1, False), (2, False)]
    slots[1] = (0, 0)  # a removal without reservation: a hole of 100 bytes
    page.nfree += 100
    assert insert(90, user(1, 1)) == (1, False)  # the gap (140) holds it
    assert insert(120, user(1, 1)) == (3, True)  # 124 > the gap (50): coalesce
    assert page.nfree == 452 - 410 - 16 and record_end == 48 + 410


def test_the_youngest_reserver_pays_a_new_slot_entry_from_unreserved_bytes(impl):
    """Transaction 2 removed 60 bytes (slot 1 reserved) and inserts 60: its own reservation pays for the
    record, but the new slot entry (4 bytes) must come from unreserved bytes, since undoing the insert
    gives back the record's 60 and not the entry, and its rollback will need all 60 to put slot 1 back."""
    slots = [(48, 40), (0, 60), (148, 30)]
    roomy = space(nfree=370, nrsvd=60, rsvd_tid=2, xct_rsvd=60, contiguous=310)
    assert impl.place_record(slots, roomy, 60, user(2, 2)) == (3, False, True, False)
    tight = space(nfree=62, nrsvd=60, rsvd_tid=2, xct_rsvd=60, contiguous=62)  # 2 unreserved bytes
    assert impl.place_record(slots, tight, 56, user(2, 2))[2] is False  # the entry would eat the reservation
    enough = space(nfree=66, nrsvd=60, rsvd_tid=2, xct_rsvd=60, contiguous=66)  # 6 unreserved bytes
    assert impl.place_record(slots, enough, 60, user(2, 2)) == (3, False, True, False)
    assert impl.place_record(slots, tight, 56, user(2, 2, rolling_back=True), slot=3)[2] is True  # any free byte


# Typical wrong solutions; each must fail at least one test above (exercises/test_stubs_fail.py).
def _place(slots, space, length, user, slot=None, *, ignore_reservation=False, no_credit=False,
           reuse_reserved=False, void_at_oldest=False, slot_entry_free=False, entries_from_reservation=False):
    tid = space.rsvd_tid
    if void_at_oldest:
        void = bool(space.nrsvd or tid) and not (tid and tid > user.oldest_active)
    else:
        void = bool(space.nrsvd or tid) and not (tid and tid >= user.oldest_active)
    nrsvd, xct_rsvd = (0, 0) if void or ignore_reservation else (space.nrsvd, space.xct_rsvd)
    if void:
        slots = [(offset, 0 if not offset else size) for offset, size in slots]
        tid = 0
    free = (lambda e: e[0] == 0) if reuse_reserved else (lambda e: e == (0, 0))
    if slot is None:
        slot = next((s for s, e in enumerate(slots) if free(e)), len(slots))
    available = slot >= len(slots) or free(slots[slot]) or (not slots[slot][0] and user.rolling_back)
    entries = 0 if slot_entry_free else SLOT_SIZE * max(0, slot + 1 - len(slots))
    need = length + entries
    own = xct_rsvd if user.tid and user.tid == tid and not no_credit else 0
    usable = space.nfree if user.rolling_back else space.nfree - nrsvd + own
    unreserved = space.nfree - length if user.rolling_back else space.nfree - nrsvd - max(0, length - own)
    fits = available and need <= usable and (entries_from_reservation or entries <= unreserved)
    return slot, void, fits, fits and space.contiguous < need


MUTANTS = {
    "reserved_bytes_count_as_usable": {"place_record": lambda *a, **k: _place(*a, **k, ignore_reservation=True)},
    "the_youngest_reserver_gets_nothing_back": {"place_record": lambda *a, **k: _place(*a, **k, no_credit=True)},
    "reserved_slots_reused_by_forward_inserts": {"place_record": lambda *a, **k: _place(*a, **k, reuse_reserved=True)},
    "void_while_the_reserver_is_still_active": {"place_record": lambda *a, **k: _place(*a, **k, void_at_oldest=True)},
    "a_new_slot_entry_is_free": {"place_record": lambda *a, **k: _place(*a, **k, slot_entry_free=True)},
    "a_new_slot_entry_paid_from_the_reservation": {
        "place_record": lambda *a, **k: _place(*a, **k, entries_from_reservation=True)},
}


def random_cases(rng):
    """For ``minidb grade``: random slot tables (records, reservations, free slots), reservations by the
    user or another transaction, void or not, forward inserts and rollbacks, a slot given or not; every
    third, a nearly full page where the youngest reserver inserts with a few bytes to spare."""
    for case in range(300):
        if case % 3 == 2:
            slots = [(48, 40), (0, rng.randrange(20, 80)), (100, 30)]
            reserved = slots[1][1]
            page = space(reserved + rng.randrange(0, 9), rng.randrange(0, reserved + 9), nrsvd=reserved,
                         rsvd_tid=3, xct_rsvd=reserved)
            yield "place_record", (slots, page, rng.randrange(reserved - 8, reserved + 1), user(3, 2)), {"slot": None}
            continue
        slots = [rng.choice([(48 + 40 * i, rng.randrange(1, 60)), (0, rng.randrange(1, 60)), (0, 0)])
                 for i in range(rng.randrange(0, 6))]
        reserved = sum(length for offset, length in slots if not offset)
        nfree = rng.randrange(0, 460)
        page = space(nfree, rng.randrange(0, nfree + 1), nrsvd=reserved, rsvd_tid=rng.randrange(0, 5),
                     xct_rsvd=rng.randrange(0, reserved + 1))
        who = user(rng.choice([page.rsvd_tid, rng.randrange(1, 5)]), rng.randrange(1, 5), rolling_back=rng.random() < 0.3)
        slot = rng.choice([None, None, rng.randrange(0, len(slots) + 2)])
        yield "place_record", (slots, page, rng.randrange(0, 200), who), {"slot": slot}
