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
  its steps inline (:func:`put_in_txn`): the reference's record lock, LN
  (``EnvCore.log_entry``'s append and count), slot, transaction note
  (``Transaction.note_write``) and split, in the same order, without the
  layers of calls between the database, the record operations, the
  environment's core and the transaction (a put with no transaction, or
  into a replicated database, takes the reference's path);
- the version an abort restores for a record new to the transaction and to
  the tree (none, known deleted) is one shared :class:`AbortInfo`: it is
  frozen, so no put can change what another's abort restores;
- after a put in a transaction, ``env.after_operation()`` is called only when
  its own test could find work (not while recovery runs, which puts into
  internal databases: a node budget passed, a checkpoint interval reached, a
  cleaner thread to wake): when none can, it would return at once;
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
from minidb.logstore.txn.txn import Transaction, TxnState, WriteRecord

if TYPE_CHECKING:
    from minidb.log import LSN

#: the version an abort restores for a record that did not exist: none, known deleted (frozen, so one serves all)
_NEW_RECORD = AbortInfo(NULL_LSN, True)


class Database(ReferenceDatabase):
    def _check(self, txn: "Transaction | None") -> None:
        env = self.env
        core = env.core
        if core.closed or core.invalid is not None:
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
            config = env.config
            budget, interval = config.node_budget, config.checkpoint_bytes_interval
            if not env.core.recovering and (
                    (budget is not None and env.evictor.resident_count() > budget)
                    or (interval is not None and env.checkpointer.bytes_since_last_end() >= interval)
                    or env.cleaner_thread is not None):
                env.after_operation()  # something may be due: the reference's own test decides
            return lsn


def put_in_txn(env, db, key: bytes, data: bytes, txn: "Transaction") -> "LSN":
    """``env.records.write(db, key, data, txn)``, a put in a transaction, with its steps inline: the
    same lock, LN, slot, transaction note, counts and split, in the same order."""
    core = env.core
    if core.config.replicated and db.replicated:
        return env.records.write(db, key, data, txn)
    db_id = db.id
    env.locks.lock_write(db_id, db.name, key, txn.id, txn.lock_timeout)
    bin_node = db.tree.search(key)
    index, exact = bin_node.find(key)
    record = (db_id, key)
    written = txn.writes.get(record)
    if exact:
        prev = bin_node.lsns[index]
        abort = written.abort if written is not None else AbortInfo(prev, bin_node.known_deleted[index])
    else:
        prev = NULL_LSN
        abort = written.abort if written is not None else _NEW_RECORD
    values = {"db_id": db_id, "key": key, "prev_lsn": prev, "data": data, "txn_id": txn.id,
              "txn_prev_lsn": txn.last_lsn, "abort_lsn": abort.lsn, "abort_known_deleted": abort.known_deleted}
    # core.log_entry(LN_TX, values): appended, then counted for the utilization tracker
    if core.read_only:
        core.check_writable("log LN_TX")
    log = core.log
    lsn = log.append(LN_TX, values)
    end = log.end_lsn
    core.utilization.count_new(lsn, end.offset - lsn.offset if end.file == lsn.file else log.read(lsn).size, "LN_TX")
    if exact:
        bin_node.update_slot(index, lsn, False, data)
    else:
        bin_node.insert_slot(index, key, lsn, False, data)
    bin_node.dirty = True
    # txn.note_write(db_id, key, lsn, False, abort, prev, False)
    if written is None:
        txn.writes[record] = WriteRecord(db_id, key, abort, [(lsn, False)])
        txn.order.append(record)
    else:
        lsns = written.lsns
        if lsns and not prev.is_null and prev == lsns[-1][0]:
            # Overwriting our own version: no abort can return to it, so it is obsolete now.
            core.utilization.count_obsolete(prev)
        lsns.append((lsn, False))
    if txn.first_lsn.is_null:
        txn.first_lsn = lsn
    txn.last_lsn = lsn
    fast.held_counts(core.stats)["nPuts"] += 1
    if not exact and bin_node.n_entries > core.config.node_max_entries:
        db.tree.split_if_needed(bin_node)
    return lsn


__all__ = ["Database"]
