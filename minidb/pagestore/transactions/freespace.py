"""Commit-time handling of store destruction and extent deallocation ("freeing space").

A transaction does not really free space before it commits: a store it
destroys is only *marked* for deletion, and an extent whose last page it
freed stays in its store, because an abort would need both back (and no
other transaction may reuse them meanwhile). When it commits:

1. it logs ``xct_freeing_space``, listing the stores it marked and the
   extents in which it freed pages, and enters the state FREEING_SPACE: from
   here on it is committed (this entry is its commit point);
2. it removes each store still marked for deletion (a partial rollback may
   have unmarked it; Shore checks again too);
3. it frees each listed extent that holds no allocated page, is not its
   store's only extent, holds no page another active transaction freed, and
   whose lock it can upgrade to EX (Shore: nobody else holds the extent lock
   and its "has pages" bit is clear; the upgrade never waits);
4. it logs ``xct_end``.

Steps 2 and 3 are idempotent, so the whole is atomic across a crash: a
transaction found in FREEING_SPACE at restart is not rolled back but
finished, by doing 2-4 again from the lists in its ``xct_freeing_space``
entry (and, as Shore does, restart also removes any store still marked for
deletion once the losers are rolled back).

Worked example: transaction 4 destroys file ``s(1.3)`` (with ``s(1.4)``, its
large-record store) and frees the last page of extent ``x(1.6)`` of
``s(1.5)``. Its commit logs ``xct_freeing_space stores=[3, 4] exts=[(5, 6)]``,
then the removal of both stores and ``free_ext_list`` of x(1.6), then
``xct_end committed=true``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from minidb.pagestore.ids import ExtentId, StoreId
from minidb.pagestore.volume.stores import Deleting


def free_space(volume: Any, xct: Any, stores: Iterable[int], extents: Iterable[tuple[int, int]],
               held_by_other: Callable[[int], bool] | None = None, trace: Any = None) -> list[str]:
    """Steps 2 and 3 above; return what was done, one line each."""
    done = []
    removed = set()
    for snum in sorted(set(stores)):
        stid = StoreId(volume.vid, snum)
        node = volume.store_node(snum)
        if node.in_use and node.deleting != Deleting.NOT_DELETING:
            exts = volume.remove_store(stid, xct)
            removed.add(snum)
            done.append(f"removed {stid} (extents {exts})")
        else:
            done.append(f"{stid} is no longer marked for deletion: kept")
    for snum, ext in sorted(set(extents)):
        if snum in removed:
            continue
        where = ExtentId(volume.vid, ext)
        if held_by_other is not None and held_by_other(ext):
            done.append(f"{where}: another active transaction holds it (or it has pages): kept")
        elif volume.free_extent_if_empty(StoreId(volume.vid, snum), ext, xct):
            done.append(f"freed {where} of {StoreId(volume.vid, snum)}")
        else:
            done.append(f"{where}: not empty (or the store's only extent): kept")
    if trace is not None:
        for line in done:
            trace.emit("T%d freeing space: %s", xct.txn_id, line)
    return done
