"""``apply_and_log`` with the entry's values read straight from the page header's bytes.

Every logged change of every page passes through
:func:`minidb.pagestore.wal.logrec.apply_and_log`, so its own few steps
count: the reference merges three dicts (``page_fields(page.pid)``,
``txn_fields(xct)``, ``values``), builds a ``PageId`` and a ``StoreFlags``
member through their Python-level constructors, and asks the property
accessors for each. This twin builds the same dict in one display, unpacking
vol, store and page with one ``struct`` call at header offset 8 and taking
the store flags as the raw byte at offset 29 (``storeprop.logging_off`` and
``image_pending`` test bits of an int, so the byte answers as the member
would). The rest, applying, logging and stamping, is the reference's own
:func:`~minidb.pagestore.wal.logrec.apply_values`.

Safe because the header's bytes are what ``page.pid`` and
``page.store_flags`` decode (:mod:`minidb.pagestore.pages.page` draws the
layout), and the dict's keys come in the reference's order (page id,
transaction, change): the log entry encodes its values by the entry type's
field table, so the bytes logged are the same either way.
"""

from __future__ import annotations

import struct
from typing import Any

from minidb.log.lsn import LSN, NULL_LSN
from minidb.log.types import EntryType
from minidb.pagestore.pages.slotted import SlottedPage
from minidb.pagestore.wal.logrec import LogContext, apply_values

_PAGE_ID = struct.Struct("<III")  # vol, store, page: header bytes 8-19
_PAGE_ID_AT, _STORE_FLAGS_AT = 8, 29


def apply_and_log(log: Any, page: SlottedPage, entry_type: EntryType, values: dict[str, Any],
                  xct: LogContext | None = None) -> LSN:
    buf = page.buf
    vol, store, number = _PAGE_ID.unpack_from(buf, _PAGE_ID_AT)
    if xct is None:
        full = {"vol": vol, "store": store, "page": number, "txn_id": 0, "txn_prev_lsn": NULL_LSN, **values}
    else:
        full = {"vol": vol, "store": store, "page": number, "txn_id": xct.txn_id, "txn_prev_lsn": xct.last_lsn,
                **values}
    return apply_values(log, page, entry_type, full, xct, buf[_STORE_FLAGS_AT])
