"""Record id verification: does ``r(1.3.48.2)`` still name a record?

A record id is physical (volume, store, page, slot) and the server may keep
one after the record is gone, so every operation that takes a record id
verifies it first, with the page fixed (Shore's list, in order):

1. the id is on this volume, its page number inside it, its store not one
   of the volume's own (0-2);
2. the page is a file page (tag FILE) and its header names the id's store;
3. the store exists and is not being deleted (its store node);
4. the page is allocated to the store (its extent's owner and page bit);
5. the slot is in the page's slot table and in use.

Shore does not look the store up in the directory: if the page is still
allocated to the store and is a file page, the store must still be a file.
A failed check raises :class:`StaleRecordIdError` saying which check failed.

Worked example: after ``free_rec(r(1.3.12.2))`` commits, reading
``r(1.3.12.2)`` fails with "r(1.3.12.2): stale record id: slot 2 of
p(1.3.12) is not in use"; once page 12 itself is freed, with "page 12 is not
allocated to s(1.3)".
"""

from __future__ import annotations

from typing import Any

from minidb.pagestore.errors import StaleRecordIdError
from minidb.pagestore.ids import RecordId
from minidb.pagestore.pages.page import PageTag
from minidb.pagestore.pages.slotted import SlottedPage
from minidb.pagestore.volume.stores import FIRST_USER_STORE, Deleting


def check_rid_bounds(volume: Any, rid: RecordId) -> None:
    """Check 1, before the page is fixed."""
    if not isinstance(rid, RecordId):
        raise StaleRecordIdError(f"{rid!r} is not a record id")
    if rid.vol != volume.vid:
        raise StaleRecordIdError(f"{rid}: stale record id: not on volume v({volume.vid})"
                                 f"{volume.not_mounted_note(rid.vol) if hasattr(volume, 'not_mounted_note') else ''}")
    if not 0 <= rid.page < volume.header.num_pages:
        raise StaleRecordIdError(f"{rid}: stale record id: page {rid.page} is outside the volume")
    if not FIRST_USER_STORE <= rid.store < volume.header.num_stores:
        raise StaleRecordIdError(f"{rid}: not a record of a file: stores 0-2 are the volume's own and "
                                 f"stores stop at {volume.header.num_stores - 1}")


def verify_rid(volume: Any, page: SlottedPage, rid: RecordId) -> None:
    """Checks 2-5 with the page fixed; raises :class:`StaleRecordIdError`."""
    def stale(why: str) -> StaleRecordIdError:
        return StaleRecordIdError(f"{rid}: stale record id: {why}")

    if page.tag != PageTag.FILE:
        raise stale(f"p({rid.vol}.{rid.store}.{rid.page}) is not a file page ({page.tag.name})")
    if page.pid.store != rid.store:
        raise stale(f"page {rid.page} belongs to s({rid.vol}.{page.pid.store})")
    node = volume.store_node(rid.store)
    if not node.in_use:
        raise stale(f"store s({rid.vol}.{rid.store}) does not exist")
    if node.deleting != Deleting.NOT_DELETING:
        raise stale(f"store s({rid.vol}.{rid.store}) is being deleted")
    if not volume.is_allocated(rid.pid):
        raise stale(f"page {rid.page} is not allocated to s({rid.vol}.{rid.store})")
    if not page.is_in_use(rid.slot):
        raise stale(f"slot {rid.slot} of {rid.pid} is not in use")
