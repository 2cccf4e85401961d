"""Gets and puts with their checks inline (twin of :class:`minidb.logstore.database.Database`).

What a get or put checks is the same; only how often Python steps through it
changes:

- a key or data is converted (``as_bytes``) only when it is not already
  ``bytes``, the usual case;
- the environment is asked ``check_usable`` only when ``env.closed`` or
  ``env.invalid`` says it would raise, and a transaction is checked only when
  one is given (the reference calls both every time);
- ``nGets`` is counted with ``Stats.add_held``, which takes no second lock:
  the environment's counters change only under its latch, which a get holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidb.errors import as_bytes
from minidb.logstore.database import Database as ReferenceDatabase

if TYPE_CHECKING:
    from minidb.log import LSN
    from minidb.logstore.txn.txn import Transaction


class Database(ReferenceDatabase):
    def _check(self, txn: "Transaction | None") -> None:
        env = self.env
        if env.closed or env.invalid is not None:
            env.check_usable()
        if self.impl.removed:
            self.refuse_removed()
        if txn is not None:
            self._txn(txn)

    def get(self, key: bytes | str, txn: "Transaction | None" = None) -> bytes | None:
        if type(key) is not bytes:
            key = as_bytes(key, "key")
        env = self.env
        with env.latch:
            self._check(txn)
            value = env.records.read(self.impl, key, txn)
            env.stats.add_held("nGets")
            env.after_operation(read=True)
            return value

    def put(self, key: bytes | str, data: bytes | str, txn: "Transaction | None" = None) -> LSN:
        if type(key) is not bytes:
            key = as_bytes(key, "key")
        if type(data) is not bytes:
            data = as_bytes(data, "data")
        lsn = self._write(key, data, txn, "put a record")
        assert lsn is not None
        return lsn


__all__ = ["Database"]
