"""Golden text: the lock table dump, and the trace of a deadlock found by Dreadlocks."""

from minidb.pagestore import ExtentId, StoreId
from minidb.pagestore.lock import Duration, Interleaving, LockId, LockManager
from minidb.pagestore.lock.modes import EX, IX, SH, UD

from tests.pagestore.lock.helpers import P50, T1, T2, T3, T4, T5, X16, check_golden, rec


def test_lock_table_dump():
    lm = LockManager(escalation_threshold=None, fingerprint_bits=16, bits_per_fingerprint=2)
    with Interleaving(lm) as script:
        script.lock(T1, rec(2), EX)
        script.lock(T1, X16, IX)
        script.run(T1, "mark x(1.6)", lambda: lm.mark_extent(T1, ExtentId(1, 6), True))
        script.lock(T2, rec(3), SH, duration=Duration.SHORT)
        script.lock(T3, rec(3), SH)
        script.lock(T3, rec(3), EX)  # converting: waits for T2's SH
        script.lock(T4, rec(2), SH)  # waits for T1's EX
        script.lock(T5, LockId.kvl(StoreId(1, 3), b"apple"), UD)
        script.lock(T2, P50, SH, duration=Duration.INSTANT)
        text = lm.dump()
        assert "  SH  T2(SH,short) T3(SH/EX)" in text
        check_golden("locks_table.txt", text)


def test_deadlock_trace():
    lm = LockManager(escalation_threshold=None, fingerprint_bits=16, bits_per_fingerprint=2, trace=True)
    with Interleaving(lm) as script:
        script.lock(T1, rec(1), EX)
        script.lock(T2, rec(2), EX)
        script.lock(T3, rec(3), EX)
        script.lock(T1, rec(2), EX)
        script.lock(T2, rec(3), SH)
        script.lock(T3, rec(1), SH)
        script.release_all(T3)
        script.release_all(T2)
        text = "\n".join(script.log) + "\n\n" + "\n".join(lm.trace.lines) + "\n\n" + lm.dump()
        check_golden("locks_deadlock_trace.txt", text)
