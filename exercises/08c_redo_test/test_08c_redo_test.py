"""Exercise 08c: redo's test for one logged change (see README.md).

A log is a list of rows ``(lsn, kind, page)``; the disk is a dict page ->
page LSN (0: never written). ``replay`` runs redo over a log with the
implementation's test, applying what it says to redo (the page takes the
entry's LSN), and counts the pages read.
"""

from __future__ import annotations

UPD, RO, CLR = "update", "redo-only", "clr"
ABORT, PREPARE, FREEING, END = "abort", "prepare", "freeing-space", "end"


def replay(impl, log, dirty, disk):
    """Redo over ``log``: the decisions, in order, and how many times each page was read."""
    pages, reads, decisions = dict(disk), {}, []
    for lsn, kind, page in log:
        def read_page_lsn(page=page):
            reads[page] = reads.get(page, 0) + 1
            return pages[page]
        decision = impl.redo_test(lsn, kind, page, dirty, read_page_lsn)
        if decision == "redo":
            pages[page] = lsn
        decisions.append(decision)
    return decisions, reads


def must_not_read():
    raise AssertionError("this page must not be read")


def test_the_readme_worked_example(impl):
    dirty = {12: 300, 13: 600}
    disk = {12: 280, 13: 600, 1: 500}
    log = [(200, UPD, 12), (300, UPD, 12), (420, UPD, 1), (450, ABORT, None), (600, UPD, 13), (650, CLR, 12),
           (700, UPD, 13)]
    decisions, reads = replay(impl, log, dirty, disk)
    assert decisions == ["before rec_lsn", "redo", "not dirty", "not redoable", "page newer", "redo", "redo"]
    assert reads == {12: 2, 13: 2}


def test_markers_change_no_page_and_are_not_redone(impl):
    for kind in (ABORT, PREPARE, FREEING, END):
        assert impl.redo_test(500, kind, None, {4: 100}, must_not_read) == "not redoable"


def test_a_page_not_in_the_dirty_page_table_is_never_read(impl):
    """Its changes all reached the disk; reading it would cost a read, or meet a damaged page."""
    assert impl.redo_test(500, UPD, 9, {4: 100}, must_not_read) == "not dirty"
    assert impl.redo_test(500, UPD, 9, {}, must_not_read) == "not dirty"


def test_a_change_older_than_the_recovery_lsn_is_skipped_without_reading_the_page(impl):
    assert impl.redo_test(199, UPD, 4, {4: 200}, must_not_read) == "before rec_lsn"


def test_the_change_at_the_recovery_lsn_itself_may_be_missing(impl):
    """The recovery LSN is the first change the page on disk may lack: it is tested against the page."""
    assert impl.redo_test(200, UPD, 4, {4: 200}, lambda: 150) == "redo"
    assert impl.redo_test(200, UPD, 4, {4: 200}, lambda: 200) == "page newer"


def test_a_page_that_already_has_the_change_is_not_changed_twice(impl):
    """Page LSN equal to the entry's: this very change was the last one written to the page."""
    assert impl.redo_test(300, UPD, 4, {4: 200}, lambda: 300) == "page newer"
    assert impl.redo_test(300, UPD, 4, {4: 200}, lambda: 350) == "page newer"
    assert impl.redo_test(300, UPD, 4, {4: 200}, lambda: 299) == "redo"


def test_a_page_never_written_gets_every_change(impl):
    assert impl.redo_test(300, RO, 4, {4: 300}, lambda: 0) == "redo"


def test_history_is_repeated_clrs_and_redo_only_entries_included(impl):
    """Redo does not ask whose change it is, nor whether it will be undone: CLRs and formats are redone."""
    log = [(100, RO, 5), (110, UPD, 5), (120, CLR, 5), (130, CLR, 6)]
    decisions, reads = replay(impl, log, {5: 100, 6: 130}, {5: 0, 6: 0})
    assert decisions == ["redo", "redo", "redo", "redo"]
    assert reads == {5: 3, 6: 1}


def test_the_page_is_read_once_per_entry_at_most(impl):
    log = [(100 + 10 * i, UPD, 7) for i in range(6)]
    decisions, reads = replay(impl, log, {7: 120}, {7: 130})
    assert decisions == ["before rec_lsn", "before rec_lsn", "page newer", "page newer", "redo", "redo"]
    assert reads == {7: 4}


def test_a_longer_redo_pass(impl):
    """Pages 0..9: page p is dirty since 1000 + 10p and was written at 1000 + 30p; three changes each."""
    dirty = {p: 1000 + 10 * p for p in range(10)}
    disk = {p: 1000 + 30 * p for p in range(10)}
    log = sorted((1000 + 10 * p + d, UPD, p) for p in range(10) for d in (0, 25, 300))
    decisions, _ = replay(impl, log, dirty, disk)
    for (lsn, _, p), decision in zip(log, decisions, strict=True):
        assert decision == ("redo" if lsn > disk[p] else "page newer"), (lsn, p)


# Typical wrong solutions; each must fail at least one test above (exercises/test_stubs_fail.py).
def _redo_test(lsn, kind, page, dirty, read_page_lsn, *, clr_not_redone=False, read_first=False,
               rec_lsn_inclusive=False, equal_redone=False):
    redoable = (UPD, RO) if clr_not_redone else (UPD, RO, CLR)
    if kind not in redoable:
        return "not redoable"
    page_lsn = read_page_lsn() if read_first else None
    if page not in dirty:
        return "not dirty"
    if lsn < dirty[page] or (rec_lsn_inclusive and lsn == dirty[page]):
        return "before rec_lsn"
    page_lsn = read_page_lsn() if page_lsn is None else page_lsn
    return "redo" if page_lsn < lsn or (equal_redone and page_lsn == lsn) else "page newer"


MUTANTS = {
    "clrs_not_redone": {"redo_test": lambda *a: _redo_test(*a, clr_not_redone=True)},
    "page_read_before_the_tables_are_asked": {"redo_test": lambda *a: _redo_test(*a, read_first=True)},
    "change_at_the_recovery_lsn_skipped": {"redo_test": lambda *a: _redo_test(*a, rec_lsn_inclusive=True)},
    "change_redone_on_a_page_that_has_it": {"redo_test": lambda *a: _redo_test(*a, equal_redone=True)},
}


class PageLsn:
    """``read_page_lsn`` for ``minidb grade``: the page LSN a read would find."""

    def __init__(self, page_lsn):
        self.page_lsn = page_lsn

    def __call__(self):
        return self.page_lsn


def random_cases(rng):
    """For ``minidb grade``: one logged change of every kind, a random dirty page table and page LSN."""
    for _ in range(300):
        kind = rng.choice([UPD, UPD, RO, CLR, ABORT, PREPARE, FREEING, END])
        page = rng.randrange(1, 6) if kind in (UPD, RO, CLR) else None
        lsn = rng.randrange(1, 40) * 10
        dirty = {p: rng.randrange(1, 40) * 10 for p in rng.sample(range(1, 6), rng.randrange(0, 5))}
        page_lsn = rng.choice([0, lsn, lsn - 10, lsn + 10, rng.randrange(0, 40) * 10])
        yield "redo_test", (lsn, kind, page, dirty, PageLsn(max(0, page_lsn))), {}
