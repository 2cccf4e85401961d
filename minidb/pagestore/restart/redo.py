"""Restart, pass 2: redo. Repeat history from the redo LSN, so the pages are as at the crash.

Redo reads the log forward from the redo LSN (analysis' smallest recovery
LSN) and, for each entry, decides (ARIES' test, Shore's "general protocol"):

1. not redoable (no flag R): ignored;
2. its page is not in the dirty page table, or the entry is older than the
   page's recovery LSN: the page on disk already has it, *skipped* without
   reading the page;
3. otherwise the page is fixed; if the *page LSN* is older than the entry,
   the entry's redo handler (the one that made the change in the first
   place) applies it and the page takes the entry's LSN: *redone*; if not,
   the page was written after the change: *skipped*.

The test is one pure function, :func:`redo_decision`, which reads the page
(through a callback) only in step 3; :func:`redo_pass` calls it for every
entry, in log order, fixing the entry's page only when the test asks for its
page LSN, and applies what it decided (:func:`redo_entry`; exercise 08c asks
for the same function). Every redoable entry changes its own page only, with
the handler that made the change in the first place
(:data:`~minidb.pagestore.wal.logrec.REDO`), so doing and redoing are one
code path.

Redo repeats *all* history, losers' entries and CLRs included; undo comes
after. It logs nothing; pages it changes are dirty in the pool and written
by the usual rules (the write-ahead rule holds: their LSNs are in the log).

**Torn pages.** A page whose last write reached the disk only in part
cannot be redone from; redo fixes every page through
:func:`~minidb.pagestore.restart.repair.fix_or_repair`, which rebuilds a torn
page from its newest image at or after its recovery LSN, and after the scan
reads the pages no entry made it fix
(:func:`~minidb.pagestore.restart.repair.read_other_pages`), so no torn page
is left behind. A bad page with no image to rebuild it from is corruption,
named, never silently replaced.

Redo changes pages without logging, so the pages it dirties have no image
at their recovery LSN: restart writes them all before its checkpoint
(:mod:`minidb.pagestore.restart`), and until that checkpoint the log is
kept from this redo LSN.

Worked example: dirty page table {p(1.3.12): 0x1/0x3a0, p(1.3.13):
0x1/0x600}, redo LSN 0x1/0x3a0. Entry 0x1/0x3a0 on p(1.3.12), whose page LSN
on disk is 0x1/0x280: redone. Entry 0x1/0x420 on p(1.0.1), not in the table:
skipped. Entry 0x1/0x600 on p(1.3.13), page LSN 0x1/0x600 (written after
it): skipped. Had p(1.3.13) been torn on disk, the entry at 0x1/0x600 (the
``page_image`` that made it dirty) would have been found by a scan from
0x1/0x600, restored, and the page's later entries redone on it.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from minidb import impl
from minidb.log.lsn import LSN
from minidb.log.types import EntryType
from minidb.pagestore.ids import PageId
from minidb.pagestore.restart.repair import fix_or_repair, read_other_pages, rebuild_page
from minidb.pagestore.restart.results import AnalysisResult, PageRepair, RedoResult
from minidb.pagestore.wal.logdef import PAGESTORE_TYPES
from minidb.pagestore.wal.logrec import REDO
from minidb.stats import Trace

__all__ = ["redo_pass", "redo_entry", "redo_decision", "REDO_PASS", "REDO_TEST", "RedoResult", "PageRepair",
           "fix_or_repair", "read_other_pages", "rebuild_page"]


def redo_pass(log: Any, volume: Any, result: AnalysisResult, trace: Trace | None = None) -> RedoResult:
    """Pass 2 (see the module documentation): every entry from the redo LSN on, through :func:`redo_entry`,
    then the pages no entry made redo read (:func:`read_other_pages`)."""
    trace = trace if trace is not None else Trace(enabled=False)
    done = RedoResult(result.redo_lsn)
    seen: set[tuple[int, int]] = set()  # the pages redo fixed
    if result.redo_lsn.is_null:
        trace.emit("redo: the dirty page table is empty: nothing to redo")
    else:
        trace.emit("redo: from %s", result.redo_lsn)
        fix = lambda pid: fix_or_repair(log, volume, pid, result.dirty_pages, done, trace)  # noqa: E731
        for entry in log.scan(result.redo_lsn):
            done.entries_read += 1
            redo_entry(entry.lsn, entry.entry_type, entry.values, fix, volume.bp, result.dirty_pages, done, seen,
                       trace)
    read_other_pages(log, volume, result.dirty_pages, done, seen, trace)
    trace.emit("%s", done.summary())
    return done


def redo_entry(lsn: LSN, entry_type: EntryType | None, values: dict[str, Any], fix: Callable[[PageId], Any],
               bp: Any, dirty: Mapping[tuple[int, int], Any], done: RedoResult, seen: set[tuple[int, int]],
               trace: Trace) -> None:
    """One entry of redo: ask :data:`REDO_TEST`, which fixes the entry's page (``fix``) only to read its
    page LSN; apply the change if the page is older; count and trace the decision; unfix the page."""
    pid = PageId(values["vol"], values["store"], values["page"]) if "page" in values else None
    page = None

    def read_page_lsn() -> LSN:
        nonlocal page
        if page is None:
            page = fix(pid)
        return page.lsn

    decision = None
    try:
        decision = REDO_TEST.call(lsn, entry_type, values, dirty, read_page_lsn)  # exercise 08c's one call site
        if decision == NOT_REDOABLE:
            return
        done.decisions.append((lsn, "redone" if decision == APPLY else "skipped"))
        if decision in (NOT_DIRTY, BEFORE_REC_LSN):
            done.skipped_not_dirty += 1
            if decision == NOT_DIRTY:
                trace.emit("redo: %s %s %s: not in the dirty page table: skipped", lsn, entry_type.name, pid)
            else:
                trace.emit("redo: %s %s %s: older than rec_lsn %s: skipped", lsn, entry_type.name, pid,
                           dirty[pid.key].rec_lsn)
            return
        page_lsn = read_page_lsn()  # the page is fixed now, if the test decided without it
        seen.add(pid.key)
        if decision == APPLY:
            REDO[entry_type.name](page, values)
            page.lsn = lsn
            bp.lower_rec_lsn(page, lsn)  # dirty since its first entry redone, not since it was fixed
            done.redone += 1
            trace.emit("redo: %s %s %s: page LSN %s is older: redone", lsn, entry_type.name, pid, page_lsn)
        else:
            done.skipped_page_newer += 1
            trace.emit("redo: %s %s %s: page LSN %s is not older: skipped", lsn, entry_type.name, pid, page_lsn)
    finally:
        if page is not None:
            bp.unfix(page, dirty=decision == APPLY)


NOT_REDOABLE, NOT_DIRTY, BEFORE_REC_LSN, PAGE_NEWER, APPLY = (
    "not redoable", "not dirty", "before rec_lsn", "page newer", "redo")


def redo_decision(lsn: LSN, entry_type: EntryType | None, values: dict[str, Any], dirty: Mapping[tuple[int, int], Any],
                  read_page_lsn: Callable[[], LSN]) -> str:
    """Redo's test for the entry at ``lsn``: whether its change must be applied to its page again.

    ``dirty`` is analysis' dirty page table (``(vol, page)`` -> a row with
    ``rec_lsn``); ``read_page_lsn`` fixes the entry's page and returns its
    page LSN, and is called only when the tables cannot decide (a page not
    in the table may be damaged, and is never read here). Returns
    NOT_REDOABLE (not a page-store entry with flag R), NOT_DIRTY,
    BEFORE_REC_LSN (both: the page on disk has the change), PAGE_NEWER (the
    page was written after the change) or APPLY (redo it).
    """
    if entry_type is None or not entry_type.redoable or entry_type.owner != PAGESTORE_TYPES.owner:
        return NOT_REDOABLE
    known = dirty.get((values["vol"], values["page"]))
    if known is None:
        return NOT_DIRTY
    if lsn < known.rec_lsn:
        return BEFORE_REC_LSN
    return APPLY if read_page_lsn() < lsn else PAGE_NEWER


#: exercise 08c's kind of a page-store entry that changes no page, by name (other such entries: "end")
MARKER_KINDS = {"xct_abort": "abort", "xct_prepare_fi": "prepare", "xct_freeing_space": "freeing-space"}
DECISIONS = (NOT_REDOABLE, NOT_DIRTY, BEFORE_REC_LSN, PAGE_NEWER, APPLY)


def exercise_kind(entry_type: EntryType | None) -> str:
    """Exercise 08c's kind for an entry type, by its flags: a CLR, an update (undoable), a redo-only entry,
    or a marker that changes no page (any entry not redoable, another layer's included)."""
    if entry_type is not None and entry_type.redoable and entry_type.owner == PAGESTORE_TYPES.owner:
        return "clr" if entry_type.compensation else "update" if entry_type.undoable else "redo-only"
    return MARKER_KINDS.get(entry_type.name if entry_type is not None else "", "end")


def _redo_from_exercise(hook: impl.Hook, student: Callable) -> Callable[..., str]:
    """A student's ``redo_test`` (exercise 08c: LSNs as ``LSN.packed``, a page number, the dirty page table of
    the entry's volume as ``{page: rec_lsn}``), its answer checked to be one of the five decisions."""
    def decide(lsn: LSN, entry_type: EntryType | None, values: dict[str, Any], dirty: Mapping[tuple[int, int], Any],
               read_page_lsn: Callable[[], LSN]) -> str:
        kind = exercise_kind(entry_type)
        page = values["page"] if kind in ("update", "redo-only", "clr") else None
        table = {p: row.rec_lsn.packed for (vol, p), row in dirty.items() if page is not None and vol == values["vol"]}
        answer = student(lsn.packed, kind, page, table, impl.engine_callback(lambda: read_page_lsn().packed))
        if answer not in DECISIONS:
            raise hook.wrong(f"returned {answer!r}, not one of {', '.join(map(repr, DECISIONS))}")
        return answer
    return decide


#: where :func:`redo_entry` asks :func:`redo_decision` (exercise 08c's hook)
REDO_TEST = impl.register("08c_redo_test", "redo_test", redo_decision, _redo_from_exercise)


#: pass 2, as restart runs it
REDO_PASS = impl.hot_spot(redo_pass)
