"""Exercise 08c, reference: minidb's own answer (not a second implementation).

``redo_test`` is :func:`minidb.pagestore.restart.redo.redo_decision`, the
test the redo pass makes for every entry it reads (``redo_pass`` calls it
and then applies, or skips, what it decided). This adapter turns the
exercise's integers into LSNs (they are packed LSNs), its pages into pages of store
3 on volume 1 and its kinds into page-store entry types with the same flags.
"""

from __future__ import annotations

from typing import Callable

from minidb.log import LSN
from minidb.pagestore.ids import PageId
from minidb.pagestore.restart.analysis import DirtyPage
from minidb.pagestore.restart.redo import redo_decision
from minidb.pagestore.wal.logdef import (
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


def _lsn(n: int) -> LSN:
    """The exercise's integers are packed LSNs (``LSN.packed``, as the engine passes them when it runs a
    student's ``redo_test``): 0 is the LSN 0x0/0x0 a page never written carries, older than any entry."""
    return LSN.unpack(n)


def redo_test(lsn: int, kind: str, page: int | None, dirty: dict[int, int],
              read_page_lsn: Callable[[], int]) -> str:
    table = {(VOL, p): DirtyPage(PageId(VOL, STORE, p), _lsn(r)) for p, r in dirty.items()}
    values = {"vol": VOL, "store": STORE, "page": page or 0}
    return redo_decision(_lsn(lsn), KINDS[kind], values, table, lambda: _lsn(read_page_lsn()))
