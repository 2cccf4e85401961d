"""Escalation: many long locks under a page or store become one lock on it."""

import pytest

from minidb.pagestore import PageId, StoreId
from minidb.pagestore.lock import LOCK_MANAGER, Duration, Interleaving, LockId
from minidb.pagestore.lock.errors import BadLockRequest
from minidb.pagestore.lock.modes import EX, IS, IX, SH, SIX

from tests.pagestore.lock.helpers import P48, P50, S13, T1, T2, T3, V1, check_bookkeeping, rec

P49 = LockId.page(PageId(1, 3, 49))


def test_the_worked_example_readers_escalate_to_sh():
    lm = LOCK_MANAGER.call(escalation_threshold=4, trace=True)
    for slot in range(3):
        lm.lock(T1, rec(slot, page=50), SH)
    assert len(lm.held(T1)) == 6 and lm.stats["nEscalations"] == 0
    lm.lock(T1, rec(3, page=50), SH)
    assert lm.held(T1) == {V1: IS, S13: IS, P50: SH}
    assert lm.trace.lines[-1] == ("T1 escalates IS->SH on p(1.3.50): 4 locks below reached the threshold 4; "
                                  "released 4")
    lm.lock(T1, rec(4, page=50), SH)  # now covered by the page's SH: no lock at all
    assert lm.held(T1) == {V1: IS, S13: IS, P50: SH} and lm.stats["nCovered"] == 1


def test_writers_escalate_to_ex():
    lm = LOCK_MANAGER.call(escalation_threshold=3)
    lm.lock(T1, rec(1), SH)
    lm.lock(T1, rec(2), EX)
    lm.lock(T1, rec(3), SH)
    assert lm.held(T1) == {V1: IX, S13: IX, P48: EX}


def test_pages_escalate_to_their_store_and_take_their_records_along():
    lm = LOCK_MANAGER.call(escalation_threshold=3)
    lm.set_escalation(P48, None)  # no escalation to this page: its records count under it, not the store
    for slot in range(5):
        lm.lock(T1, rec(slot), SH)
    assert len(lm.held(T1)) == 8
    lm.lock(T1, LockId.page(PageId(1, 3, 60)), SH)
    assert lm.stats["nEscalations"] == 0  # two pages under s(1.3)
    lm.lock(T1, LockId.page(PageId(1, 3, 61)), SH)  # the third
    assert lm.held(T1) == {V1: IS, S13: SH}


def test_escalation_is_refused_rather_than_waiting():
    lm = LOCK_MANAGER.call(escalation_threshold=2, trace=True)
    lm.lock(T2, rec(9), EX)  # T2 writes on the same page: IX there
    lm.lock(T1, rec(1), SH)
    lm.lock(T1, rec(2), SH)
    assert lm.stats["nEscalationsRefused"] == 1 and lm.held(T1)[P48] is IS
    assert lm.trace.lines[-1] == "T1 escalation to SH on p(1.3.48) refused: T2(IX) hold it"
    lm.release_all(T2)
    lm.lock(T1, rec(3), SH)  # tried again at the next child lock
    assert lm.held(T1) == {V1: IS, S13: IS, P48: SH}


def test_short_locks_do_not_count_and_stay():
    lm = LOCK_MANAGER.call(escalation_threshold=2)
    lm.lock(T1, rec(1), SH, duration=Duration.SHORT)
    lm.lock(T1, rec(2), SH, duration=Duration.SHORT)
    lm.lock(T1, rec(3), SH)
    assert lm.stats["nEscalations"] == 0
    lm.lock(T1, rec(4), SH)
    held = lm.held(T1)
    assert held[P48] is SH and rec(1) in held and rec(2) in held and rec(3) not in held and rec(4) not in held
    lm.unlock(T1, rec(1))  # a short lock below the escalated page is still unlocked the usual way


@pytest.mark.parametrize("setting", ["object", "transaction", "manager"])
def test_escalation_can_be_disabled_per_object_per_transaction_or_for_all(setting):
    lm = LOCK_MANAGER.call(escalation_threshold=None if setting == "manager" else 2)
    if setting == "object":
        lm.set_escalation(P48, None)
    elif setting == "transaction":
        lm.set_escalation(T1, None)
    for slot in range(4):
        lm.lock(T1, rec(slot), SH)
    assert lm.stats["nEscalations"] == 0 and len(lm.held(T1)) == 7
    lm.lock(T2, rec(1, page=50), SH)
    lm.lock(T2, rec(2, page=50), SH)
    assert lm.stats["nEscalations"] == (1 if setting in ("object", "transaction") else 0)


def test_the_most_specific_threshold_wins():
    lm = LOCK_MANAGER.call(escalation_threshold=None)
    lm.set_escalation(T1, 10)
    lm.set_escalation(P48, 2)
    lm.lock(T1, rec(1), SH)
    lm.lock(T1, rec(2), SH)
    assert lm.held(T1)[P48] is SH
    lm.release_all(T1)  # the transaction's own setting ends with it
    lm.lock(T1, rec(1, page=50), SH)
    assert lm.escalation.threshold(P50, 1) is None


def test_escalation_after_a_wait():
    """T1's second record lock waits for T3's reader; once T3 is gone, the grant reaches the threshold
    and T1's page lock goes from IX to EX (nobody else is on the page any more)."""
    lm = LOCK_MANAGER.call(escalation_threshold=2)
    with Interleaving(lm) as script:
        script.lock(T1, rec(1, page=50), EX)
        assert script.lock(T3, rec(2, page=50), SH).outcome == "ok"
        assert script.lock(T1, rec(2, page=50), EX).outcome == "blocked"
        script.release_all(T3)
        assert script.step(3).outcome == "ok" and lm.held(T1) == {V1: IX, S13: IX, P50: EX}


def test_kvl_locks_count_under_their_store():
    lm = LOCK_MANAGER.call(escalation_threshold=3)
    for key in (b"a", b"b", b"c"):
        lm.lock(T1, LockId.kvl(StoreId(1, 3), key), EX)
    assert lm.held(T1) == {V1: IX, S13: EX}


def test_short_locks_left_below_an_escalated_page_keep_it_from_being_unlocked_when_it_is_locked_again():
    """Escalation to the store releases the long page locks and keeps a short record lock below one of
    them; the page locked again (short) counts that record as below it, as before the escalation."""
    lm = LOCK_MANAGER.call(escalation_threshold=None)
    lm.set_escalation_thresholds(to_page=None, to_store=3)
    p48, p49, p50 = (LockId.page(PageId(1, 3, n)) for n in (48, 49, 50))
    lm.lock(T1, p48, IS)
    lm.lock(T1, rec(1, 48), SH, Duration.SHORT)
    lm.lock(T1, p49, IS)
    lm.lock(T1, p50, IS)  # the third long page lock under s(1.3): escalation to SH, the pages released
    assert lm.held(T1) == {V1: IS, S13: SH, rec(1, 48): SH}
    lm.lock(T1, rec(2, 48), EX, Duration.SHORT)  # SH on the store does not cover EX: IX on p(1.3.48) again
    assert lm.held(T1) == {V1: IX, S13: SIX, P48: IX, rec(1, 48): SH, rec(2, 48): EX}
    lm.unlock(T1, rec(2, 48))
    with pytest.raises(BadLockRequest, match=r"cannot unlock p\(1.3.48\): it still holds 1 lock below it"):
        lm.unlock(T1, P48)
    lm.unlock(T1, rec(1, 48))
    lm.unlock(T1, P48)
    assert lm.held(T1) == {V1: IX, S13: SIX}


def escalated_with_a_short_record_left():
    """T1's long IS on three pages of s(1.3) (the third escalates the store to SH and releases them) and
    a short SH on r(1.3.48.1), left below the released p(1.3.48)."""
    lm = LOCK_MANAGER.call(escalation_threshold=None)
    lm.set_escalation_thresholds(to_page=None, to_store=3)
    for lock_id, duration in [(P48, Duration.LONG), (rec(1, 48), Duration.SHORT), (P49, Duration.LONG),
                                (P50, Duration.LONG)]:
        lm.lock(T1, lock_id, IS if lock_id.code == "p" else SH, duration)
    assert lm.held(T1) == {V1: IS, S13: SH, rec(1, 48): SH}
    return lm


def test_a_short_lock_left_below_an_escalated_page_is_released_with_the_books_kept():
    """As above, but other locks are taken before the record is unlocked (the accelerated twin gives them
    the released heads; tests/agreement/scn_locks.py runs this against it)."""
    lm = escalated_with_a_short_record_left()
    lm.lock(T1, LockId.user(7), EX)
    lm.lock(T1, LockId.user(8), EX)
    lm.lock(T1, LockId.user(9), EX)
    lm.unlock(T1, rec(1, 48))
    check_bookkeeping(lm)
    assert lm.held(T1) == {V1: IS, S13: SH, LockId.user(7): EX, LockId.user(8): EX, LockId.user(9): EX}


def test_a_page_locked_again_directly_adopts_the_short_locks_left_below_it():
    """As above, but the page itself is asked for again (not implicitly, under a record): the request
    looks each ancestor up, and the new page lock counts the record left below it."""
    lm = escalated_with_a_short_record_left()
    lm.lock(T1, P49, IX, Duration.SHORT)  # the store converts to SIX, which is enough for an IX below
    lm.lock(T1, P48, IX, Duration.SHORT)  # its parents held and enough, and the record left below it adopted
    check_bookkeeping(lm)
    with pytest.raises(BadLockRequest, match=r"cannot unlock p\(1.3.48\): it still holds 1 lock below it"):
        lm.unlock(T1, P48)
    lm.unlock(T1, rec(1, 48))
    lm.unlock(T1, P48)
    check_bookkeeping(lm)
    assert lm.held(T1) == {V1: IX, S13: SIX, P49: IX}
