"""A lock's queue, without threads: first come first served, conversions first, who waits for whom."""

from minidb.pagestore.lock.lockid import LockId
from minidb.pagestore.lock.modes import EX, IS, IX, SH, UD
from minidb.pagestore.lock.queue import AHEAD, CONVERSION, HOLDS, LockHead, new_request

from tests.pagestore.lock.helpers import T1, T2, T3, T4, T5


def head_with(*entries):
    """entries: (txn, mode, 'granted'|'waiting'|('converting', mode))."""
    head = LockHead(LockId.user(1))
    requests = []
    for txn, mode, status in entries:
        request = new_request(txn, head, mode, waiting=status == "waiting")
        if isinstance(status, tuple):
            head.start_conversion(request, status[1])
        requests.append(request)
    return head, requests


def names(requests):
    return [f"T{r.txn_id}" for r in requests]


def test_a_new_request_does_not_overtake_a_waiter():
    head, _ = head_with((T1, SH, "granted"), (T2, EX, "waiting"))
    assert head.compatible_with_holders(SH)  # compatible with T1...
    assert not head.can_grant_new(SH)  # ...but T2 came first
    head2, _ = head_with((T1, SH, "granted"))
    assert head2.can_grant_new(SH) and not head2.can_grant_new(IX)


def test_fifo_wakeup_stops_at_the_first_request_that_does_not_fit():
    head, (t1, t2, t3, t4, t5) = head_with((T1, EX, "granted"), (T2, SH, "waiting"), (T3, SH, "waiting"),
                                           (T4, EX, "waiting"), (T5, SH, "waiting"))
    head.remove(t1)
    assert names(head.wakeup()) == ["T2", "T3"]  # T5's SH would fit, but T4 is ahead of it
    head.remove(t2)
    head.remove(t3)
    assert names(head.wakeup()) == ["T4"]
    head.remove(t4)
    assert names(head.wakeup()) == ["T5"] and head.n_waiting == 0


def test_conversions_first():
    """T1 and T2 hold SH; T3 waits for EX; T2 asks to convert to EX: when T1 leaves,
    T2's conversion goes before T3, who came earlier."""
    head, (t1, t2, t3) = head_with((T1, SH, "granted"), (T2, SH, "granted"), (T3, EX, "waiting"))
    head.start_conversion(t2, EX)
    assert head.wakeup() == []
    head.remove(t1)
    assert names(head.wakeup()) == ["T2"] and t2.mode is EX
    head.remove(t2)
    assert names(head.wakeup()) == ["T3"]


def test_a_pending_conversion_holds_back_every_waiter():
    """T1 SH, T2 SH converting to EX, T3 asks IS: IS fits both granted modes, but waits."""
    head, (t1, t2, t3) = head_with((T1, SH, "granted"), (T2, SH, ("converting", EX)), (T3, IS, "waiting"))
    assert head.wakeup() == []
    assert head.blockers(t3) == [(t2, CONVERSION)]
    assert head.blockers(t2) == [(t1, HOLDS)]


def test_blockers_of_the_worked_example():
    head, (t1, t2, t3, t4) = head_with((T1, SH, "granted"), (T2, SH, ("converting", EX)), (T3, SH, "waiting"),
                                       (T4, IS, "waiting"))
    assert head.blockers(t1) == []
    assert head.blockers(t2) == [(t1, HOLDS)]
    assert head.blockers(t3) == [(t2, CONVERSION)]
    assert head.blockers(t4) == [(t2, CONVERSION), (t3, AHEAD)]


def test_a_waiter_behind_a_compatible_waiter_waits_for_it_and_the_holder():
    head, (t1, t2, t3) = head_with((T1, EX, "granted"), (T2, SH, "waiting"), (T3, SH, "waiting"))
    assert head.blockers(t2) == [(t1, HOLDS)]
    assert head.blockers(t3) == [(t1, HOLDS), (t2, AHEAD)]


def test_compatibility_is_checked_per_holder_not_against_the_supremum():
    """T1 IS and T2 SH: the supremum is SH, and UD is compatible with SH; yet UD conflicts with IS."""
    head, _ = head_with((T1, IS, "granted"), (T2, SH, "granted"))
    assert head.granted_mode is SH
    assert not head.can_grant_new(UD)
    head2, _ = head_with((T2, SH, "granted"))
    assert head2.can_grant_new(UD)


def test_cancel_leaves_the_queue_or_keeps_the_old_mode():
    head, (t1, t2, t3) = head_with((T1, SH, "granted"), (T2, SH, ("converting", EX)), (T3, EX, "waiting"))
    head.cancel(t2)
    assert t2.mode is SH and t2.convert_mode is None and t2.status.value == "granted"
    head.cancel(t3)
    assert names(head.queue) == ["T1", "T2"] and head.n_waiting == 0


def test_describe_like_shores_dump():
    head, _ = head_with((T1, SH, "granted"), (T2, SH, ("converting", EX)), (T3, EX, "waiting"))
    assert head.describe() == "u(1):SH queue: {T1(SH) T2(SH/EX) T3(EX*)}"
    assert head.find(2).mode is SH and head.find(9) is None
