"""One slot update by the protocol: (lock,) fix EX, apply, log, unfix dirty.

The file manager and the store directory change records only through
these functions. The caller has taken the lock and holds the page fixed EX;
each function applies one change through its entry's redo handler
(:mod:`minidb.pagestore.files.recpage`), as the transaction's space user, and logs
it with the page's new LSN (:func:`minidb.pagestore.wal.logrec.apply_and_log`).
The caller then unfixes the page dirty: the buffer pool will not write it
before the log covers that LSN.

``format_page`` fixes a freshly allocated page *virgin* (its old bytes are
not read: they belong to no one) and logs ``page_format``; the entry names
the page explicitly, since the page's header does not yet.
"""

from __future__ import annotations

from typing import Any

from minidb.log.lsn import LSN
from minidb.pagestore.buffer.latch import EX
from minidb.pagestore.files.recpage import acting_for
from minidb.pagestore.ids import PageId
from minidb.pagestore.pages.page import PageTag, StoreFlags
from minidb.pagestore.pages.slotted import Placement, SlottedPage, SpaceUser
from minidb.pagestore.wal.logdef import PAGE_FORMAT, REC_INSERT, REC_REMOVE, REC_SPLICE
from minidb.pagestore.wal.logrec import APPLY_AND_LOG, page_fields


def format_page(volume: Any, xct: Any, pid: PageId, tag: PageTag,
                flags: StoreFlags = StoreFlags.REGULAR) -> SlottedPage:
    """Fix the new page ``pid`` EX (virgin), format it as an empty ``tag`` page, log it; return it fixed."""
    page = volume.bp.fix(pid, EX, virgin=True)
    try:
        APPLY_AND_LOG.call(volume.log, page, PAGE_FORMAT,
                      {**page_fields(pid), "tag": int(tag), "store_flags": int(flags)}, xct)
    except BaseException:
        volume.bp.unfix(page)
        raise
    return page


def insert(volume: Any, xct: Any, page: SlottedPage, slot: int, data: bytes, user: SpaceUser,
           placement: Placement | None = None) -> LSN:
    """``placement``: the page's :meth:`~SlottedPage.plan_insert` for ``data``, if the caller took it
    under this latch (the record is then placed once, not a second time by the handler)."""
    with acting_for(user, placement):
        return APPLY_AND_LOG.call(volume.log, page, REC_INSERT, {"slot": slot, "data": bytes(data)}, xct)


def remove(volume: Any, xct: Any, page: SlottedPage, slot: int, user: SpaceUser) -> LSN:
    data = page.read(slot)
    with acting_for(user):
        return APPLY_AND_LOG.call(volume.log, page, REC_REMOVE, {"slot": slot, "data": data}, xct)


def splice(volume: Any, xct: Any, page: SlottedPage, slot: int, start: int, cut: int, new: bytes,
           user: SpaceUser) -> LSN:
    old = page.read(slot)[start:start + cut]
    with acting_for(user):
        return APPLY_AND_LOG.call(volume.log, page, REC_SPLICE,
                             {"slot": slot, "start": start, "old": old, "new": bytes(new)}, xct)
