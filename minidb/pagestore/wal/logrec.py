"""Logging page updates, and the redo/undo dispatch by entry-type name.

The protocol for applying an operation to a page (Shore's, minus the lock,
which the next layer adds): **fix the page EX, apply, log, set the page LSN,
unfix dirty**. :func:`apply_and_log` does the middle three in one place:

1. it applies the change by calling the *redo handler* registered for the
   entry type's name, so the forward operation and its redo are one code
   path (doing and redoing cannot disagree);
2. it appends the entry to the shared log; if that fails (a full disk), the
   page bytes are put back as they were, so an error changes nothing;
3. it stamps the page's header and footer with the entry's LSN.

Before all three, if the page is clean in the buffer pool, the pool logs a
full image of it (:mod:`minidb.pagestore.wal.pageimage`; a ``page_format``
is an image itself), and the page is dirty from the image's LSN on.

The caller then unfixes the page dirty; the buffer pool will not write it
before the log is durable up to that LSN (the write-ahead rule).

**Logging switched off.** This is the one place that decides whether a
change is logged, from the store property in the page's header (Shore's
generated log functions check ``page.store_flags == st_tmp`` the same way;
:mod:`minidb.pagestore.pages.storeprop`): a change to a page of a TMP, LOAD
or INSERT store is applied and *not* logged (the page LSN does not move; an
object with ``note_unlogged`` is told), except ``page_format``, which is
always logged (space logging: restart must know what each page is). A page
made regular after unlogged changes first gets its whole image logged
(``unlogged_page_image``), then the change. A transaction whose logging is
switched off (:mod:`minidb.pagestore.transactions.logswitch`) changes only
such stores.

A transaction's entry is noted in the transaction (its last LSN, its
undo-next) by the log itself, under the log latch (``append(...,
noted=...)``): a checkpoint taken by another thread appends its
``chkpt_begin`` after the note of every entry before it, so its copy of the
transaction table never misses an entry that analysis, starting at that
``chkpt_begin``, will not read.

Transactions. Every entry of the page store is transactional (flag T): its
item starts with ``txn_id`` and ``txn_prev_lsn``. The storage layer logs on
behalf of a :class:`TxnRef` (the transaction's id and its last LSN, which
:func:`apply_and_log` advances), or, when there is none, with ``txn_id`` 0
and ``txn_prev_lsn`` NULL: such entries belong to no transaction, are redone
at restart like any other and are never undone. The transaction layer passes
its own object (anything with ``txn_id`` and ``last_lsn``), so the backward
chain of each transaction is built here; an object with a ``note_logged``
method (:class:`minidb.pagestore.transactions.xct.Xct`) is told of every entry instead,
so it can keep its *undo-next* LSN as well.

Dispatch. Restart needs no knowledge of individual entry types:

- :func:`redo` (for any entry whose type has flag R) fixes the page named by
  the entry, and applies the redo handler only if the page LSN is older than
  the entry, then stamps the page with the entry's LSN;
- :func:`undo` (flag U) asks :func:`minidb.pagestore.wal.clr.compensation`
  which compensation entry the undo logs, then calls the undo handler
  registered for the name: a logical one (flag L) performs the inverse
  operation through the volume, logging as it goes; a physical one logs the
  CLR twin it is given.

Handlers register with :func:`redo_handler` and :func:`undo_handler`;
:func:`check_handlers` verifies that every R entry has a redo handler and
every U entry an undo handler.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from minidb import impl
from minidb.log.entry import LogEntry
from minidb.log.lsn import LSN, NULL_LSN
from minidb.log.types import EntryType
from minidb.pagestore.buffer.latch import EX
from minidb.pagestore.ids import PageId
from minidb.pagestore.pages.page import StoreFlags
from minidb.pagestore.pages.slotted import SlottedPage
from minidb.pagestore.pages.storeprop import image_pending, logging_off
from minidb.pagestore.wal.clr import COMPENSATION, Compensation
from minidb.pagestore.wal.logdef import PAGE_FORMAT, PAGESTORE_TYPES, UNLOGGED_PAGE_IMAGE
from minidb.pagestore.wal.pageimage import restore_page_image


class LogContext(Protocol):
    """What a transaction offers the storage layer: its id and the LSN of its last entry."""

    txn_id: int
    last_lsn: LSN


@dataclass
class TxnRef:
    """A minimal :class:`LogContext`: enough to chain a transaction's entries."""

    txn_id: int
    last_lsn: LSN = NULL_LSN


RedoHandler = Callable[[SlottedPage, dict[str, Any]], None]
UndoHandler = Callable[..., None]  # (volume, values, xct), and the CLR to log for a physical entry
REDO: dict[str, RedoHandler] = {}
UNDO: dict[str, UndoHandler] = {}


def redo_handler(name: str) -> Callable[[RedoHandler], RedoHandler]:
    def register(fn: RedoHandler) -> RedoHandler:
        _check_name(name, "R")
        REDO[name] = fn
        return fn
    return register


def undo_handler(name: str) -> Callable[[UndoHandler], UndoHandler]:
    def register(fn: UndoHandler) -> UndoHandler:
        _check_name(name, "U")
        UNDO[name] = fn
        return fn
    return register


def _check_name(name: str, flag: str) -> None:
    entry_type = PAGESTORE_TYPES.types.get(name)
    if entry_type is None or flag not in entry_type.flags:
        raise ValueError(f"{name} is not a page store entry type with flag {flag}")


def check_handlers() -> list[str]:
    """Entry types lacking a handler their flags promise (empty when all is well)."""
    missing = []
    for entry_type in PAGESTORE_TYPES:
        if entry_type.redoable and entry_type.name not in REDO:
            missing.append(f"{entry_type.name}: no redo handler")
        if entry_type.undoable and entry_type.name not in UNDO:
            missing.append(f"{entry_type.name}: no undo handler")
    return missing


redo_handler("page_image")(restore_page_image)


# -- page ids in entries ---------------------------------------------------------
def page_fields(pid: PageId) -> dict[str, int]:
    return {"vol": pid.vol, "store": pid.store, "page": pid.page}


def page_id_of(values: dict[str, Any]) -> PageId:
    return PageId(values["vol"], values["store"], values["page"])


def txn_fields(xct: LogContext | None) -> dict[str, Any]:
    if xct is None:
        return {"txn_id": 0, "txn_prev_lsn": NULL_LSN}
    return {"txn_id": xct.txn_id, "txn_prev_lsn": xct.last_lsn}


# -- doing ---------------------------------------------------------------------------
def apply_and_log(log: Any, page: SlottedPage, entry_type: EntryType, values: dict[str, Any],
                  xct: LogContext | None = None) -> LSN:
    """Apply ``values`` to the EX-fixed ``page`` through its redo handler, log it, stamp the page LSN.

    The entry's values are the page's id (:func:`page_fields`), the
    transaction's fields (:func:`txn_fields`), then ``values``, in that
    order. For a page whose store's logging is off, apply only and return
    NULL_LSN (see the module documentation). Otherwise a clean page logs its
    full image first (:mod:`minidb.pagestore.wal.pageimage`).
    """
    full = {**page_fields(page.pid), **txn_fields(xct), **values}
    return apply_values(log, page, entry_type, full, xct, page.store_flags)


def apply_values(log: Any, page: SlottedPage, entry_type: EntryType, full: dict[str, Any],
                 xct: LogContext | None, flags: int) -> LSN:
    """:func:`apply_and_log` given the entry's whole values and the page's store ``flags``: apply, log,
    stamp (or only apply, when the store's logging is off)."""
    frame = page.frame
    pool = getattr(frame, "pool", None)
    whole_page = entry_type is PAGE_FORMAT or entry_type is UNLOGGED_PAGE_IMAGE
    if logging_off(flags) and not whole_page:
        REDO[entry_type.name](page, full)
        note = getattr(xct, "note_unlogged", None)
        if note is not None:
            note(page.store_flags)
        return NULL_LSN
    snapshot = None
    try:
        if image_pending(flags) and not whole_page:  # this image is also the page's full image
            image = page.copy()
            image.store_flags = StoreFlags.REGULAR
            APPLY_AND_LOG.call(log, page, UNLOGGED_PAGE_IMAGE, {"image": bytes(image.buf)}, xct)
        elif not whole_page and pool is not None and not frame.dirty:
            pool.image_before_change(page)  # a clean page: its full image first (pageimage.py)
        snapshot = bytes(page.buf)
        REDO[entry_type.name](page, full)
        lsn = log.append(entry_type, full, noted=noting(xct, entry_type, full))
    except BaseException:  # the change is not made: the page stays as it was (its image may be logged)
        if snapshot is not None:
            page.buf[:] = snapshot
        if pool is not None:
            pool.change_failed(page)
        raise
    page.lsn = lsn
    if whole_page and pool is not None:
        pool.note_image(page, lsn)  # it rewrites the whole page: it is the page's image
    return lsn


#: every logged change of a page goes through here (forward, rollback's CLRs, the volume's maps, B+trees)
APPLY_AND_LOG = impl.hot_spot(apply_and_log)


def noting(xct: LogContext | None, entry_type: EntryType, values: dict[str, Any],
           then: Callable[[], None] | None = None) -> Callable[[LSN], None] | None:
    """What the log calls, under its latch, with the LSN of ``xct``'s entry: :func:`note_logged`, then
    ``then``. So the transaction's last LSN and undo-next (and a state the entry sets) move with the
    append itself, and a checkpoint whose ``chkpt_begin`` follows the entry sees them moved (see
    :mod:`minidb.pagestore.restart.background`)."""
    if xct is None:
        return None

    def noted(lsn: LSN) -> None:
        note_logged(xct, lsn, entry_type, values)
        if then is not None:
            then()
    return noted


def note_logged(xct: LogContext | None, lsn: LSN, entry_type: EntryType, values: dict[str, Any]) -> None:
    """Tell the transaction an entry of its was logged (a transaction object keeps its undo-next too)."""
    if xct is None:
        return
    note = getattr(xct, "note_logged", None)
    if note is None:
        xct.last_lsn = lsn
    else:
        note(lsn, entry_type, values)


@redo_handler("unlogged_page_image")
def _redo_unlogged_page_image(page: SlottedPage, v: dict[str, Any]) -> None:
    page.buf[:] = v["image"]


# -- redoing and undoing ----------------------------------------------------------------
def redo(bufferpool: Any, entry: LogEntry) -> bool:
    """Redo one entry if its page has not seen it; return True if the page changed."""
    entry_type = entry.entry_type
    if entry_type is None or not entry_type.redoable or entry_type.name not in REDO:
        return False
    page = bufferpool.fix(page_id_of(entry.values), EX)
    applied = False
    try:
        if page.lsn < entry.lsn:
            REDO[entry_type.name](page, entry.values)
            page.lsn = entry.lsn
            bufferpool.lower_rec_lsn(page, entry.lsn)  # dirty by redo: no new image is logged
            applied = True
    finally:
        bufferpool.unfix(page, dirty=applied)
    return applied


def undo(volume: Any, entry: LogEntry, xct: LogContext | None = None) -> Compensation:
    """Undo one entry, through the volume it names; return its compensation (:mod:`minidb.pagestore.wal.clr`).

    A physical entry's handler logs the CLR twin it is given; a logical
    entry's handler performs the inverse operation (which logs what it does),
    and the caller logs the ``compensate`` entry returned.
    """
    entry_type = entry.entry_type
    if entry_type is None or not entry_type.undoable:
        raise ValueError(f"{entry.type_name} at {entry.lsn} is not undoable")
    clr = COMPENSATION.call(entry_type, entry.values)  # compensation, or exercise 06a's
    if clr is None:
        raise ValueError(f"{entry.type_name} at {entry.lsn}: no compensation for an undoable entry")
    if "vol" in entry.values and hasattr(volume, "of"):
        volume = volume.of(entry.values["vol"])  # the entry's own volume (minidb.pagestore.mounts)
    if entry_type.logical:
        UNDO[entry_type.name](volume, entry.values, xct)
    else:
        UNDO[entry_type.name](volume, entry.values, xct, clr)
    return clr
