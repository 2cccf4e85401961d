"""The lock manager: implicit parents, durations, release, timeouts, FIFO and conversions with threads."""

import random
import threading

import pytest

from minidb.errors import UserError
from minidb.pagestore import ExtentId, PageId, StoreId
from minidb.pagestore.lock import (
    LOCK_MANAGER,
    BadLockRequest,
    DeadlockVictim,
    Duration,
    Interleaving,
    LockId,
    LockTimeout,
)
from minidb.pagestore.lock.modes import EX, IS, IX, NL, SH, SIX, UD

from tests.pagestore.lock.helpers import (
    P48,
    P50,
    S13,
    S14,
    T1,
    T2,
    T3,
    T4,
    V1,
    X16,
    Txn,
    check_bookkeeping,
    rec,
    user,
)

INSTANT, SHORT, LONG = Duration.INSTANT, Duration.SHORT, Duration.LONG


@pytest.fixture
def lm():
    return LOCK_MANAGER.call(escalation_threshold=None, trace=True)


# -- implicit parent locks --------------------------------------------------------------
def test_a_record_lock_takes_its_parents_in_intention_modes(lm):
    lm.lock(T1, rec(2), EX)
    assert lm.held(T1) == {V1: IX, S13: IX, P48: IX, rec(2): EX}
    lm.lock(T2, rec(3), SH)
    assert lm.held(T2) == {V1: IS, S13: IS, P48: IS, rec(3): SH}
    assert lm.stats["nImplicitLocks"] == 6 and lm.stats["nGranted"] == 8
    assert lm.trace.lines[:4] == ["T1 IX v(1): granted (implicit)", "T1 IX s(1.3): granted (implicit)",
                                  "T1 IX p(1.3.48): granted (implicit)", "T1 EX r(1.3.48.2): granted"]


@pytest.mark.parametrize("child, parent", [(IS, IS), (SH, IS), (IX, IX), (SIX, IX), (UD, IX), (EX, IX)])
def test_parent_mode_of_each_child_mode(lm, child, parent):
    lm.lock(T1, P48, child)
    assert lm.held(T1) == {V1: parent, S13: parent, P48: child}


def test_parents_already_held_strongly_enough_are_not_asked_again(lm):
    lm.lock(T1, rec(2), EX)
    before = lm.stats["nGranted"]
    lm.lock(T1, rec(3), SH)  # parents held IX, which covers the IS a reader needs
    assert lm.stats["nGranted"] == before + 1 and lm.held(T1)[P48] is IX
    lm.lock(T1, rec(5, page=50), EX)  # a new page: only p(1.3.50) is new among the parents
    assert lm.held(T1)[P50] is IX and lm.stats["nGranted"] == before + 3


def test_a_reader_turning_writer_converts_its_parents(lm):
    lm.lock(T1, rec(2), SH)
    lm.lock(T1, rec(3), EX)
    assert lm.held(T1) == {V1: IX, S13: IX, P48: IX, rec(2): SH, rec(3): EX}
    assert lm.stats["nConversions"] == 3


def test_an_ancestor_that_covers_the_request_means_no_lock(lm):
    lm.lock(T1, P48, SH)
    lm.lock(T1, rec(2), SH)
    lm.lock(T1, rec(3), IS)
    assert rec(2) not in lm.held(T1) and rec(3) not in lm.held(T1)
    lm.lock(T1, rec(4), EX)  # SH on the page does not cover a write: the page converts to supremum(SH, IX)
    assert lm.held(T1)[P48] is SIX and lm.held(T1)[rec(4)] is EX
    lm.lock(T2, S14, EX)
    lm.lock(T2, LockId.page(PageId(1, 4, 9)), EX)
    lm.lock(T2, LockId.record(PageId(1, 4, 9).record(1)), EX)
    assert lm.held(T2) == {V1: IX, S14: EX}
    assert lm.stats["nCovered"] == 4


def test_key_value_locks_sit_under_their_store(lm):
    key = LockId.kvl(StoreId(1, 3), b"apple")
    lm.lock(T1, key, EX)
    assert lm.held(T1) == {V1: IX, S13: IX, key: EX}


def test_extent_and_user_locks_take_no_parents(lm):
    lm.lock(T1, X16, IX)
    lm.lock(T1, user(7), EX)
    assert lm.held(T1) == {X16: IX, user(7): EX}


# -- durations, unlock, release ---------------------------------------------------------
def test_instant_locks_are_gone_once_granted(lm):
    lm.lock(T1, rec(2), EX, duration=INSTANT)
    assert lm.held(T1) == {} and lm.snapshot().heads == ()
    lm.lock(T1, rec(2), SH)
    lm.lock(T1, rec(2), EX, duration=INSTANT)  # an instant conversion: granted, then back to SH
    assert lm.held(T1)[rec(2)] is SH and lm.held(T1)[P48] is IS
    lm.lock(T2, rec(2), SH, timeout=0)  # so another reader still gets in


def test_an_instant_request_waits_for_the_holder(lm):
    lm.lock(T1, P48, EX)
    with pytest.raises(LockTimeout):
        lm.lock(T2, P48, EX, duration=INSTANT, timeout=0)
    assert lm.held(T2) == {}  # the instant parents it took were let go too
    lm.release_all(T1)
    lm.lock(T2, P48, EX, duration=INSTANT, timeout=0)
    assert lm.held(T2) == {} and lm.snapshot().heads == ()


def test_short_locks_unlock_long_ones_do_not(lm):
    lm.lock(T1, rec(2), SH, duration=SHORT)
    with pytest.raises(BadLockRequest, match="still holds 1 lock below it"):
        lm.unlock(T1, P48)
    lm.unlock(T1, rec(2))
    assert lm.held(T1) == {V1: IS, S13: IS, P48: IS}
    lm.unlock(T1, P48)
    lm.unlock(T1, S13)
    lm.unlock(T1, V1)
    assert lm.held(T1) == {}
    lm.lock(T1, rec(3), EX)
    with pytest.raises(BadLockRequest, match="long duration: it is released at commit or abort"):
        lm.unlock(T1, rec(3))
    with pytest.raises(BadLockRequest, match="T1 holds no lock on r\\(1.3.48.9\\)"):
        lm.unlock(T1, rec(9))
    assert lm.held(T1)[rec(3)] is EX


def test_asking_again_longer_lengthens_never_shortens(lm):
    lm.lock(T1, rec(2), SH, duration=SHORT)
    lm.lock(T1, rec(2), SH, duration=LONG)
    with pytest.raises(BadLockRequest, match="long duration"):
        lm.unlock(T1, rec(2))
    assert lm.unlock_duration(T1, SHORT) == 0
    with pytest.raises(BadLockRequest, match="long duration"):
        lm.unlock(T1, P48)  # the parents became long too
    lm.lock(T1, rec(5), SH, duration=SHORT)
    assert lm.unlock_duration(T1, SHORT) == 1  # only the short record lock
    assert rec(5) not in lm.held(T1) and rec(2) in lm.held(T1)


def test_unlock_of_an_implicitly_covered_lock_is_a_no_op(lm):
    lm.lock(T1, P48, SH, duration=SHORT)
    lm.lock(T1, rec(2), SH, duration=SHORT)  # covered: no lock
    lm.unlock(T1, rec(2))
    assert lm.held(T1)[P48] is SH


def test_extent_locks_are_held_to_the_end_of_the_transaction(lm):
    lm.lock(T1, X16, IX, duration=SHORT)
    with pytest.raises(BadLockRequest, match="extent locks are held to the end of the transaction"):
        lm.unlock(T1, X16)
    assert lm.unlock_duration(T1, SHORT) == 0 and lm.extents_held(T1) == [ExtentId(1, 6)]
    lm.release_all(T1)
    assert lm.extents_held(T1) == []


def test_extent_freeing_at_commit(lm):
    lm.lock(T1, X16, IX)
    lm.mark_extent(T1, ExtentId(1, 6), True)  # T1 allocated a page in the extent
    assert "[has page]" in lm.dump()
    assert not lm.upgrade_extent_to_free(T1, ExtentId(1, 6))
    lm.mark_extent(T1, ExtentId(1, 6), False)  # ... and freed it again
    lm.lock(T2, X16, IX)
    assert not lm.upgrade_extent_to_free(T1, ExtentId(1, 6))  # T2 may allocate there: keep it
    lm.release_all(T2)
    assert lm.upgrade_extent_to_free(T1, ExtentId(1, 6)) and lm.held(T1) == {X16: EX}
    with pytest.raises(BadLockRequest, match="holds no lock on x\\(1.7\\)"):
        lm.upgrade_extent_to_free(T1, ExtentId(1, 7))


def test_release_all_frees_children_first_and_wakes_nobody_twice(lm):
    lm.lock(T1, rec(2), EX)
    lm.lock(T1, X16, IX)
    lm.release_all(T1)
    assert lm.held(T1) == {} and lm.snapshot().heads == ()
    assert lm.stats["nReleases"] == 5
    lm.release_all(T1)  # nothing held: nothing to do
    assert lm.trace.lines[-1] == "T1 releases all its locks (5)"


def test_query_and_held(lm):
    lm.lock(T1, rec(2), SH)
    lm.lock(T2, rec(2), SH)
    assert lm.query(rec(2)) is SH and lm.query(rec(2), T1) is SH and lm.query(rec(3)) is NL
    assert lm.query(P48) is IS and lm.query(P48, T3) is NL
    assert list(lm.held(T1)) == [V1, S13, P48, rec(2)]


# -- timeouts -----------------------------------------------------------------------------
def test_an_immediate_request_fails_at_once_and_changes_nothing(lm):
    lm.lock(T1, rec(2), EX)
    before = lm.dump()
    with pytest.raises(LockTimeout, match=r"T2 EX on r\(1.3.48.2\): not granted at once \(timeout 0\): "
                                          r"T1\(EX\) \(conflicting mode\)"):
        lm.lock(T2, rec(2), EX, timeout=0)
    assert lm.held(T2) == {V1: IX, S13: IX, P48: IX}  # the parents taken on the way stay, as in Shore
    assert lm.dump().splitlines()[4] == before.splitlines()[4]  # r(1.3.48.2): T1 alone
    assert lm.stats["nTimeouts"] == 1 and lm.stats["nWaits"] == 0


def test_an_immediate_conversion_fails_and_keeps_the_old_mode(lm):
    lm.lock(T1, user(1), SH)
    lm.lock(T2, user(1), SH)
    with pytest.raises(LockTimeout, match=r"T2 SH->EX on u\(1\)"):
        lm.lock(T2, user(1), EX, timeout=0)
    assert lm.held(T2) == {user(1): SH} and lm.snapshot().head(user(1)).requests[1].status == "granted"


def test_a_timed_wait_gives_up_and_leaves_the_queue(lm):
    """T2 waits 0.05 s for a lock nobody releases (the timeout itself is what is tested)."""
    lm.lock(T1, user(1), EX)
    with Interleaving(lm) as script:
        step = script.lock(T2, user(1), SH, timeout=0.05)
        assert step.status in ("blocked", "raised")
        script.settle()
        lm.watch(lambda: step.finished, 30)
        assert isinstance(step.error, LockTimeout) and "not granted within 0.05 s" in str(step.error)
        assert lm.snapshot().head(user(1)).requests == lm.snapshot().head(user(1)).requests[:1]
        assert lm.stats["nTimeouts"] == 1 and lm.stats["nWaits"] == 1


def test_a_timed_conversion_gives_up_and_keeps_the_old_mode(lm):
    lm.lock(T1, user(1), SH)
    lm.lock(T2, user(1), SH)
    with Interleaving(lm) as script:
        step = script.lock(T2, user(1), EX, timeout=0.05)
        lm.watch(lambda: step.finished, 30)
        assert isinstance(step.error, LockTimeout) and lm.held(T2) == {user(1): SH}
        assert [r.status for r in lm.snapshot().head(user(1)).requests] == ["granted", "granted"]


def test_a_timed_wait_that_is_granted_in_time(lm):
    lm.lock(T1, user(1), EX)
    with Interleaving(lm) as script:
        waiting = script.lock(T2, user(1), SH, timeout=60)
        assert waiting.status == "blocked"
        script.release_all(T1)
        assert waiting.outcome == "ok" and lm.held(T2) == {user(1): SH}


# -- FIFO and conversions, with threads ---------------------------------------------------------
def test_waiters_are_granted_first_come_first_served(lm):
    with Interleaving(lm) as script:
        script.lock(T1, user(1), EX)
        script.lock(T2, user(1), SH)
        script.lock(T3, user(1), EX)
        script.lock(T4, user(1), SH)  # compatible with T2, but behind T3
        assert [s.outcome for s in script.steps] == ["ok", "blocked", "blocked", "blocked"]
        script.release_all(T1)
        assert [s.outcome for s in script.steps[1:4]] == ["ok", "blocked", "blocked"]
        script.release_all(T2)
        assert [s.outcome for s in script.steps[1:4]] == ["ok", "ok", "blocked"]
        script.release_all(T3)
        assert script.step(4).outcome == "ok"
        assert script.log == [
            " 1. T1: EX u(1) -> ok", " 2. T2: SH u(1) -> blocked", " 3. T3: EX u(1) -> blocked",
            " 4. T4: SH u(1) -> blocked", " 5. T1: release all -> ok", "    T2: SH u(1) (step 2) -> ok",
            " 6. T2: release all -> ok", "    T3: EX u(1) (step 3) -> ok", " 7. T3: release all -> ok",
            "    T4: SH u(1) (step 4) -> ok"]


def test_compatible_waiters_are_granted_together(lm):
    with Interleaving(lm) as script:
        script.lock(T1, user(1), EX)
        script.lock(T2, user(1), SH)
        script.lock(T3, user(1), IS)
        script.release_all(T1)
        assert script.step(2).outcome == script.step(3).outcome == "ok"
        assert lm.trace.lines[-3:-1] == ["T2 SH u(1): granted after waiting", "T3 IS u(1): granted after waiting"]


def test_a_conversion_goes_before_earlier_waiters(lm):
    with Interleaving(lm) as script:
        script.lock(T1, user(1), SH)
        script.lock(T2, user(1), SH)
        script.lock(T3, user(1), EX)  # waits for both readers
        script.lock(T2, user(1), EX)  # converts: waits for T1 only, and goes first
        assert lm.snapshot().head(user(1)).requests[1].status == "converting"
        script.release_all(T1)
        assert script.step(4).outcome == "ok" and script.step(3).outcome == "blocked"
        assert lm.held(T2) == {user(1): EX}
        script.release_all(T2)
        assert script.step(3).outcome == "ok"


def test_an_updater_joins_readers_but_keeps_new_readers_out(lm):
    """UD is granted next to SH; a new SH waits behind the UD; the UD converts to EX when the old reader leaves."""
    with Interleaving(lm) as script:
        script.lock(T1, user(1), SH)
        assert script.lock(T2, user(1), UD).outcome == "ok"
        assert script.lock(T3, user(1), SH).outcome == "blocked"
        assert script.lock(T2, user(1), EX).outcome == "blocked"  # converting, for T1
        script.release_all(T1)
        assert script.step(4).outcome == "ok" and script.step(3).outcome == "blocked"
        script.release_all(T2)
        assert script.step(3).outcome == "ok"


def test_a_conversion_granted_at_once_wakes_the_waiters_it_lets_in(lm):
    """The table is not monotonic: a held UD keeps a new IS out, a held SIX lets it in. T1 converting
    UD -> SIX at once (nobody else holds the lock) must grant T2's IS that waited for the UD; nothing
    else would ever wake it (before this was done, T2 waited until its timeout with nobody in its way)."""
    with Interleaving(lm) as script:
        script.lock(T1, user(1), UD)
        assert script.lock(T2, user(1), IS).outcome == "blocked"
        assert script.lock(T1, user(1), SIX).outcome == "ok"  # converted at once
        assert script.step(2).outcome == "ok"
        assert lm.held(T1) == {user(1): SIX} and lm.held(T2) == {user(1): IS}
        assert lm.stats["nConversions"] == 1 and lm.trace.lines[-1] == "T2 IS u(1): granted after waiting"


def test_a_conversion_granted_at_once_wakes_a_waiting_record_reader(lm):
    """The same on a record, with the implicit parents: T2's IS on the record waits for T1's UD until T1
    converts it to SIX, and the waiters behind T2 stay in their order."""
    with Interleaving(lm) as script:
        script.lock(T1, rec(2), UD)
        assert script.lock(T2, rec(2), IS).outcome == "blocked"
        assert script.lock(T3, rec(2), SH).outcome == "blocked"  # SH conflicts with SIX too
        assert script.lock(T1, rec(2), SIX).outcome == "ok"
        assert script.step(2).outcome == "ok" and script.step(3).outcome == "blocked"
        script.release_all(T1)
        assert script.step(3).outcome == "ok"


def test_the_wait_listener_fires_before_the_thread_blocks(lm):
    """Without the interleaving helper: a listener event tells the test that T2 is blocked."""
    lm.lock(T1, user(1), EX)
    started = threading.Event()
    lm.add_listener(lambda event, txn, lock_id, mode: started.set() if event == "wait" else None)
    done = []
    thread = threading.Thread(target=lambda: done.append(lm.lock(T2, user(1), SH)))
    thread.start()
    assert started.wait(30) and lm.waiting_on(T2) == user(1)
    assert lm.watch(lambda: lm.blocked(T2), 30) and done == []
    lm.release_all(T1)
    thread.join(30)
    assert done == [None] and lm.held(T2) == {user(1): SH}


# -- bad requests ---------------------------------------------------------------------------
@pytest.mark.parametrize("call, message", [
    (lambda lm: lm.lock(object(), user(1), EX), "needs an int attribute txn_id"),
    (lambda lm: lm.lock(Txn(True), user(1), EX), "needs an int attribute txn_id"),
    (lambda lm: lm.lock(T1, "u(1)", EX), "not a lock id"),
    (lambda lm: lm.lock(T1, user(1), "EX"), "not a lock mode"),
    (lambda lm: lm.lock(T1, user(1), EX, duration=2), "not a lock duration"),
    (lambda lm: lm.lock(T1, user(1), EX, timeout=-1), "a lock timeout is None"),
    (lambda lm: lm.unlock(T1, user(5)), "T1 holds no lock on u\\(5\\)"),
    (lambda lm: lm.set_escalation(V1, 3), "not an escalation target"),
    (lambda lm: lm.set_escalation(P48, -1), "positive integer, or 0 or None"),
])
def test_bad_requests_are_refused_and_change_nothing(lm, call, message):
    lm.lock(T1, user(1), SH)
    before = lm.dump()
    with pytest.raises(BadLockRequest, match=message) as info:
        call(lm)
    assert isinstance(info.value, UserError) and lm.dump() == before


def test_a_victim_error_names_the_cycle():
    error = DeadlockVictim("T2 is a deadlock victim", 2, 1)
    assert error.txn_id == 2 and error.other == 1 and not error.false_positive


# -- the books --------------------------------------------------------
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("escalate", [False, True])
def test_the_books_recount_right_after_every_call(seed, escalate):
    """Seeded: three transactions lock records, pages and stores in every mode and duration (a conflict
    fails at once), unlock short locks, and end; the books are recounted after every step. Also with
    escalation at 3 locks (short locks left below an escalated page: test_escalation.py)."""
    rng = random.Random(seed)
    lm = LOCK_MANAGER.call(escalation_threshold=3 if escalate else None)
    txns = [Txn(1), Txn(2), Txn(3)]
    ids = [rec(s, page) for s in range(3) for page in (48, 50)] + [P48, P50, S13, S14]
    for _ in range(300):
        txn = rng.choice(txns)
        roll = rng.random()
        if roll < 0.6:
            mode, duration = rng.choice([IS, IX, SH, SIX, UD, EX]), rng.choice([SHORT, LONG, INSTANT])
            try:
                lm.lock(txn, rng.choice(ids), mode, duration, timeout=0)  # one thread: a conflict fails
            except LockTimeout:
                pass
        elif roll < 0.9:
            short = [lid for lid, request in lm._owners[txn.txn_id].locks.items()
                     if request.duration is SHORT] if txn.txn_id in lm._owners else []
            if short:
                try:
                    lm.unlock(txn, rng.choice(short))
                except BadLockRequest:
                    pass  # it still has locks below it
        else:
            lm.release_all(txn)
        check_bookkeeping(lm)
