"""Databases: a named B+tree of records in an environment.

:class:`~minidb.logstore.tree.tree.DatabaseImpl` is the environment's
record of a database (JE's ``DatabaseImpl``), beside its tree.

:class:`Database` is the handle applications use::

    db = env.database("accounts")
    db.put(b"alice", b"100")                 # no transaction; returns the LN's LSN
    with env.begin() as txn:                 # commit at the end of the block
        db.put(b"bob", b"50", txn=txn)
        db.delete(b"alice", txn=txn)         # the DEL_LN_TX's LSN (None if there was no record)
    db.get(b"bob")                           # -> b"50"
    list(db.items())                         # [(b"bob", b"50")]

Keys and data are bytes (a ``str`` is taken as UTF-8; one that has no UTF-8
form, such as a lone surrogate ``"\\ud800"``, is a UserError naming the
argument, and nothing is written). Every operation runs
under the environment latch, then lets the evictor bring the cache back under
its budget and the checkpointer start a checkpoint if the log has grown by
``checkpoint_bytes_interval`` since the last one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidb import impl
from minidb.errors import UserError, as_bytes, utf8
from minidb.logstore.errors import DatabaseNotFoundError
from minidb.logstore.tree.cursor import Cursor
from minidb.logstore.tree.tree import DatabaseImpl
from minidb.logstore.txn.txn import Transaction

if TYPE_CHECKING:
    from collections.abc import Iterator

    from minidb.log import LSN
    from minidb.logstore.env import Environment


class Database:
    """An application's handle on one database (see the module documentation)."""

    def __init__(self, env: "Environment", impl: DatabaseImpl):
        self.env = env
        self.impl = impl

    @property
    def name(self) -> str:
        return self.impl.name

    @property
    def id(self) -> int:
        return self.impl.id

    def _txn(self, txn: Transaction | None) -> Transaction | None:
        if txn is not None:
            if not isinstance(txn, Transaction):
                raise UserError(f"txn must be a Transaction of {self.env.where()} (env.begin()), not {txn!r}")
            if txn.core is not self.env.core:
                raise UserError(f"txn {txn.id} belongs to another environment")
            txn.check_open()
        return txn

    def _check(self, txn: Transaction | None) -> None:
        """Under the latch, before an operation: the environment usable, the database not removed, ``txn`` (if
        given) open and ours."""
        self.env.check_usable()
        if self.impl.removed:
            self.refuse_removed()
        self._txn(txn)

    def refuse_removed(self):
        raise DatabaseNotFoundError(f"database {self.impl.name!r} (id {self.impl.id}) of {self.env.where()} was "
                                    "removed: a syncup rollback undid its creation")

    def get(self, key: bytes | str, txn: Transaction | None = None) -> bytes | None:
        key = as_bytes(key, "key")
        env = self.env
        with env.latch:
            self._check(txn)
            value = env.records.read(self.impl, key, txn)
            env.stats.add("nGets")
            env.after_operation(read=True)  # a full disk stops the eviction, not the read
            return value

    def put(self, key: bytes | str, data: bytes | str, txn: Transaction | None = None) -> LSN:
        """Write a record; returns the LSN of the LN logged for it."""
        lsn = self._write(as_bytes(key, "key"), as_bytes(data, "data"), txn, "put a record")
        assert lsn is not None
        return lsn

    def delete(self, key: bytes | str, txn: Transaction | None = None) -> LSN | None:
        """Delete ``key``; the LSN of the deleted LN logged, or None if there was no such record."""
        return self._write(as_bytes(key, "key"), None, txn, "delete a record")

    def _write(self, key: bytes, data: bytes | None, txn: Transaction | None, what: str) -> LSN | None:
        """Log ``data`` (None: a deletion) for ``key`` under the latch, then let eviction and checkpoints run."""
        env = self.env
        with env.latch:
            self._check(txn)
            env.check_writable(what)
            lsn = env.records.write(self.impl, key, data, txn)
            env.after_operation()
            return lsn

    def cursor(self, txn: Transaction | None = None) -> Cursor:
        self._txn(txn)
        if self.impl.removed:
            self.refuse_removed()
        env = self.env
        return Cursor(env.core, env.records, env.locks, self.impl, txn)

    def items(self, start: bytes | str | None = None, stop: bytes | str | None = None,
              txn: Transaction | None = None) -> Iterator[tuple[bytes, bytes]]:
        """Records in key order, from ``start`` (inclusive) to ``stop`` (exclusive)."""
        cursor = self.cursor(txn)
        item = cursor.seek(start if start is not None else b"")
        stop_key = as_bytes(stop, "stop") if stop is not None else None
        while item is not None:
            if stop_key is not None and item[0] >= stop_key:
                return
            yield item
            item = cursor.next()

    def keys(self, txn: Transaction | None = None) -> list[bytes]:
        return [k for k, _ in self.items(txn=txn)]

    def __repr__(self) -> str:
        return f"Database({self.name!r}, id={self.id})"


#: the handle ``env.database(name)`` returns
DATABASE = impl.hot_spot(Database)


__all__ = ["DATABASE", "Database", "DatabaseImpl", "as_bytes", "utf8"]
