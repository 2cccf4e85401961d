"""ARIES restart of the page store as problems: analysis, redo and undo on one crashed log.

The scenario (:func:`crash`): a volume of 64 pages of 512 bytes with a
buffer pool of four frames. T1 creates a file of six records (three a page:
two data pages) and commits; the pages are written. Then, drawn from the
seed, two transactions update records (the page cleaner may write one of
the pages in between), a fuzzy checkpoint is taken while they run (its
``chkpt_xct_tab`` and ``chkpt_bf_tab`` are part of the problem), and more
steps follow: updates, new transactions, a commit, an abort (its rollback
logs CLRs), the page cleaner writing one dirty page or all of them. The log
is flushed and the disk crashes keeping everything that reached it; the
volume is opened without restarting. The analysis problem shows the log
from the master checkpoint on (what analysis reads); the redo problem the
dirty page table, each page's LSN on the crashed disk and the log from the
redo LSN; the undo problem the transaction table and the log since T1's
setup (the losers' whole chains).

A clean page that becomes dirty logs its image first (``page_image``, the
page's recovery LSN), so a page written by the cleaner and changed again
enters the dirty page table later than its older entries: redo skips those
as older than the recovery LSN, or as not dirty at all.

The answers are the passes themselves (:class:`~minidb.pagestore.restart.restart.Restart`,
one pass at a time) and their traces: analysis' tables, redo's decision for
each entry with its reason, undo's visits and the CLRs it logged, each CLR's
``undo_nxt`` read back from the log.
"""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from minidb.io import CrashMode, SimDisk
from minidb.log.lsn import LSN
from minidb.pagestore.ids import PageId
from minidb.pagestore.pages.page import Page
from minidb.pagestore.sm import StorageManager
from minidb.pagestore.volume.volfile import volume_file_name
from minidb.quiz import Quiz
from minidb.quiz.text import numbered, table

NUM_PAGES, EXT_SZ, PAGE_SIZE, FRAMES, LOG_BUFFER = 64, 4, 512, 4, 256
RECORDS, RECORD_SIZE = 6, 120  # three records a page: two data pages


def _clock() -> float:
    return 1_700_000_000.0


@dataclass
class Crash:
    """A crashed disk and what the workload did before the crash (one line per step)."""

    disk: SimDisk
    steps: list[str]
    start: LSN  # the workload's first entry (after T1's setup)

    def open(self) -> StorageManager:
        """The crashed volume opened without restarting (each call a fresh copy of the disk)."""
        return StorageManager.open(self.disk.clone(), frames=FRAMES, restart=False, clock=_clock,
                                   buffer_size=LOG_BUFFER)


def crash(seed: int) -> Crash:
    """Run the workload this seed draws (see the module documentation) and crash the disk at its end."""
    rng = Random(seed)
    disk = SimDisk(f"quiz-{seed}")
    sm = StorageManager.format(disk, num_pages=NUM_PAGES, ext_sz=EXT_SZ, page_size=PAGE_SIZE, frames=FRAMES,
                               clock=_clock, buffer_size=LOG_BUFFER)
    with sm.transaction() as t1:
        fid = sm.create_file(t1)
        rids = [sm.create_rec(t1, fid, bytes([97 + i]) * RECORD_SIZE) for i in range(RECORDS)]
    sm.bp.force_all()
    start = sm.log.end_lsn
    steps: list[str] = []
    active: dict[int, object] = {}

    def begin() -> None:
        xct = sm.begin()
        active[xct.tid] = xct
        steps.append(f"T{xct.tid} begins")

    def update() -> None:
        tid = rng.choice(sorted(active))
        rid = rng.choice(rids)
        data = bytes([65 + rng.randrange(26)])
        sm.update_rec(active[tid], rid, rng.randrange(4), data)
        steps.append(f"T{tid} updates {rid}")

    def clean_one() -> None:  # the page cleaner writes one dirty page (the others stay dirty)
        dirty = sorted(sm.bp.dirty_page_table())
        if dirty:
            page = rng.choice(dirty)
            sm.bp.clean(select=lambda frame: frame.pid == page)
            steps.append(f"the page cleaner writes {page} (only that page)")

    for _ in range(2):
        begin()
    updates = rng.randint(2, 4)
    clean_at = rng.randint(1, updates) if rng.random() < 0.6 else None  # after that many updates
    for i in range(1, updates + 1):
        update()
        if i == clean_at:
            clean_one()
    sm.checkpoint()
    steps.append("fuzzy checkpoint (the master LSN is its chkpt_begin)")
    cleaned = False
    for _ in range(rng.randint(5, 7)):
        roll = rng.random()
        if roll < 0.15 and len(active) < 4:
            begin()
        elif roll < 0.25 and not cleaned:
            if rng.random() < 0.5:
                sm.bp.clean()
                steps.append("the page cleaner writes every dirty page")
            else:
                clean_one()
            cleaned = True
        elif roll < 0.35 and len(active) > 1:
            tid = rng.choice(sorted(active))
            sm.commit(active.pop(tid))
            steps.append(f"T{tid} commits")
        elif roll < 0.45 and len(active) > 1:
            tid = rng.choice(sorted(active))
            sm.abort(active.pop(tid))
            steps.append(f"T{tid} aborts (its rollback logs CLRs)")
        else:
            update()
    sm.log.flush()
    steps.append("crash (the log was flushed; pages not written are lost)")
    return Crash(disk.crash_image(len(disk.events) - 1, CrashMode.everything()), steps, start)


def _page(v: dict) -> PageId:
    return PageId(v["vol"], v["store"], v["page"])


def log_table(sm: StorageManager, start: LSN) -> str:
    """The page store's entries from ``start``: LSN, transaction, type, page, prev LSN, and what a
    checkpoint or CLR adds (the tables, the undo-next)."""
    rows = []
    for entry in sm.log.scan(start):
        entry_type, v = entry.entry_type, entry.values
        if entry_type is None or entry_type.owner != "pagestore":
            continue
        note = ""
        if entry_type.name == "chkpt_xct_tab":
            note = "; ".join(f"T{x['tid']} {_state(x['state'])} last={x['last_lsn']} undo_nxt={x['undo_nxt']}"
                             for x in v["xcts"]) or "no transactions"
        elif entry_type.name == "chkpt_bf_tab":
            note = "; ".join(f"{PageId(p['vol'], p['store'], p['page'])} rec_lsn={p['rec_lsn']}"
                             for p in v["pages"]) or "no dirty pages"
        elif entry_type.compensation:
            note = f"undo_nxt={v['undo_nxt']}"
        elif entry_type.name == "xct_end":
            note = "committed" if v["committed"] else "aborted"
        tid = v.get("txn_id", 0)
        rows.append((entry.lsn, f"T{tid}" if tid else "-", entry_type.name,
                     _page(v) if entry_type.redoable else "-", v.get("txn_prev_lsn", "-") if tid else "-", note))
    return table(("LSN", "txn", "type", "page", "prev LSN", "notes"), rows)


def _state(code: int) -> str:
    from minidb.pagestore.transactions.xct import XctState
    return XctState(code).name


def _scenario(c: Crash) -> str:
    return "The workload, after T1 created a file of six records, committed, and its pages were written:\n\n" + \
        numbered(c.steps)


def xct_rows(table_: dict) -> list[tuple]:
    return [(f"T{x.tid}", x.state.name, x.last_lsn, x.undo_nxt) for _, x in sorted(table_.items())]


def dirty_rows(dirty: dict) -> list[tuple]:
    return [(d.pid, d.rec_lsn) for _, d in sorted(dirty.items())]


def build_aries_analysis(seed: int) -> Quiz:
    c = crash(seed)
    sm = c.open()
    restart = sm.restart
    problem = (f"{_scenario(c)}\n\nThe log from the master checkpoint ({restart.master}) to the crash:\n\n"
               f"{log_table(sm, restart.master)}\n\n"
               "Run ARIES analysis: what are the transaction table (state, last LSN, undo-next) and the dirty "
               "page table (recovery LSNs) at its end, and what is the redo LSN?\n")
    result = restart.analysis()
    steps = [line for line in restart.traces["analysis"].lines if not line.startswith(" ")]
    answer = (numbered(steps) + "\n\nTransaction table:\n\n"
              + table(("txn", "state", "last LSN", "undo-next"), xct_rows(result.xct_table))
              + "\n\nDirty page table:\n\n" + table(("page", "rec LSN"), dirty_rows(result.dirty_pages))
              + f"\n\nRedo LSN: {result.redo_lsn}\n")
    return Quiz("aries-analysis", seed, problem, answer)


def page_lsns_on_disk(disk: SimDisk, pages: list[PageId]) -> list[tuple[PageId, LSN]]:
    """The page LSN each page has on the crashed disk (what redo will find when it reads the page)."""
    with disk.open(volume_file_name(1)) as f:
        return [(pid, Page(bytearray(f.read(pid.page * PAGE_SIZE, PAGE_SIZE).ljust(PAGE_SIZE, b"\0"))).lsn)
                for pid in pages]


def build_aries_redo(seed: int) -> Quiz:
    c = crash(seed)
    sm = c.open()
    restart = sm.restart
    analysis = restart.analysis()
    dirty = [d.pid for _, d in sorted(analysis.dirty_pages.items())]
    on_disk = dict(page_lsns_on_disk(sm.disk, dirty))
    start = min(analysis.redo_lsn, restart.master) if not analysis.redo_lsn.is_null else restart.master
    problem = (f"{_scenario(c)}\n\nAnalysis has rebuilt the dirty page table; the page LSNs are those of the "
               f"pages on the crashed disk:\n\n"
               + table(("page", "rec LSN", "page LSN on disk"),
                       [(d.pid, d.rec_lsn, on_disk[d.pid]) for _, d in sorted(analysis.dirty_pages.items())])
               + f"\n\nThe redo LSN is {analysis.redo_lsn}. The log:\n\n{log_table(sm, start)}\n\n"
               "Run ARIES redo: which entries does it apply, and which does it skip, and why (not redoable, "
               "page not in the dirty page table, older than the page's recovery LSN, page LSN not older)?\n")
    redo = restart.redo()
    lines = [line for line in restart.traces["redo"].lines if line.startswith("redo:")]
    answer = numbered(lines) + f"\n\nEntries that change no page (xct_end, xct_abort, checkpoints) are not " \
        f"redoable: redo passes over them.\n\n{redo.summary()}\n"
    return Quiz("aries-redo", seed, problem, answer)


def build_aries_undo(seed: int) -> Quiz:
    c = crash(seed)
    sm = c.open()
    restart = sm.restart
    analysis = restart.analysis()
    problem = (f"{_scenario(c)}\n\nAnalysis and redo have run; the transaction table:\n\n"
               + table(("txn", "state", "last LSN", "undo-next"), xct_rows(analysis.xct_table))
               + f"\n\nThe log since T1's setup (the crash is at {sm.log.end_lsn}):\n\n{log_table(sm, c.start)}\n\n"
               "Run ARIES undo: in what order does it visit the losers' entries, and which CLRs does it log "
               "(each with its undo-next)?\n")
    restart.redo()
    undo = restart.undo()
    steps = []
    for tid, step in undo.steps:
        line = f"T{tid}: {step.lsn} {step.type_name}: {step.action}"
        for lsn in step.logged:
            logged = sm.log.read(lsn)
            line += f"; logs {logged.entry_type.name} at {lsn} (undo_nxt={logged.values.get('undo_nxt', '-')})"
        steps.append(line + f"; next {step.next_lsn}")
    for tid, end in sorted(undo.ended.items()):
        steps.append(f"T{tid} rolled back: xct_end at {end}")
    if not undo.losers:
        steps.append("no losers: undo has nothing to do")
    answer = numbered(steps) + "\n\nUndo takes, among all losers, the largest undo-next first (one backward " \
        f"sweep of the log).\n\n{undo.summary()}\n"
    return Quiz("aries-undo", seed, problem, answer)
