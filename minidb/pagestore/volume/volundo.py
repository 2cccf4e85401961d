"""Logical undo of the volume's entries (flag L): the inverse operation, through the volume.

Restart and rollback call these by entry-type name
(:func:`minidb.pagestore.wal.logrec.undo`). Each performs the inverse operation
with the volume's own methods, which log what they do; the transaction
layer then logs a ``compensate`` entry whose ``undo_nxt`` points past the
undone entry (Shore's anchor protocol for a compensated multi-step action).

- ``alloc_pages_in_ext``: free the pages again (``free_pages_in_ext``);
- ``free_pages_in_ext``: allocate them again (``alloc_pages_in_ext``);
- ``store_operation``: ``create_store`` is undone by removing the store
  (marking it if needed, then freeing every extent it owns);
  ``set_deleting`` and ``set_store_flags`` by setting the old value back.
  ``set_first_ext`` and ``delete_store`` are not undone (as in Shore): the
  list they change is rebuilt by the undo of ``create_store``, and a store
  is deleted only by a committed transaction.

An undo that finds the map in a state its entry cannot have left (the
pages no longer allocated to the store, say) raises a
:class:`PageStoreError` naming the extent: rolling back would corrupt it.
"""

from __future__ import annotations

from typing import Any

from minidb.pagestore.errors import PageStoreError
from minidb.pagestore.volume.stores import Deleting
from minidb.pagestore.wal.logdef import ALLOC_PAGES_IN_EXT, FREE_PAGES_IN_EXT
from minidb.pagestore.wal.logrec import LogContext, undo_handler


@undo_handler("alloc_pages_in_ext")
def _undo_alloc_pages(volume: Any, v: dict[str, Any], xct: LogContext | None) -> None:
    with volume._mutex:
        link = volume.extlink(v["ext"])
        if link.owner != v["snum"] or link.pmap & v["pmap"] != v["pmap"]:
            raise PageStoreError(f"undo of alloc_pages_in_ext: x({volume.vid}.{v['ext']}) no longer holds those pages")
        volume._update(volume._extmap_pid(v["ext"]), FREE_PAGES_IN_EXT,
                       {"snum": v["snum"], "ext": v["ext"], "pmap": v["pmap"]}, xct)
        if v["snum"] in volume._reserved_cache:
            volume._reserved_cache[v["snum"]].add(v["ext"])


@undo_handler("free_pages_in_ext")
def _undo_free_pages(volume: Any, v: dict[str, Any], xct: LogContext | None) -> None:
    with volume._mutex:
        link = volume.extlink(v["ext"])
        if link.owner != v["snum"] or link.pmap & v["pmap"]:
            raise PageStoreError(f"undo of free_pages_in_ext: x({volume.vid}.{v['ext']}) cannot take those pages back")
        volume._update(volume._extmap_pid(v["ext"]), ALLOC_PAGES_IN_EXT,
                       {"snum": v["snum"], "ext": v["ext"], "pmap": v["pmap"]}, xct)
        volume._reserved_cache.pop(v["snum"], None)


@undo_handler("store_operation")
def _undo_store_operation(volume: Any, v: dict[str, Any], xct: LogContext | None) -> None:
    stid, op = volume.stid(v["snum"]), v["op"]
    with volume._mutex:
        if op == "create_store":
            node = volume.store_node(v["snum"])
            if node.in_use:
                if node.deleting == Deleting.NOT_DELETING:
                    volume._store_op(v["snum"], "set_deleting", Deleting.DELETING, node.deleting, xct)
                volume.remove_store(stid, xct)
        elif op in ("set_deleting", "set_store_flags"):
            node = volume.store_node(v["snum"])
            current = node.deleting if op == "set_deleting" else node.flags
            volume._store_op(v["snum"], op, v["old_value"], current, xct)
            volume._forget_store(v["snum"])
        # set_first_ext and delete_store are not undone (as in Shore): the list
        # they change is rebuilt by the undo of create_store.
