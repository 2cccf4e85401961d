"""Dreadlocks on real threads, scripted: cycles, upgrade deadlocks, and waits that are not deadlocks."""

import pytest

from minidb.pagestore.lock import LOCK_MANAGER, DeadlockVictim, Interleaving
from minidb.pagestore.lock.dreadlocks import bits_of, contains
from minidb.pagestore.lock.modes import EX, IS, IX, SH

from tests.pagestore.lock.helpers import T1, T2, T3, T4, rec, user


def manager(**options):
    options.setdefault("escalation_threshold", None)
    return LOCK_MANAGER.call(trace=True, **options)


def no_victims(lm):
    return lm.stats["nDeadlocks"] == 0 and lm.stats["nFalseDeadlocks"] == 0


def test_a_two_transaction_cycle_closed_by_the_younger():
    """T2 closes the cycle, finds its fingerprint in T1's digest and, being younger, is the victim."""
    lm = manager(fingerprint_bits=16, bits_per_fingerprint=2)
    with Interleaving(lm) as script:
        script.lock(T1, rec(2), EX)
        script.lock(T2, rec(3), EX)
        script.lock(T1, rec(3), EX)
        t1 = lm.snapshot().owner(1)
        t2_fp = lm.snapshot().owner(2).fingerprint
        assert t1.digest == t1.fingerprint | t2_fp  # the worked example of dreadlocks.py
        assert (bits_of(t1.fingerprint), bits_of(t2_fp)) == ((12, 15), (0, 6))
        graph = lm.waits_for()
        assert graph.cycles() == [] and graph.successors(1) == [2]
        step = script.lock(T2, rec(2), EX)
        assert step.outcome == "DeadlockVictim"
        assert step.error.txn_id == 2 and step.error.other == 1 and not step.error.false_positive
        assert "T2 found its fingerprint {0,6} in T1's digest {0,6,12,15}" in str(step.error)
        assert lm.waiting_on(T1) == rec(3) and lm.held(T2)[rec(3)] is EX  # the victim's locks stay...
        script.release_all(T2)  # ...until it aborts
        assert script.step(3).outcome == "ok"
    assert lm.stats["nDeadlocks"] == 1 and lm.stats["nVictimSelf"] == 1 and lm.stats["nFalseDeadlocks"] == 0
    assert "T2 found its fingerprint {0,6} in T1's digest {0,6,12,15}: deadlock; the younger, T2, is the victim" \
        in lm.trace.lines


def test_a_two_transaction_cycle_closed_by_the_older():
    """T1 (older) closes the cycle: it finds the cycle and makes T2, who is waiting, the victim."""
    lm = manager()
    with Interleaving(lm) as script:
        script.lock(T1, rec(2), EX)
        script.lock(T2, rec(3), EX)
        assert script.lock(T2, rec(2), EX).outcome == "blocked"
        assert script.lock(T1, rec(3), EX).outcome == "blocked"
        assert script.step(3).outcome == "DeadlockVictim"  # raised in T2's own thread
        assert lm.stats["nVictimOther"] == 1
        script.release_all(T2)
        assert script.step(4).outcome == "ok"
    assert script.log[3:6] == [" 4. T1: EX r(1.3.48.3) -> blocked",
                               "    T2: EX r(1.3.48.2) (step 3) -> DeadlockVictim",
                               " 5. T2: release all -> ok"]


def test_the_upgrade_deadlock():
    """T1 and T2 read the same page; both ask EX. T2's conversion is denied: it keeps SH."""
    lm = manager()
    with Interleaving(lm) as script:
        script.lock(T1, user(1), SH)
        script.lock(T2, user(1), SH)
        assert script.lock(T1, user(1), EX).outcome == "blocked"
        assert lm.waits_for().successors(1) == [2]
        step = script.lock(T2, user(1), EX)
        assert step.outcome == "DeadlockVictim"
        assert lm.held(T2) == {user(1): SH} and lm.snapshot().head(user(1)).requests[0].status == "converting"
        script.release_all(T2)
        assert script.step(3).outcome == "ok" and lm.held(T1) == {user(1): EX}
    assert lm.stats["nDeadlocks"] == 1 and lm.stats["nFalseDeadlocks"] == 0


def test_a_three_transaction_cycle_needs_digests_propagated():
    """T1 waits for T2 before T2 waits for T3: T1's digest is refreshed (in T1's thread) to include T3,
    so T3, closing the cycle, finds itself in T1's digest."""
    lm = manager()
    with Interleaving(lm) as script:
        for txn, slot in ((T1, 1), (T2, 2), (T3, 3)):
            script.lock(txn, rec(slot), EX)
        script.lock(T1, rec(2), EX)
        before = lm.snapshot().owner(1).digest
        script.lock(T2, rec(3), EX)
        snap = lm.snapshot()
        t3 = snap.owner(3).fingerprint
        assert not contains(before, t3) and contains(snap.owner(1).digest, t3)
        assert lm.waits_for().cycles() == []
        assert script.lock(T3, rec(1), EX).outcome == "DeadlockVictim"
        script.release_all(T3)
        assert script.step(5).outcome == "ok" and script.step(4).outcome == "blocked"
        script.release_all(T2)
        assert script.step(4).outcome == "ok"
    assert lm.stats["nDeadlocks"] == 1


def test_a_waiter_behind_a_compatible_waiter_is_no_deadlock():
    """T1 holds EX; T2 and then T3 wait for SH (T3 behind T2, compatible with it); T4 waits for a lock
    T2 holds. Chains, no cycle: nobody is a victim, and everyone gets the lock in the end."""
    lm = manager()
    with Interleaving(lm) as script:
        script.lock(T2, rec(9), SH)
        script.lock(T3, rec(8), SH)
        script.lock(T1, rec(2), EX)
        assert script.lock(T2, rec(2), SH).outcome == "blocked"
        assert script.lock(T3, rec(2), SH).outcome == "blocked"
        assert script.lock(T4, rec(9), EX).outcome == "blocked"
        assert script.lock(T1, rec(8), SH).outcome == "ok"  # T1 reads what T3 reads: no wait at all
        graph = lm.waits_for()
        assert graph.successors(3) == [1, 2] and graph.cycles() == []
        assert no_victims(lm)
        script.release_all(T1)
        assert script.step(4).outcome == script.step(5).outcome == "ok"
        script.release_all(T2)
        assert script.step(6).outcome == "ok"
    assert no_victims(lm)


def test_a_conversion_ahead_is_waited_for_and_found_in_a_cycle():
    """Shore's ticket 105: T1 SH, T2 SH converting to EX, T3 waits for SH behind the conversion;
    T1 then waits for a lock T3 holds. T3 -> T2 -> T1 -> T3 is a real cycle."""
    lm = manager()
    with Interleaving(lm) as script:
        script.lock(T3, rec(7), EX)
        script.lock(T1, rec(2), SH)
        script.lock(T2, rec(2), SH)
        assert script.lock(T2, rec(2), EX).outcome == "blocked"
        assert script.lock(T3, rec(2), SH).outcome == "blocked"
        step = script.lock(T1, rec(7), SH)
        assert step.outcome == "blocked"  # T1 closes the cycle but is the oldest: the victim is T3
        assert script.step(5).outcome == "DeadlockVictim"
        assert lm.stats["nFalseDeadlocks"] == 0
        script.release_all(T3)
        assert script.step(6).outcome == "ok"


def test_a_conversion_granted_at_once_makes_a_waiter_wait_for_it():
    """T2 waits for SH on u(1) behind T4's IX; T1's IS there was no obstacle, until T1 converts to IX
    (at once: compatible with T4). Now T2 waits for T1 too, and its digest must say so at once: when
    T1 then asks for a record T2 holds, T1 closes the cycle and finds it itself."""
    lm = manager()
    with Interleaving(lm) as script:
        script.lock(T2, rec(5), EX)
        script.lock(T1, user(1), IS)
        script.lock(T4, user(1), IX)
        assert script.lock(T2, user(1), SH).outcome == "blocked"
        assert lm.waits_for().successors(2) == [4]
        assert script.lock(T1, user(1), IX).outcome == "ok"
        graph = lm.waits_for()
        assert graph.successors(2) == [1, 4] and contains(graph.node(2).digest, graph.node(1).fingerprint)
        assert script.lock(T1, rec(5), SH).outcome == "blocked"
        assert script.step(4).outcome == "DeadlockVictim"
    assert lm.stats["nVictimOther"] == 1 and lm.stats["nDeadlocks"] == 1
    assert any(line.startswith("T1 found its fingerprint") for line in lm.trace.lines)


def test_first_come_first_served_can_make_a_real_deadlock():
    """T3's IS is compatible with T1's IX but waits behind T2's SH; T1 then waits for T3: a real cycle."""
    lm = manager()
    with Interleaving(lm) as script:
        script.lock(T3, rec(5), EX)
        script.lock(T1, user(1), IX)
        script.lock(T2, user(1), SH)
        script.lock(T3, user(1), IS)
        assert lm.waits_for().successors(3) == [2]
        script.lock(T1, rec(5), SH)
        victims = [s for s in script.steps if s.outcome == "DeadlockVictim"]
        assert [v.txn_id for v in victims] == [3] and lm.stats["nFalseDeadlocks"] == 0


def test_shared_fingerprint_bits_give_a_false_positive():
    """A bitmap of 4 bits, 2 per fingerprint: the third thread must share bits. T3 waits for T2, which
    waits for T1: T2's digest has all 4 bits, so T3 'finds' itself there without any cycle."""
    lm = manager(fingerprint_bits=4, bits_per_fingerprint=2)
    with Interleaving(lm) as script:
        script.lock(T1, rec(1), EX)
        script.lock(T2, rec(2), EX)
        script.lock(T2, rec(1), EX)
        assert lm.stats["nFingerprintCollisions"] == 0
        step = script.lock(T3, rec(2), SH)
        assert lm.stats["nFingerprintCollisions"] == 1
        assert step.outcome == "DeadlockVictim" and step.error.false_positive
        assert lm.stats["nDeadlocks"] == 1 and lm.stats["nFalseDeadlocks"] == 1
        assert "a false positive: no cycle in the waits-for graph" in str(step.error)


def test_a_false_positive_against_a_running_younger_transaction_aborts_nobody():
    """One thread works first for T2, then for T1: T2 (younger, running) is known by that thread's
    fingerprint, which is T1's own. T1 waits for T2 and 'finds itself' in T2's digest; but a running
    transaction waits for nobody, so there is no cycle: counted as a false positive, nobody aborted."""
    lm = manager()
    with Interleaving(lm) as script:
        step = script.run(T1, "lock for T2, then for T1", lambda: (lm.lock(T2, user(1), EX),
                                                                  lm.lock(T1, user(1), SH)))
        assert step.outcome == "blocked"
        assert lm.snapshot().owner(1).fingerprint == lm.snapshot().owner(2).fingerprint
        assert lm.stats["nFalseDeadlocks"] == 1 and lm.stats["nDeadlocks"] == 0
        assert lm.trace.lines[-1].endswith("but T2 is not waiting: a false positive, no victim")
        lm.release_all(T2)
        script.settle()
        assert step.outcome == "ok" and lm.held(T1) == {user(1): SH}


@pytest.mark.parametrize("order", ["older first", "younger first"])
def test_the_victim_is_always_the_younger_of_the_two(order):
    lm = manager()
    first, second = (T1, T4) if order == "older first" else (T4, T1)
    with Interleaving(lm) as script:
        script.lock(first, user(1), IX)
        script.lock(second, user(2), IX)
        script.lock(first, user(2), SH)
        script.lock(second, user(1), SH)
        victims = {s.txn_id for s in script.steps if s.outcome == "DeadlockVictim"}
        assert victims == {4}
        assert isinstance(next(s for s in script.steps if s.txn_id == 4 and s.error).error, DeadlockVictim)


def test_waits_for_graph_as_data():
    """The worked example of queue.py, as the graph the notebook draws: every edge with its reason."""
    lm = manager()
    with Interleaving(lm) as script:
        script.lock(T1, user(1), SH)
        script.lock(T2, user(1), SH)
        script.lock(T2, user(1), EX)
        script.lock(T3, user(1), SH)
        script.lock(T4, user(1), IS)
        graph = lm.waits_for()
        edges = sorted((e.waiter, e.holder, str(e.lock_id), e.holder_mode.name, e.reason) for e in graph.edges)
        assert edges == [(2, 1, "u(1)", "SH", "conflicting mode"), (3, 2, "u(1)", "SH", "conversion first"),
                         (4, 2, "u(1)", "SH", "conversion first"), (4, 3, "u(1)", "SH", "ahead in the queue")]
        assert graph.node(4).waiting_on == user(1) and graph.node(4).wanted is IS
        assert graph.node(1).waiting_on is None and graph.node(1).digest == graph.node(1).fingerprint
        for n in (2, 3, 4):  # a waiter's digest holds the fingerprints of everything it waits for
            node = graph.node(n)
            assert all(contains(node.digest, graph.node(m).fingerprint) for m in [n, *graph.successors(n)])
        assert graph.reaches(4, 1) and not graph.reaches(1, 4) and graph.cycles() == []
        assert not graph.in_cycle(4)


def test_a_new_wait_does_not_raise_the_victim_error_of_an_earlier_one():
    """A victim's request can be granted before its thread wakes (the lock was released first): the wait
    ends with the grant, and the error chosen for it stays on the request. When the same request waits
    again (a conversion), that old error must not end the new wait. (The grant that comes first is a
    matter of scheduling, so the error is left on the request by hand here, as that grant leaves it.)"""
    lm = LOCK_MANAGER.call(escalation_threshold=None)
    lm.lock(T1, user(1), SH)
    lm.lock(T2, user(1), SH)
    lm._owners[2].locks[user(1)].victim = DeadlockVictim("T2 is a deadlock victim (an earlier cycle)", 2, 3)
    with Interleaving(lm) as script:
        assert script.lock(T2, user(1), EX).outcome == "blocked"  # converting: waits for T1's SH
        script.release_all(T1)
        assert script.step(1).outcome == "ok" and lm.held(T2) == {user(1): EX}
    assert lm.stats["nDeadlocks"] == 0 and lm.stats["nVictimSelf"] == lm.stats["nVictimOther"] == 0
