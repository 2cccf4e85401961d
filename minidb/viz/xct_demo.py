"""The transactions-and-records demonstration of ``notebooks/06_transactions_records.ipynb``.

A volume of 64 pages of 512 bytes, a file ``s(1.3)`` (its large records in
``s(1.4)``), and a script of transaction steps. :func:`xct_step` is the pure
function behind the notebook's slider: it runs the script from a fresh
volume up to step ``k`` and returns the file's first page (byte by byte,
:mod:`minidb.viz.pages`), the log in transaction lanes with the CLRs and
their undo-next (:mod:`minidb.viz.xctlog`), and the entries the step wrote.

The script: T1 creates the file and three records and commits; T2 updates
beta, appends to alpha, creates delta and frees gamma, whose slot stays
*reserved* for T2; T3 creates a record exactly gamma's size and does not
get gamma's slot; T2 aborts: its rollback undoes each entry, newest first,
logging a CLR whose undo-next points past it, and gamma is back in its very
slot; T3 commits; T4 frees alpha and commits; T5, younger than every
transaction that reserved space on the page, reuses alpha's slot; T5 then
creates a large record (its body on pages of s(1.4)) and commits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from matplotlib.figure import Figure

from minidb.io import SimDisk
from minidb.pagestore.ids import PageId, RecordId, StoreId
from minidb.pagestore.latch import SH
from minidb.pagestore.sm import StorageManager
from minidb.viz.pages import PageLayout, draw_page, page_layout
from minidb.viz.xctlog import LogRow, draw_xct_log, log_rows

NUM_PAGES, EXT_SZ, PAGE_SIZE = 64, 4, 512
FILE = StoreId(1, 3)
FIRST_PAGE = PageId(1, 3, 12)
A, B, C = RecordId(1, 3, 12, 0), RecordId(1, 3, 12, 1), RecordId(1, 3, 12, 2)


def _clock() -> float:
    return 1_700_000_000.0


class Demo:
    """The running script: a storage manager and the transactions by name."""

    def __init__(self) -> None:
        self.sm = StorageManager.format(SimDisk("xct-demo"), num_pages=NUM_PAGES, ext_sz=EXT_SZ, page_size=PAGE_SIZE,
                                        frames=16, clock=_clock)
        self.t: dict[str, Any] = {}
        self.rids: dict[str, RecordId] = {}


def _t1(d: Demo) -> str:
    t = d.t["T1"] = d.sm.begin()
    fid = d.sm.create_file(t)
    for name in ("alpha", "beta", "gamma"):
        d.rids[name] = d.sm.create_rec(t, fid, name.encode() * 6)
    d.sm.commit(t)
    return f"file {fid}: alpha {d.rids['alpha']}, beta {d.rids['beta']}, gamma {d.rids['gamma']}; T1 committed"


def _t2_updates(d: Demo) -> str:
    t = d.t["T2"] = d.sm.begin()
    d.sm.update_rec(t, d.rids["beta"], 0, b"BETA")
    d.sm.append_rec(t, d.rids["alpha"], b"+more")
    d.rids["delta"] = d.sm.create_rec(t, FILE, b"delta" * 6)
    return f"beta updated, alpha appended to, delta created as {d.rids['delta']}"


def _t2_frees(d: Demo) -> str:
    d.sm.free_rec(d.t["T2"], d.rids["gamma"])
    return f"gamma freed: slot {d.rids['gamma'].slot} stays reserved for T2 (it may abort)"


def _t3_creates(d: Demo) -> str:
    t = d.t["T3"] = d.sm.begin()
    d.rids["theta"] = rid = d.sm.create_rec(t, FILE, b"theta" * 6)
    return f"T3 creates theta, the size of gamma: it gets {rid}, not gamma's reserved slot"


def _t2_aborts(d: Demo) -> str:
    steps = d.sm.abort(d.t["T2"])
    return "T2 aborts: " + "; ".join(f"{s.type_name} undone by {s.logged[-1]}" for s in steps if s.logged)


def _t3_t4(d: Demo) -> str:
    d.sm.commit(d.t["T3"])
    t = d.t["T4"] = d.sm.begin()
    d.sm.free_rec(t, d.rids["alpha"])
    d.sm.commit(t)
    return "T3 commits; T4 frees alpha and commits"


def _t5_reuses(d: Demo) -> str:
    t = d.t["T5"] = d.sm.begin()
    d.rids["iota"] = rid = d.sm.create_rec(t, FILE, b"iota" * 5)
    return f"T5 is younger than every transaction that reserved space here: iota reuses alpha's slot, {rid}"


def _t5_large(d: Demo) -> str:
    t = d.t["T5"]
    d.rids["kappa"] = rid = d.sm.create_rec(t, FILE, b"kappa " * 180)
    d.sm.commit(t)
    pages = [p.page for p in d.sm.volume.store_pages(StoreId(1, 4))]
    return f"T5 creates kappa, 1080 bytes: a large record {rid}, its body on pages {pages} of s(1.4); T5 commits"


SCRIPT: list[tuple[str, Any]] = [
    ("T1 creates a file and three records, commits", _t1),
    ("T2 updates, appends, creates", _t2_updates),
    ("T2 frees gamma", _t2_frees),
    ("T3 creates a record", _t3_creates),
    ("T2 aborts: rollback with CLRs", _t2_aborts),
    ("T3 commits, T4 frees alpha", _t3_t4),
    ("T5 reuses a freed slot", _t5_reuses),
    ("T5 creates a large record", _t5_large),
]
STEPS = len(SCRIPT)


@dataclass(frozen=True)
class XctStep:
    step: int
    description: str
    outcome: str
    entries: tuple[str, ...]
    rows: tuple[LogRow, ...]
    page: PageLayout
    figure: Figure
    page_figure: Figure

    def summary(self) -> str:
        lines = [f"step {self.step}: {self.description}", f"  {self.outcome}",
                 f"log entries written: {len(self.entries)}"]
        return "\n".join(lines + [f"  {line}" for line in self.entries])


def xct_step(step: int) -> XctStep:
    """The volume after the first ``step`` steps of the script (0: just formatted)."""
    if not 0 <= step <= STEPS:
        raise ValueError(f"step must be between 0 and {STEPS}, not {step}")
    demo = Demo()
    outcome = "formatted"
    before = demo.sm.log.last_lsn
    for k in range(step):
        before = demo.sm.log.last_lsn
        outcome = SCRIPT[k][1](demo)
    rows = log_rows(demo.sm.log)
    new = [str(r) for r in rows if step and r.lsn > before]
    description = SCRIPT[step - 1][0] if step else "format a volume of 64 pages of 512 bytes"
    if step:
        page = demo.sm.bp.fix(FIRST_PAGE, SH)
        try:
            layout = page_layout(page)
        finally:
            demo.sm.bp.unfix(page)
    else:
        from minidb.pagestore.slotted import SlottedPage
        layout = page_layout(SlottedPage(bytearray(PAGE_SIZE)))
    figure = draw_xct_log(rows, title=f"step {step}: {description}",
                          outlined={r.lsn: "#1565c0" for r in rows if step and r.lsn > before})
    page_figure = draw_page(layout, title=f"{FIRST_PAGE} after step {step}")
    return XctStep(step, description, outcome, tuple(new), tuple(rows), layout, figure, page_figure)
