"""Gets and puts with their checks inline (twin of :class:`minidb.logstore.database.Database`).

What a get or put checks is the same; only how often Python steps through it
changes:

- a key or data is converted (``as_bytes``) only when it is not already
  ``bytes``, the usual case;
- the environment is asked ``check_usable`` only when ``env.closed`` or
  ``env.invalid`` says it would raise, and a transaction given is handed to
  the reference's check only when it is not an open transaction of this
  environment, which that check would refuse (the reference calls both every
  time);
- a put in a transaction (a batch of puts, the usual way to load) runs
  its steps inline (:func:`put_in_txn`): the reference's record lock, LN,
  slot, transaction note and split, in the same order, without the layers
  of calls between the database, the record operations and the
  transaction (a put with no transaction, or into a replicated database,
  takes the reference's path);
- ``nGets`` and ``nPuts`` are counted in place (:func:`minidb.fast.held_counts`), no stats lock:
  the environment's counters change only under its latch, which a get or a put holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidb import fast
from minidb.errors import as_bytes
from minidb.log import NULL_LSN
from minidb.logstore.database import Database as ReferenceDatabase
from minidb.logstore.logdef import LN_TX
from minidb.logstore.tree.ln import AbortInfo
from minidb.logstore.txn.txn import Transaction, TxnState

if TYPE_CHECKING:
    from minidb.log import LSN


class Database(ReferenceDatabase):
    def _check(self, txn: "Transaction | None") -> None:
        env = self.env
        if env.closed or env.invalid is not None:
            env.check_usable()
        if self.impl.removed:
            self.refuse_removed()
        if txn is not None and (type(txn) is not Transaction or txn.core is not env.core
                                or txn.state is not TxnState.OPEN):
            self._txn(txn)  # says which

    def get(self, key: bytes | str, txn: "Transaction | None" = None) -> bytes | None:
        if type(key) is not bytes:
            key = as_bytes(key, "key")
        env = self.env
        with env.latch:
            self._check(txn)
            value = env.records.read(self.impl, key, txn)
            fast.held_counts(env.stats)["nGets"] += 1
            env.after_operation(read=True)
            return value

    def put(self, key: bytes | str, data: bytes | str, txn: "Transaction | None" = None) -> LSN:
        if type(key) is not bytes:
            key = as_bytes(key, "key")
        if type(data) is not bytes:
            data = as_bytes(data, "data")
        if txn is None:
            lsn = self._write(key, data, txn, "put a record")
            assert lsn is not None
            return lsn
        env = self.env
        with env.latch:
            self._check(txn)
            if env.read_only:
                env.check_writable("put a record")
            lsn = put_in_txn(env, self.impl, key, data, txn)
            env.after_operation()
            return lsn


def put_in_txn(env, db, key: bytes, data: bytes, txn: "Transaction") -> "LSN":
    """``env.records.write(db, key, data, txn)``, a put in a transaction, with its steps inline: the
    same lock, LN, slot, transaction note, counts and split, in the same order."""
    core = env.core
    if core.config.replicated and db.replicated:
        return env.records.write(db, key, data, txn)
    env.locks.lock_write(db.id, db.name, key, txn.id, txn.lock_timeout)
    bin_node = db.tree.search(key)
    index, exact = bin_node.find(key)
    if exact:
        prev, prev_deleted = bin_node.lsns[index], bin_node.known_deleted[index]
    else:
        prev, prev_deleted = NULL_LSN, True
    written = txn.writes.get((db.id, key))
    abort = written.abort if written is not None else AbortInfo(prev, prev_deleted)
    values = {"db_id": db.id, "key": key, "prev_lsn": prev, "data": data, "txn_id": txn.id,
              "txn_prev_lsn": txn.last_lsn, "abort_lsn": abort.lsn, "abort_known_deleted": abort.known_deleted}
    lsn = core.log_entry(LN_TX, values)
    if exact:
        bin_node.update_slot(index, lsn, False, data)
    else:
        bin_node.insert_slot(index, key, lsn, False, data)
    bin_node.dirty = True
    txn.note_write(db.id, key, lsn, False, abort, prev, False)
    fast.held_counts(core.stats)["nPuts"] += 1
    if not exact and bin_node.n_entries > core.config.node_max_entries:
        db.tree.split_if_needed(bin_node)
    return lsn


__all__ = ["Database"]
