"""Making a store regular: what the commit of a loading transaction does to its LOAD and INSERT stores.

A LOAD store, and the pages an INSERT store gained, were changed without
log entries (:mod:`minidb.pagestore.pages.storeprop`): the log cannot redo
them, so they must be on disk before the transaction's commit is. When a
loading transaction commits (Shore: "stores that were given t_load_file or
t_insert_file are turned into t_regular stores"), before its commit entry,
for each such store still in use:

1. every page of the store whose header says its logging is off is marked
   regular (REGULAR is added to its ``store_flags``; the other bit stays, so
   its first logged change logs its whole image first);
2. the store's pages are written and the volume fsynced (the buffer pool's
   ``force_store``; pages evicted earlier, written but not fsynced, are
   fsynced by the same fsync);
3. ``store_operation set_store_flags`` REGULAR is logged in the transaction.

A crash before the commit entry is durable leaves a loser: undo puts the
store's flags back, and a LOAD store, created by the same transaction, is
destroyed by undoing its creation. A crash after it finds the pages on
disk. ``set_store_property(..., REGULAR)`` does the same at once, for a TMP
store too (Shore forces a store's pages "when changing a store's property
from unlogged to logged").

Worked example: T3 created LOAD file s(1.3) (large records in s(1.4)) and
filled pages 12 and 13 without logging. Its commit marks p(1.3.12) and
p(1.3.13) REGULAR | LOAD_FILE, writes both in one write, fsyncs, logs
``set_store_flags`` 0x01 for s(1.3) and s(1.4), then ``xct_end``.
"""

from __future__ import annotations

from typing import Any

from minidb.pagestore.buffer.latch import EX
from minidb.pagestore.ids import StoreId
from minidb.pagestore.pages.page import StoreFlags
from minidb.pagestore.pages.storeprop import LOADING, logging_off
from minidb.pagestore.volume.stores import Deleting


def make_regular(volume: Any, xct: Any, stores: list[StoreId], unlogged: StoreFlags = LOADING) -> list[str]:
    """Steps 1-3 above for each store whose flags are among ``unlogged``; return what was done, one line each.

    At commit only LOAD and INSERT stores are converted: a store number the
    transaction rolled back and reused for a TMP file stays TMP.
    """
    bp = volume.bp
    done = []
    for stid in stores:
        node = volume.store_node(stid.store)
        if not node.flags & unlogged or node.deleting != Deleting.NOT_DELETING:
            continue
        marked = 0
        for pid in volume.store_pages(stid):
            page = bp.fix(pid, EX)
            off = page.pid.stid == stid and logging_off(page.store_flags)
            if off:
                page.store_flags = page.store_flags | StoreFlags.REGULAR
                marked += 1
            bp.unfix(page, dirty=off)
        writes = bp.force_store(stid)
        volume.set_store_flags(stid, StoreFlags.REGULAR, xct)
        done.append(f"{stid}: {marked} unlogged pages made regular, forced in {len(writes)} writes")
    return done
