"""Exercise 08a: the undo pass's order over the losers' chains (see README.md).

Logs are written as rows ``lsn: (tid, kind, prev, undo_nxt)``; LSNs are
integers, 0 is NULL.
"""

import random

U, C, R = "undoable", "clr", "redo-only"


def test_the_readme_worked_example(impl):
    log = {100: (2, U, 0, None), 120: (5, U, 0, None), 140: (2, R, 100, None), 160: (5, U, 120, None),
           180: (2, U, 140, None), 200: (5, C, 160, 120)}
    assert impl.undo_order({2: 180, 5: 200}, log) == [
        (5, 200, "jumped"), (2, 180, "undone"), (2, 140, "skipped"), (5, 120, "undone"), (2, 100, "undone")]


def test_one_loser_is_undone_newest_first(impl):
    log = {10: (1, U, 0, None), 20: (1, U, 10, None), 30: (1, U, 20, None)}
    assert impl.undo_order({1: 30}, log) == [(1, 30, "undone"), (1, 20, "undone"), (1, 10, "undone")]


def test_two_losers_interleave_in_strictly_reverse_lsn_order(impl):
    """Not T1 then T2, nor T2 then T1: always the largest pending LSN."""
    log = {10: (1, U, 0, None), 20: (2, U, 0, None), 30: (1, U, 10, None), 40: (2, U, 20, None),
           50: (1, U, 30, None)}
    order = impl.undo_order({1: 50, 2: 40}, log)
    assert [lsn for _, lsn, _ in order] == [50, 40, 30, 20, 10]
    assert [tid for tid, _, _ in order] == [1, 2, 1, 2, 1]


def test_a_clr_jumps_over_what_it_compensates(impl):
    """T3 had undone 40 and 30 before the crash (CLRs 50 and 60); only 20 and 10 are left."""
    log = {10: (3, U, 0, None), 20: (3, U, 10, None), 30: (3, U, 20, None), 40: (3, U, 30, None),
           50: (3, C, 40, 30), 60: (3, C, 50, 20)}
    assert impl.undo_order({3: 60}, log) == [(3, 60, "jumped"), (3, 20, "undone"), (3, 10, "undone")]


def test_a_clr_with_a_null_undo_next_ends_the_loser(impl):
    """A rollback that had finished all but its xct_end: nothing is left to undo."""
    log = {10: (4, U, 0, None), 20: (4, C, 10, 0)}
    assert impl.undo_order({4: 20}, log) == [(4, 20, "jumped")]


def test_redo_only_entries_are_passed_over_not_undone(impl):
    log = {10: (6, U, 0, None), 20: (6, R, 10, None), 30: (6, R, 20, None), 40: (6, U, 30, None)}
    assert impl.undo_order({6: 40}, log) == [(6, 40, "undone"), (6, 30, "skipped"), (6, 20, "skipped"),
                                             (6, 10, "undone")]


def test_a_loser_with_nothing_to_undo_takes_no_step(impl):
    log = {10: (1, U, 0, None)}
    assert impl.undo_order({1: 10, 7: 0}, log) == [(1, 10, "undone")]
    assert impl.undo_order({}, {}) == []


def test_entries_of_committed_transactions_are_never_read(impl):
    """T9 committed: its entries sit between the losers' but are not on any loser's chain."""
    log = {10: (1, U, 0, None), 20: (9, U, 0, None), 30: (9, U, 20, None), 40: (1, U, 10, None)}
    assert impl.undo_order({1: 40}, log) == [(1, 40, "undone"), (1, 10, "undone")]


def test_a_clr_jump_can_let_another_loser_go_first(impl):
    """T1's CLR at 90 jumps back to 15: T2's 50 and 30 come before T1's 15."""
    log = {15: (1, U, 0, None), 30: (2, U, 0, None), 50: (2, U, 30, None), 70: (1, U, 15, None),
           90: (1, C, 70, 15)}
    assert impl.undo_order({1: 90, 2: 50}, log) == [(1, 90, "jumped"), (2, 50, "undone"), (2, 30, "undone"),
                                                    (1, 15, "undone")]


def test_many_random_losers_give_decreasing_lsns_and_cover_every_chain(impl):
    rng = random.Random(6)
    log, last = {}, {}
    for lsn in range(10, 2000, 10):
        tid = rng.randrange(1, 8)
        kind = U if rng.random() < 0.8 else R
        log[lsn] = (tid, kind, last.get(tid, 0), None)
        last[tid] = lsn
    order = impl.undo_order(dict(last), log)
    lsns = [lsn for _, lsn, _ in order]
    assert lsns == sorted(lsns, reverse=True) and set(lsns) == set(log)
    assert all(log[lsn][0] == tid for tid, lsn, _ in order)
    assert [a for _, lsn, a in order] == ["undone" if log[lsn][1] == U else "skipped" for lsn in lsns]


def _walk(losers, log, *, clr_next="undo_nxt", one_at_a_time=False, redo_only="skipped"):
    """A walker for the named mistakes below (the right rules, unless told otherwise)."""
    pending = {tid: lsn for tid, lsn in losers.items() if lsn}
    order = []
    while pending:
        tid = min(pending) if one_at_a_time else max(pending, key=pending.get)
        lsn = pending.pop(tid)
        owner, kind, prev, undo_nxt = log[lsn]
        if kind == C:
            action, following = "jumped", undo_nxt if clr_next == "undo_nxt" else prev
        else:
            action, following = ("undone" if kind == U else redo_only), prev
        order.append((tid, lsn, action))
        if following:
            pending[tid] = following
    return order


# Typical wrong solutions (exercises/test_stubs_fail.py requires each to fail a test).
MUTANTS = {
    "one_loser_after_another": {"undo_order": lambda losers, log: _walk(losers, log, one_at_a_time=True)},
    "a_clr_goes_on_to_its_prev": {"undo_order": lambda losers, log: _walk(losers, log, clr_next="prev")},
    "redo_only_entries_are_undone": {"undo_order": lambda losers, log: _walk(losers, log, redo_only="undone")},
}


def random_cases(rng):
    """For ``minidb grade``: random logs of several transactions, with partial rollbacks (CLRs)."""
    for _ in range(200):
        log, last, undo_next = {}, {}, {}
        for lsn in range(10, rng.randrange(20, 400), 10):
            tid = rng.randrange(1, 6)
            following = undo_next.get(tid, 0)
            if following and rng.random() < 0.25:  # compensate the entry undo would take next
                _, kind, prev, clr_next = log[following]
                after = clr_next if kind == C else prev
                log[lsn] = (tid, C, last.get(tid, 0), after)
                undo_next[tid] = after
            else:
                log[lsn] = (tid, U if rng.random() < 0.8 else R, last.get(tid, 0), None)
                undo_next[tid] = lsn
            last[tid] = lsn
        losers = {tid: lsn for tid, lsn in last.items() if rng.random() < 0.7}
        yield "undo_order", (losers, log), {}
