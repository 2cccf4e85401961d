"""The index manager, accelerated: a lookup finds its remembered tree and locks its store inline.

The reference's :meth:`~minidb.pagestore.btree.index.IndexManager.lookup`
goes through ``_begin`` (the transaction checked, ``index_for``, the store
locked IS), and ``index_for`` through ``_epoch``; each is a Python call, and
the lock is asked of the transaction manager, which asks its locking policy.
This twin makes the same steps in the same order in one function, and
nothing else differently:

- **the transaction checked** as the transaction manager's ``check_active``
  checks it (an :class:`~minidb.pagestore.transactions.xct.Xct` of this
  manager, ACTIVE, in its table), the test inline; a transaction that fails
  it goes to ``check_active``, for its errors;
- **the remembered descriptor and tree** used under the reference's own
  condition (the same epoch, directory changes and rollbacks, taken now;
  the same lock timeout); anything else is the reference's ``index_for``,
  which reads the directory and remembers what it read;
- **the IS lock on the store** asked of the transaction manager, unless its
  locking policy is :class:`~minidb.pagestore.transactions.locking.NoLocking`,
  which grants every request at once and holds nothing. The policy is read
  at each lookup;
- **the key encoded** by the descriptor's one field when it has one (the
  first step of :meth:`KeyDescriptor.encode <minidb.pagestore.btree.keydesc.KeyDescriptor.encode>`),
  with the field's checks and errors; a ``bytes`` key of a ``bytes`` field
  inline, as the field escapes it (each zero byte followed by FF, two zero
  bytes at the end).

Every other operation is the reference's, inherited. The twin keeps nothing
of its own: what it reads is the reference's memory of descriptors, under
the reference's rule. ``tests/agreement/scn_btree.py`` and ``scn_xct.py``
hold it to the reference (a lock manager and none, indexes of i4 and of
bytes keys, indexes created and destroyed in transactions that roll back).
"""

from __future__ import annotations

from typing import Any

from minidb.pagestore.btree import index as reference
from minidb.pagestore.ids import StoreId
from minidb.pagestore.transactions.locking import NoLocking
from minidb.pagestore.transactions.xct import Xct, XctState

_ACTIVE = XctState.ACTIVE


class IndexManager(reference.IndexManager):
    def lookup(self, xct: Any, stid: StoreId, key: Any) -> list[bytes]:
        xcts = self.xcts
        if type(xct) is not Xct or xct.manager is not xcts or xct.state is not _ACTIVE \
                or xcts._table.get(xct.txn_id) is not xct:  # check_active's test inline
            xcts.check_active(xct)  # which says what is wrong
        known = self._known.get(stid) if type(stid) is StoreId else None
        if known is not None and known[0] == (self.directory.changes, xcts.rollbacks) \
                and known[2].lock_timeout == self.lock_timeout:
            ix, tree = known[1], known[2]
        else:
            ix, tree = self.index_for(stid)
        if type(getattr(xcts, "locks", None)) is not NoLocking:
            xcts.lock(xct, stid, "IS", timeout=self.lock_timeout)
        fields = ix.desc.fields  # a descriptor of one field encodes a key as that field does
        if len(fields) != 1:
            return tree.find(ix.desc.encode(key), xct)
        if type(key) is bytes and fields[0].kind == "bytes":  # the field's encoding, inline: 00 escaped, 00 00 ends it
            return tree.find(key.replace(b"\x00", b"\x00\xff") + b"\x00\x00", xct)
        return tree.find(fields[0].encode(key), xct)
