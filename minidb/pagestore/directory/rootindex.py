"""The root index: store 2, a B+tree from index names to store numbers.

Shore keeps store 2 for the server: the one index it can find without
knowing anything, from which it finds the rest. minidb uses it to name
indexes: ``sm.create_index(t, "i4", name="orders")`` creates the index and
inserts (``"orders"``, its store number) here in the same transaction;
``sm.find_index("orders")`` looks the name up, ``sm.index_names()`` lists
them, and destroying the index removes its name. Files are not named (a
file is found by its store id, as in Shore).

Entries: key an index name (``str``, :mod:`minidb.pagestore.btree.keydesc`:
UTF-8, escaped so names sort as strings), element the store number
(``<I``, 4 bytes). A unique B+tree; its root is recorded in the volume
header, like the store directory's (:mod:`minidb.pagestore.directory.stdir`).

Invariants: each name is that of one INDEX store in use, whose directory
entry exists; a store has at most one name. Inserts and removes are logged
B+tree operations in the caller's transaction: a rolled-back creation takes
its name with it, a rolled-back destroy brings it back.

Names are locked like any index's keys (key-value locking,
:mod:`minidb.pagestore.btree.btree`), under an intention lock on store 2,
all held to the transaction's end: looking a name up (``find`` with a
transaction, and the check before a creation) takes SH on the name, or on
the next name if it is absent; creating takes EX on the name; dropping
takes EX on the name and on the next one. So while a transaction that
created or dropped a name is in flight, another transaction that asks for
the name waits: it is refused if the creation commits or the drop aborts,
and gets the name if the creation aborts or the drop commits. Without the
locks, a name dropped by a transaction still in flight could be given to
another, and the drop's rollback would then bring back a name already
taken. Without a transaction (``find(name)``, ``names()``), nothing is
locked: what is read may still be rolled back.
"""

from __future__ import annotations

import struct
from typing import Any

from minidb.pagestore.btree.btree import TREE
from minidb.pagestore.btree.keydesc import BadKeyError, KeyDescriptor
from minidb.pagestore.btree.keyed import max_entry
from minidb.pagestore.errors import BadRequestError, PageStoreCorruptionError
from minidb.pagestore.ids import PageId, StoreId
from minidb.pagestore.volume.stores import ROOT_INDEX

NAME = KeyDescriptor("str")
SNUM = struct.Struct("<I")


class RootIndex:
    """The names of store 2 (see the module documentation)."""

    def __init__(self, volume: Any, xcts: Any = None, lock_timeout: float | None = None):
        self.volume = volume
        self.xcts = xcts  # the transaction manager names are locked through (None: no locks)
        self.lock_timeout = lock_timeout
        self.stid = StoreId(volume.vid, ROOT_INDEX)
        self.tree = TREE.call(volume, PageId(volume.vid, ROOT_INDEX, volume.header.root_index_root), unique=True,
                         locks=xcts, lock_timeout=lock_timeout)

    def _intent(self, xct: Any, mode: str) -> None:
        """Lock store 2 in ``mode`` (IS to read names, IX to change them) for ``xct``, if it locks."""
        if xct is not None and self.xcts is not None:
            self.xcts.lock(xct, self.stid, mode, timeout=self.lock_timeout)

    def check_new(self, name: Any, xct: Any = None) -> bytes:
        """``name``'s key if it can name a new index; else a clear error, nothing changed. With ``xct``, the
        name (or the next one) is locked SH for it first: a name in flight waits for its transaction."""
        if not isinstance(name, str) or not name:
            raise BadRequestError(f"an index name is a non-empty string, not {name!r}")
        key = NAME.encode(name)
        most = max_entry(self.volume.bp.page_size) - SNUM.size
        if len(key) > most:
            raise BadRequestError(f"index name {name!r} is {len(key)} bytes encoded; at most {most} on "
                                  f"{self.volume.bp.page_size}-byte pages")
        taken = self.find(name, xct)
        if taken is not None:
            raise BadRequestError(f"index name {name!r} is taken by {StoreId(self.volume.vid, taken)}")
        return key

    def insert(self, xct: Any, name: str, snum: int) -> None:
        self._intent(xct, "IX")
        self.tree.insert(xct, self.check_new(name, xct), SNUM.pack(snum))

    def remove(self, xct: Any, name: str) -> None:
        self._intent(xct, "IX")
        self.tree.remove(xct, NAME.encode(name))

    def find(self, name: str, xct: Any = None) -> int | None:
        """The store number named ``name`` (None: no such name); with ``xct``, locked as the module says."""
        if not isinstance(name, str):
            raise BadRequestError(f"an index name is a string, not {name!r}")
        self._intent(xct, "IS")
        found = self.tree.find(NAME.encode(name), xct)
        return self._snum(name, found[0]) if found else None

    def lock_name(self, lock_id: Any) -> str:
        """A key-value lock on a name as the lock table prints it: ``k(1.2.'orders')``."""
        try:
            name = NAME.decode(lock_id.key)
        except BadKeyError:
            return str(lock_id)
        return f"k({self.stid.vol}.{self.stid.store}.{name!r})"

    def names(self) -> list[tuple[str, int]]:
        """Every (name, store number), in name order."""
        return [(self._name(k), self._snum(self._name(k), el)) for k, el in self.tree.scan(None, None)]

    def name_of(self, snum: int) -> str | None:
        return next((name for name, s in self.names() if s == snum), None)

    def _name(self, key: bytes) -> str:
        try:
            return NAME.decode(key)
        except BadKeyError as e:
            raise PageStoreCorruptionError(f"{self.stid}: a name that does not decode: {e}") from None

    def _snum(self, name: str, el: bytes) -> int:
        if len(el) != SNUM.size:
            raise PageStoreCorruptionError(f"{self.stid}: name {name!r} holds {el.hex()}, not a store number")
        return SNUM.unpack(el)[0]
