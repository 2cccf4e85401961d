"""Files with store properties: TMP, LOAD and INSERT files (a part of :class:`~minidb.pagestore.files.file.FileManager`).

A file's property (:class:`~minidb.pagestore.pages.storeprop.StoreProperty`) is
given when it is created, ``create_file(t, property=...)``, and held by both
its stores (small and large records). What the file manager does with it:

- **pages** are formatted with their store's flags, so the logging path
  (:func:`~minidb.pagestore.wal.logrec.apply_and_log`) finds the property in
  the page it changes;
- **TMP**: any transaction may use the file once its creator committed; its
  record changes are not logged, so an abort or a rollback does not undo
  them (Shore: "not logged, not recovered"). Its page allocations and
  frees are therefore kept when a transaction aborts (compensated, like a
  file page's allocation), so a record never points to a data page an abort
  freed, nor does a page it no longer uses stay allocated. Restart destroys
  every TMP file (:func:`drop_tmp_files`), with a transaction of its own,
  logged like any ``destroy_file``;
- **LOAD** and **INSERT**: only the *loading* transaction (the creator, or
  the one that set INSERT) may change the file, and the pages it adds are
  not kept if it aborts (their allocation is undone, which frees them with
  their unlogged contents; a LOAD file goes altogether, its creation being
  undone). Pages an INSERT file had before stay logged, so their changes are
  undone as usual. At commit the stores become REGULAR, their pages forced
  (:mod:`minidb.pagestore.transactions.loadstores`).

Shore gives ``t_insert_file`` only "new pages are saved as tmp, old pages as
regular" and lets it be set only at creation; minidb also lets a transaction
turn a REGULAR file into an INSERT file (:meth:`set_store_property`), which is
where the two kinds of pages meet. Updates and frees are not refused: on an
old page they are logged, on a new one they go with the page.

``set_store_property(t, fid, prop)`` allows: TMP, LOAD or INSERT to REGULAR
(at once: pages forced, flags logged; LOAD and INSERT by their loader
only), and REGULAR to INSERT. A store never becomes TMP or LOAD afterwards:
its logged past would be destroyed by the next restart, or its unlogged
future could not be undone.
"""

from __future__ import annotations

from typing import Any

from minidb.pagestore.errors import BadRequestError
from minidb.pagestore.ids import StoreId
from minidb.pagestore.pages.page import PageTag, StoreFlags
from minidb.pagestore.pages.storeprop import LOADING, UNLOGGED, StoreProperty
from minidb.pagestore.transactions.loadstores import make_regular
from minidb.pagestore.volume.stores import Deleting


class StoreProperties:
    volume: Any
    xcts: Any
    trace: Any

    def store_property(self, fid: StoreId) -> StoreProperty:
        """The property of file ``fid``."""
        self.file_info(fid)  # type: ignore[attr-defined]
        return StoreProperty.of(self._store_flags(fid))

    def set_store_property(self, xct: Any, fid: StoreId, prop: StoreProperty | str) -> None:
        """Change file ``fid``'s property (see the module documentation)."""
        prop = StoreProperty.parse(prop)
        self.xcts.check_active(xct)
        info = self.file_info(fid)  # type: ignore[attr-defined]
        stores = [fid, StoreId(fid.vol, info.large)]
        for stid in stores:
            self.xcts.lock(xct, stid, "EX")
        old = StoreProperty.of(self._store_flags(fid))
        if old == prop:
            return
        self._check_loader(xct, fid)
        if prop == StoreProperty.REGULAR:
            for line in make_regular(self.volume, xct, stores, UNLOGGED):
                self.trace.emit("T%d made %s", xct.txn_id, line)
        elif (old, prop) == (StoreProperty.REGULAR, StoreProperty.INSERT):
            for stid in stores:
                self.volume.set_store_flags(stid, prop.flags, xct)
                self.xcts.note_loading(xct, stid)
        else:
            raise BadRequestError(f"{fid}: a {old.name} file cannot become {prop.name} (allowed: TMP, LOAD or "
                                  f"INSERT to REGULAR, REGULAR to INSERT; LOAD and TMP are given by create_file)")
        self.trace.emit("T%d set %s's property from %s to %s", xct.txn_id, fid, old.name, prop.name)

    def _store_flags(self, stid: StoreId) -> StoreFlags:
        return self.volume.store_node(stid.store).store_flags

    def _check_loader(self, xct: Any, fid: StoreId) -> None:
        """Only the loading transaction may change a LOAD or INSERT file."""
        loader = self.xcts.loader(fid)
        if loader is not None and loader != xct.txn_id:
            raise BadRequestError(f"{fid} is being loaded ({self.store_property(fid).name}) by T{loader}; "
                                  f"{xct} may change it once that one has committed")

    @staticmethod
    def _kept_on_abort(flags: StoreFlags, tag: PageTag) -> bool:
        """Whether a page allocated to a store with ``flags`` stays allocated if the transaction aborts."""
        if flags & LOADING:
            return False
        return tag == PageTag.FILE or flags == StoreFlags.TMP


def drop_tmp_files(files: Any, xcts: Any) -> list[str]:
    """Destroy every TMP file and any TMP store left over, in one committed transaction (what restart does)."""
    volume = files.volume
    nodes = volume.store_nodes()
    tmp = [stid for stid, node in nodes.items() if node.flags == StoreFlags.TMP and not node.deleting]
    if not tmp:
        return []
    done = []
    xct = xcts.begin()
    xct.restart_work = True  # its entries reserve no log space for a rollback (minidb.pagestore.wal.logspace)
    for fid in files.files():
        if fid in tmp:
            files.destroy_file(xct, fid)
            done.append(f"TMP file {fid} destroyed")
    for stid in tmp:
        if volume.store_node(stid.store).deleting == Deleting.NOT_DELETING:
            volume.destroy_store(stid, xct)
            xcts.note_store_destroyed(xct, stid)
            done.append(f"TMP store {stid} destroyed")
    xcts.commit(xct)
    return done
