"""Exercise 08b: ARIES analysis rebuilds the transaction table, the dirty page table and the redo LSN.

A checkpoint is ``(xcts, dirty)``: ``{tid: (state, last_lsn, undo_nxt)}`` and
``{page: rec_lsn}``; the log after it is a list of rows ``(lsn, tid, kind,
page, undo_nxt)``. LSNs are integers, 0 is NULL.
"""

from __future__ import annotations

UPD, RO, CLR = "update", "redo-only", "clr"
ABORT, PREPARE, FREEING, END = "abort", "prepare", "freeing-space", "end"
ACTIVE = "active"


def test_the_readme_worked_example(impl):
    xcts = {2: (ACTIVE, 40, 40), 3: (ACTIVE, 50, 50)}
    dirty = {7: 20, 8: 45}
    log = [(60, 2, UPD, 7, None), (70, 4, UPD, 9, None), (80, 3, END, None, None), (90, 2, ABORT, None, None),
           (100, 2, CLR, 7, 40), (110, 5, RO, 10, None)]
    assert impl.analysis(xcts, dirty, log) == (
        {2: ("aborting", 100, 40), 4: (ACTIVE, 70, 70), 5: (ACTIVE, 110, 0)},
        {7: 20, 8: 45, 9: 70, 10: 110},
        20)


def test_an_empty_log_after_the_checkpoint_gives_back_the_checkpoint(impl):
    xcts = {6: ("aborting", 300, 120), 9: (ACTIVE, 310, 310)}
    assert impl.analysis(xcts, {4: 150, 2: 90}, []) == (xcts, {4: 150, 2: 90}, 90)


def test_nothing_at_all_means_nothing_to_redo(impl):
    assert impl.analysis({}, {}, []) == ({}, {}, 0)


def test_transactions_that_begin_after_the_checkpoint_enter_the_table(impl):
    log = [(500, 11, UPD, 3, None), (520, 12, UPD, 4, None), (540, 11, UPD, 3, None)]
    xcts, _, _ = impl.analysis({}, {}, log)
    assert xcts == {11: (ACTIVE, 540, 540), 12: (ACTIVE, 520, 520)}


def test_an_ended_transaction_leaves_the_table(impl):
    """T1 was in the checkpoint, T2 began after it: both end, committed or rolled back."""
    log = [(200, 2, UPD, 5, None), (210, 1, FREEING, None, None), (220, 1, END, None, None),
           (230, 2, ABORT, None, None), (240, 2, CLR, 5, 0), (250, 2, END, None, None)]
    xcts, dirty, redo = impl.analysis({1: (ACTIVE, 100, 100)}, {}, log)
    assert xcts == {}
    assert dirty == {5: 200} and redo == 200  # ending changes no page: the pages stay dirty


def test_every_entry_advances_last_lsn_but_only_undoable_ones_the_undo_next(impl):
    """A redo-only entry (a page format) and an abort marker are not undone: undo-next stays."""
    log = [(400, 7, UPD, 2, None), (410, 7, RO, 3, None), (420, 7, ABORT, None, None)]
    xcts, _, _ = impl.analysis({7: (ACTIVE, 300, 300)}, {}, log)
    assert xcts == {7: ("aborting", 420, 400)}


def test_a_transaction_from_the_checkpoint_keeps_its_undo_next_until_it_logs_an_undoable_entry(impl):
    xcts, _, _ = impl.analysis({7: (ACTIVE, 300, 280)}, {}, [(410, 7, RO, 3, None)])
    assert xcts == {7: (ACTIVE, 410, 280)}


def test_a_clr_sets_undo_next_to_what_it_names_not_to_itself(impl):
    """T4 rolled back 610 and 600 (CLRs 630 and 640): next to undo is 500, then nothing."""
    log = [(600, 4, UPD, 1, None), (610, 4, UPD, 2, None), (620, 4, ABORT, None, None), (630, 4, CLR, 2, 600)]
    xcts, _, _ = impl.analysis({4: (ACTIVE, 500, 500)}, {}, log)
    assert xcts == {4: ("aborting", 630, 600)}
    xcts, _, _ = impl.analysis({4: (ACTIVE, 500, 500)}, {}, log + [(640, 4, CLR, 1, 500), (650, 4, CLR, 9, 0)])
    assert xcts == {4: ("aborting", 650, 0)}


def test_states_follow_the_markers(impl):
    log = [(100, 1, ABORT, None, None), (110, 2, PREPARE, None, None), (120, 3, FREEING, None, None)]
    xcts, _, _ = impl.analysis({1: (ACTIVE, 50, 50), 2: (ACTIVE, 60, 60), 3: (ACTIVE, 70, 70)}, {}, log)
    assert xcts == {1: ("aborting", 100, 50), 2: ("prepared", 110, 60), 3: ("freeing_space", 120, 0)}


def test_a_dirty_page_keeps_the_lsn_that_first_made_it_dirty(impl):
    log = [(100, 1, UPD, 5, None), (110, 1, UPD, 5, None), (120, 2, UPD, 5, None), (130, 2, UPD, 6, None),
           (140, 1, UPD, 6, None)]
    _, dirty, redo = impl.analysis({}, {}, log)
    assert dirty == {5: 100, 6: 130} and redo == 100


def test_a_page_dirty_at_the_checkpoint_keeps_the_checkpoints_recovery_lsn(impl):
    """Page 3 was dirty since 40 when the checkpoint was taken: its changes from 40 on may be missing."""
    _, dirty, redo = impl.analysis({}, {3: 40, 8: 90}, [(200, 1, UPD, 3, None), (210, 1, UPD, 9, None)])
    assert dirty == {3: 40, 8: 90, 9: 210} and redo == 40


def test_markers_make_no_page_dirty_and_entries_without_a_transaction_none_active(impl):
    """tid 0: a change logged outside any transaction (a page image); it is redone but never undone."""
    log = [(100, 0, RO, 4, None), (110, 1, ABORT, None, None), (120, 1, END, None, None)]
    xcts, dirty, redo = impl.analysis({}, {}, log)
    assert xcts == {} and dirty == {4: 100} and redo == 100


def test_redo_starts_at_the_smallest_recovery_lsn_whichever_the_table(impl):
    log = [(900, 5, CLR, 12, 0), (910, 6, RO, 13, None)]
    assert impl.analysis({5: ("aborting", 800, 700)}, {12: 850, 14: 870}, log)[2] == 850
    assert impl.analysis({}, {14: 870}, log[1:])[2] == 870


def test_a_longer_history_many_transactions(impl):
    """Ten transactions, each: two updates on its own pages, then committed (odd) or left running (even)."""
    log, expect_x, expect_d = [], {}, {}
    lsn = 1000
    for _ in range(2):
        for t in range(1, 11):
            lsn += 10
            log.append((lsn, t, UPD, 100 + t, None))
            expect_d.setdefault(100 + t, lsn)
            expect_x[t] = (ACTIVE, lsn, lsn)
    for t in range(1, 11, 2):
        lsn += 10
        log.append((lsn, t, FREEING, None, None))
        lsn += 10
        log.append((lsn, t, END, None, None))
        del expect_x[t]
    assert impl.analysis({}, {}, log) == (expect_x, expect_d, 1010)


# Typical wrong solutions; each must fail at least one test above (exercises/test_stubs_fail.py).
def _analysis(checkpoint_xcts, checkpoint_dirty, log, *, forget_new=False, keep_ended=False, last_rec_lsn=False,
              clr_self=False, undo_any=False, ignore_ckpt_dirty=False):
    xcts = {t: list(row) for t, row in checkpoint_xcts.items()}
    dirty = {} if ignore_ckpt_dirty else dict(checkpoint_dirty)
    states = {ABORT: "aborting", PREPARE: "prepared", FREEING: "freeing_space"}
    for lsn, tid, kind, page, undo_nxt in log:
        if tid and (tid in xcts or not forget_new):
            row = xcts.setdefault(tid, [ACTIVE, 0, 0])
            row[1] = lsn
            if kind == CLR and not clr_self:
                row[2] = undo_nxt
            elif kind in (UPD, CLR) or (undo_any and kind == RO):
                row[2] = lsn
            if kind in states:
                row[0] = states[kind]
            if kind == FREEING:
                row[2] = 0
            if kind == END and not keep_ended:
                del xcts[tid]
        if kind in (UPD, RO, CLR) and (page not in dirty or last_rec_lsn):
            dirty[page] = lsn
    return {t: tuple(r) for t, r in xcts.items()}, dirty, min(dirty.values(), default=0)


MUTANTS = {
    "transactions_begun_after_the_checkpoint_forgotten": {"analysis": lambda x, d, log: _analysis(
        x, d, log, forget_new=True)},
    "ended_transactions_kept": {"analysis": lambda x, d, log: _analysis(x, d, log, keep_ended=True)},
    "recovery_lsn_moved_to_the_latest_change": {"analysis": lambda x, d, log: _analysis(
        x, d, log, last_rec_lsn=True)},
    "clr_becomes_the_undo_next": {"analysis": lambda x, d, log: _analysis(x, d, log, clr_self=True)},
    "redo_only_entry_becomes_the_undo_next": {"analysis": lambda x, d, log: _analysis(x, d, log, undo_any=True)},
    "checkpoint_dirty_pages_dropped": {"analysis": lambda x, d, log: _analysis(x, d, log, ignore_ckpt_dirty=True)},
}


def random_cases(rng):
    """For ``minidb grade``: a random checkpoint, then a random log after it: updates, redo-only
    entries, CLRs pointing back into their transaction, markers, entries of no transaction."""
    for _ in range(200):
        lsn, xcts, dirty, log = 10, {}, {}, []
        for tid in range(1, rng.randrange(1, 5)):
            last = rng.randrange(1, 10)
            xcts[tid] = (rng.choice([ACTIVE, ACTIVE, "aborting", "prepared"]), last, rng.choice([0, last]))
        for page in rng.sample(range(1, 9), rng.randrange(0, 4)):
            dirty[page] = rng.randrange(1, 10)
        history: dict[int, list[int]] = {}
        for _ in range(rng.randrange(0, 12)):
            lsn += 10
            tid = rng.choice([0, 1, 2, 3, 4, 5])
            kind = rng.choice([UPD, UPD, RO, CLR, ABORT, PREPARE, FREEING, END]) if tid else rng.choice([UPD, RO])
            page = rng.randrange(1, 9) if kind in (UPD, RO, CLR) else None
            undo_nxt = rng.choice([0] + history.get(tid, [])) if kind == CLR else None
            log.append((lsn, tid, kind, page, undo_nxt))
            history.setdefault(tid, []).append(lsn)
        yield "analysis", (xcts, dirty, log), {}
