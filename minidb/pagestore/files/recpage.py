"""Record operations on a page: redo and undo of ``page_format``, ``rec_insert``, ``rec_remove``, ``rec_splice``.

These entries are *physical*: each names one page (a file page, ``file_p``,
or a large-record page, ``lgdata_p``) and a slot, and its redo handler
changes that page only. The same handler makes the change in forward
processing (:func:`minidb.pagestore.wal.logrec.apply_and_log`), is called by redo
at restart, and, for the CLR twins, by rollback:

==================  ==========================================================
entry               what its handler does to the page
==================  ==========================================================
page_format         format the page as an empty page of type ``tag``
rec_insert          put ``data`` in slot ``slot`` (Shore's page_reclaim)
rec_remove          free slot ``slot``; its bytes stay reserved (page_mark)
rec_splice          replace ``old`` at ``start`` by ``new`` (page_splice)
clr_rec_insert      free slot ``slot`` (undoing an insert)
clr_rec_remove      put ``data`` back in slot ``slot`` (undoing a removal)
clr_rec_splice      replace ``old`` at ``start`` by ``new`` (the swapped splice)
==================  ==========================================================

**Undo logs a CLR.** Undoing ``rec_insert`` logs ``clr_rec_insert`` with
``undo_nxt`` = the undone entry's ``txn_prev_lsn``: one entry that both
changes the page and tells a later rollback where to continue, so an undo
is never undone and a rollback interrupted by crashes makes progress. Which
CLR, with which fields, is :func:`minidb.pagestore.wal.clr.compensation`'s
answer; ``_undo_record`` logs it.

**Who is acting.** Space reservation (:mod:`minidb.pagestore.pages.slotted`) needs
to know the transaction asking for space; that is not logged (Shore logs
the actions, not the reservation fields). Forward processing says who acts
with ``with acting_for(xct.space_user()):`` around the update; rollback acts
as the transaction *rolling back* (it may use the space it reserved); redo
acts as :data:`REDO_USER`, who may use any free space and any slot, since
the log says the change happened.

Worked example: transaction 7 removes the 60-byte record in slot 1 of a
512-byte file page (``rec_remove`` at 0x1/0x2c0): slot 1 becomes *reserved*
(offset 0, length 60) and ``nrsvd`` = 60 for transaction 7. It aborts:
rollback logs ``clr_rec_remove`` slot 1 (the same 60 bytes) with
``undo_nxt`` = the entry before 0x1/0x2c0, and the record is back in slot 1.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from minidb.pagestore.buffer.latch import EX
from minidb.pagestore.pages.page import PageTag, StoreFlags
from minidb.pagestore.pages.slotted import MAX_TID, Placement, SlottedPage, SpaceUser
from minidb.pagestore.wal.clr import Compensation
from minidb.pagestore.wal.logdef import PAGESTORE_TYPES
from minidb.pagestore.wal.logrec import APPLY_AND_LOG, LogContext, page_id_of, redo_handler, undo_handler

REDO_USER = SpaceUser(tid=0, oldest_active=MAX_TID, rolling_back=True)
# (the user, the forward insert's placement or None)
ACTING: ContextVar[tuple[SpaceUser, Placement | None]] = ContextVar("minidb_pagestore_space_user",
                                                                     default=(REDO_USER, None))


class acting_for:
    """``with acting_for(user):`` makes ``user`` the one asking for space in the record handlers called
    inside.

    ``placement``: where a forward insert found room on its page
    (:meth:`SlottedPage.plan_insert`, under the same EX latch, the page
    unchanged since), so that the ``rec_insert`` handler puts the record
    there without placing it a second time. Redo and rollback give none.
    """

    __slots__ = ("acting", "token")

    def __init__(self, user: SpaceUser, placement: Placement | None = None):
        self.acting = (user, placement)

    def __enter__(self) -> None:
        self.token = ACTING.set(self.acting)

    def __exit__(self, *exc: Any) -> None:
        ACTING.reset(self.token)


def current_user() -> SpaceUser:
    return ACTING.get()[0]


def rollback_user(xct: LogContext | None) -> SpaceUser:
    """The space user of ``xct`` rolling back (it may use every free byte, its reservations included)."""
    if xct is None:
        return REDO_USER
    make = getattr(xct, "space_user", None)
    if make is not None:
        user = make()
        return SpaceUser(user.tid, user.oldest_active, rolling_back=True)
    return SpaceUser(xct.txn_id, MAX_TID, rolling_back=True)


# -- redo handlers (also the forward code path) ---------------------------------------------
@redo_handler("page_format")
def _redo_page_format(page: SlottedPage, v: dict[str, Any]) -> None:
    page.format(page_id_of(v), PageTag(v["tag"]), StoreFlags(v["store_flags"]))


@redo_handler("rec_insert")
@redo_handler("clr_rec_remove")
def _redo_insert(page: SlottedPage, v: dict[str, Any]) -> None:
    user, placement = ACTING.get()
    page.insert_at(v["slot"], v["data"], user, placement)


@redo_handler("rec_remove")
@redo_handler("clr_rec_insert")
def _redo_remove(page: SlottedPage, v: dict[str, Any]) -> None:
    page.remove(v["slot"], current_user())


@redo_handler("rec_splice")
@redo_handler("clr_rec_splice")
def _redo_splice(page: SlottedPage, v: dict[str, Any]) -> None:
    page.splice(v["slot"], v["start"], len(v["old"]), v["new"], current_user())


#: the handlers above that are a slotted page's insert and splice, as restart's redo recognises them to take
#: its shortcuts for them (the redo twin in minidb/fast/pagestore/restart/redo.py)
INSERT_HANDLER, SPLICE_HANDLER = _redo_insert, _redo_splice


# -- undo handlers: each logs the CLR twin of its entry ---------------------------------------
@undo_handler("rec_insert")
@undo_handler("rec_remove")
@undo_handler("rec_splice")
def _undo_record(volume: Any, v: dict[str, Any], xct: LogContext | None, clr: Compensation) -> None:
    """Log ``clr``, the entry's CLR twin (:func:`minidb.pagestore.wal.clr.compensation`), on its page."""
    page = volume.bp.fix(page_id_of(v), EX)
    try:
        with acting_for(rollback_user(xct)):
            APPLY_AND_LOG.call(volume.log, page, PAGESTORE_TYPES[clr.type_name], clr.values, xct)
    except BaseException:
        volume.bp.unfix(page)
        raise
    volume.bp.unfix(page, dirty=True)
