"""Exercise 08b, reference: minidb's own answer (not a second implementation).

``analysis`` is :func:`minidb.pagestore.restart.analysis.rebuild_tables`,
the decisions of the analysis pass, which ``analysis_pass`` calls on the
entries it reads from the log. This adapter writes the exercise's
checkpoint as the four entries of a real checkpoint (``chkpt_begin``,
``chkpt_bf_tab``, ``chkpt_xct_tab``, ``chkpt_end``, in log file 0, so
before everything else), its integers as LSNs of log file 1, its pages as
pages of store 3 on volume 1, and its kinds as page-store entry types with
the same flags.
"""

from __future__ import annotations

from minidb.log import LSN, NULL_LSN
from minidb.pagestore.restart.analysis import rebuild_tables
from minidb.pagestore.transactions.xct import XctState
from minidb.pagestore.wal.logdef import (
    CHKPT_BEGIN,
    CHKPT_BF_TAB,
    CHKPT_END,
    CHKPT_XCT_TAB,
    CLR_REC_INSERT,
    PAGE_FORMAT,
    REC_INSERT,
    XCT_ABORT,
    XCT_END,
    XCT_FREEING_SPACE,
    XCT_PREPARE_FI,
)

KINDS = {"update": REC_INSERT, "redo-only": PAGE_FORMAT, "clr": CLR_REC_INSERT, "abort": XCT_ABORT,
         "prepare": XCT_PREPARE_FI, "freeing-space": XCT_FREEING_SPACE, "end": XCT_END}
VOL, STORE = 1, 3


def _lsn(n: int | None) -> LSN:
    return NULL_LSN if not n else LSN(1, n)


def _int(lsn: LSN) -> int:
    return 0 if lsn.is_null else lsn.offset


def analysis(checkpoint_xcts: dict[int, tuple[str, int, int]], checkpoint_dirty: dict[int, int],
             log: list[tuple[int, int, str, int | None, int | None]],
             ) -> tuple[dict[int, tuple[str, int, int]], dict[int, int], int]:
    master = LSN(0, 1)
    pages = [{"vol": VOL, "store": STORE, "page": p, "rec_lsn": _lsn(r)} for p, r in checkpoint_dirty.items()]
    xcts = [{"tid": t, "state": XctState[s.upper()].value, "last_lsn": _lsn(last), "undo_nxt": _lsn(nxt)}
            for t, (s, last, nxt) in checkpoint_xcts.items()]
    entries = [(master, CHKPT_BEGIN, {}), (LSN(0, 2), CHKPT_BF_TAB, {"pages": pages}),
               (LSN(0, 3), CHKPT_XCT_TAB, {"youngest": max(checkpoint_xcts, default=0), "xcts": xcts}),
               (LSN(0, 4), CHKPT_END, {})]
    for lsn, tid, kind, page, undo_nxt in log:
        values = {"txn_id": tid, "vol": VOL, "store": STORE, "page": page or 0, "undo_nxt": _lsn(undo_nxt),
                  "committed": True}
        entries.append((_lsn(lsn), KINDS[kind], values))
    tables = rebuild_tables(entries, master)
    return ({t: (x.state.name.lower(), _int(x.last_lsn), _int(x.undo_nxt)) for t, x in tables.xct_table.items()},
            {d.pid.page: _int(d.rec_lsn) for d in tables.dirty_pages.values()},
            _int(tables.redo_lsn))
