"""The storage engines the peers section measures minidb against, behind one small interface.

Each engine is a :class:`Peer`: it opens a store in a directory of its own (every file it writes is
in that directory, so :func:`bench.report.crash_copy` copies what a crash would leave), and offers
the five things the peers section times:

- ``put_batch(items)``: insert the pairs and commit them, not durably where the engine allows it
  (the fsync is left to ``flush``);
- ``flush()``: make everything put so far durable;
- ``get(key)``: the value stored under ``key``;
- ``committer()``: a function for one thread that puts one pair and commits it durably (an fsync
  before it returns); threads that share an engine with no concurrent writers take turns;
- ``close()``.

What each engine can and cannot do, as the section says it:

============  ================================  ======================================
engine        puts in batches of 1,000          a durable commit
============  ================================  ======================================
log store     ``Durability.NO_SYNC``, one sync  ``Durability.SYNC``
page store    ``commit(durable=False)``         ``commit()``
ZODB          FileStorage fsyncs every commit   every commit (a connection per thread)
Durus         no fsync at commit                commit, then an fsync of its file
bplustree     its WAL's fsync turned off        every insert (its only mode)
LMDB          ``sync=False``, one ``sync()``    ``sync=True``
sqlite3       WAL, ``synchronous=OFF``          WAL, ``synchronous=FULL``
============  ================================  ======================================

bplustree has no unsorted batch: each insert is a transaction of its own that appends whole pages
to its WAL and fsyncs a commit frame. To time its tree rather than 100,000 fsyncs, its fsync is
switched off while the batches are put (its module's ``fsync_file_and_dir``) and the WAL is
fsynced once by ``flush``; durable commits keep it on.

A peer whose package is not installed is skipped: :func:`available` says why in one line.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence

from bench import report
from minidb.io import OSDisk
from minidb.logstore import Durability, Environment, EnvironmentConfig
from minidb.pagestore import StorageManager

Pair = tuple[bytes, bytes]
KEY_SIZE, VALUE_SIZE = 16, 100
LOGSTORE, PAGESTORE = "minidb log store", "minidb page-store B+tree"
ZODB_, DURUS, BPLUSTREE, LMDB, SQLITE = "ZODB", "Durus", "bplustree", "LMDB", "sqlite3"


class Peer:
    """One engine's store in ``path`` (see the module documentation)."""

    name = ""
    modules: tuple[str, ...] = ()  # what must import for the engine to run
    concurrent = True              # whether threads may write at once (else they take turns)

    def __init__(self, path: str) -> None:
        self.path = path
        self._turns = threading.Lock()

    def put_batch(self, items: Sequence[Pair]) -> None:
        raise NotImplementedError

    def flush(self) -> None:
        raise NotImplementedError

    def get(self, key: bytes) -> bytes | None:
        raise NotImplementedError

    def commit_one(self, key: bytes, value: bytes) -> None:
        raise NotImplementedError

    def committer(self) -> Callable[[bytes, bytes], None]:
        if self.concurrent:
            return self.commit_one

        def taking_turns(key: bytes, value: bytes) -> None:
            with self._turns:
                self.commit_one(key, value)
        return taking_turns

    def close(self) -> None:
        raise NotImplementedError

    def recovery_bytes(self) -> int:
        """The bytes an open after a crash has to go through: its log, or its whole file."""
        return sum(os.path.getsize(os.path.join(self.path, name)) for name in os.listdir(self.path)
                   if self.recovers_from(name))

    def recovers_from(self, name: str) -> bool:
        return True


class LogStore(Peer):
    name = LOGSTORE

    def __init__(self, path: str) -> None:
        super().__init__(path)
        config = EnvironmentConfig(checkpoint_bytes_interval=None, trace=False, file_max=64 * 1024 * 1024)
        self.env = Environment.open(OSDisk(path, create=True), config)
        self.db = self.env.database("bench")

    def put_batch(self, items: Sequence[Pair]) -> None:
        with self.env.begin(Durability.NO_SYNC) as txn:
            for key, value in items:
                self.db.put(key, value, txn=txn)

    def flush(self) -> None:
        self.env.sync()

    def get(self, key: bytes) -> bytes | None:
        return self.db.get(key)

    def commit_one(self, key: bytes, value: bytes) -> None:
        with self.env.begin(Durability.SYNC) as txn:
            self.db.put(key, value, txn=txn)

    def close(self) -> None:
        self.env.close()


class PageStore(Peer):
    name = PAGESTORE
    FRAMES = 8_192  # 64 MiB of 8 KiB pages: the pool holds the whole index

    def __init__(self, path: str, pages: int = 8_192) -> None:
        super().__init__(path)
        disk = OSDisk(path, create=True)
        options = dict(frames=min(self.FRAMES, pages), file_max=64 * 1024 * 1024, restart_trace=False)
        if any(name.endswith(".vol") for name in os.listdir(path)):
            self.sm = StorageManager.open(disk, **options)
            self.index = self.sm.find_index("bench")
        else:
            self.sm = StorageManager.format(disk, num_pages=pages, page_size=8192, **options)
            with self.sm.transaction() as t:
                self.index = self.sm.create_index(t, "bytes", name="bench")

    def put_batch(self, items: Sequence[Pair]) -> None:
        sm, index = self.sm, self.index
        with sm.transaction(durable=False) as t:
            for key, value in items:
                sm.index_insert(t, index, key, value)

    def flush(self) -> None:
        self.sm.log.sync()  # what a durable commit waits for: the log forced, the batches' commits in it

    def get(self, key: bytes) -> bytes | None:
        with self.sm.transaction(durable=False) as t:
            found = self.sm.index_lookup(t, self.index, key)
        return found[0] if found else None

    def commit_one(self, key: bytes, value: bytes) -> None:
        with self.sm.transaction() as t:
            self.sm.index_insert(t, self.index, key, value)

    def close(self) -> None:
        self.sm.close()

    def recovers_from(self, name: str) -> bool:
        return name.endswith(".jdb")  # the log; the volume is formatted to its size beforehand


class Zodb(Peer):
    name = ZODB_
    modules = ("ZODB", "BTrees", "transaction")

    def __init__(self, path: str) -> None:
        super().__init__(path)
        import transaction
        import ZODB
        import ZODB.FileStorage
        from BTrees.OOBTree import OOBTree
        self.transaction, self.OOBTree = transaction, OOBTree
        self.db = ZODB.DB(ZODB.FileStorage.FileStorage(os.path.join(path, "data.fs")))
        self.tm = transaction.TransactionManager()
        self.conn = self.db.open(self.tm)
        root = self.conn.root()
        if "bench" not in root:
            root["bench"] = OOBTree()
            self.tm.commit()
        self.tree = root["bench"]
        self.local = threading.local()

    def put_batch(self, items: Sequence[Pair]) -> None:
        tree = self.tree
        for key, value in items:
            tree[key] = value
        self.tm.commit()

    def flush(self) -> None:
        pass  # every commit was fsynced

    def get(self, key: bytes) -> bytes | None:
        return self.tree.get(key)

    def committer(self) -> Callable[[bytes, bytes], None]:
        # A connection and a tree of its own per thread: two threads changing one BTree bucket conflict.
        tm = self.transaction.TransactionManager()
        conn = self.db.open(tm)
        name = f"thread-{threading.get_ident()}-{id(tm)}"
        conn.root()[name] = tree = self.OOBTree()
        tm.commit()

        def commit_one(key: bytes, value: bytes) -> None:
            tree[key] = value
            tm.commit()
        return commit_one

    def close(self) -> None:
        self.conn.close()
        self.db.close()

    def recovers_from(self, name: str) -> bool:
        return name == "data.fs"


class Durus(Peer):
    name = DURUS
    modules = ("durus",)
    concurrent = False

    def __init__(self, path: str) -> None:
        super().__init__(path)
        import logging

        from durus.btree import BTree
        from durus.connection import Connection
        from durus.file_storage import FileStorage
        logging.getLogger("durus").setLevel(logging.WARNING)  # not a line per commit on the terminal
        self.storage = FileStorage(os.path.join(path, "data.durus"))
        self.conn = Connection(self.storage)
        root = self.conn.get_root()
        if "bench" not in root:
            root["bench"] = BTree()
            self.conn.commit()
        self.tree = root["bench"]

    def put_batch(self, items: Sequence[Pair]) -> None:
        tree = self.tree
        for key, value in items:
            tree[key] = value
        self.conn.commit()

    def flush(self) -> None:
        self.storage.shelf.get_file().fsync()

    def get(self, key: bytes) -> bytes | None:
        return self.tree.get(key)

    def commit_one(self, key: bytes, value: bytes) -> None:
        self.tree[key] = value
        self.conn.commit()
        self.flush()  # Durus's commit flushes its file but does not fsync it

    def close(self) -> None:
        self.storage.close()

    def recovers_from(self, name: str) -> bool:
        return name == "data.durus"


class BPlusTree(Peer):
    name = BPLUSTREE
    modules = ("bplustree",)

    def __init__(self, path: str) -> None:
        super().__init__(path)
        import bplustree
        import bplustree.memory
        from bplustree.serializer import Serializer

        class BytesSerializer(Serializer):
            def serialize(self, obj: bytes, key_size: int) -> bytes:
                return obj

            def deserialize(self, data: bytes) -> bytes:
                return data

        self.memory = bplustree.memory
        self.file = os.path.join(path, "tree.db")
        # 16 KiB pages hold 100 entries of 16 + 100 bytes; no value needs an overflow page.
        self.tree = bplustree.BPlusTree(self.file, page_size=16384, order=100, key_size=KEY_SIZE,
                                        value_size=VALUE_SIZE, cache_size=4096, serializer=BytesSerializer())

    @contextlib.contextmanager
    def _no_fsync(self) -> Iterator[None]:
        real = self.memory.fsync_file_and_dir
        self.memory.fsync_file_and_dir = lambda *_: None
        try:
            yield
        finally:
            self.memory.fsync_file_and_dir = real

    def put_batch(self, items: Sequence[Pair]) -> None:
        with self._no_fsync():
            insert = self.tree.insert
            for key, value in items:
                insert(key, value, replace=True)

    def flush(self) -> None:
        for name in (self.file, self.file + "-wal"):
            if os.path.exists(name):
                report.fsync_path(name)

    def get(self, key: bytes) -> bytes | None:
        return self.tree.get(key)

    def commit_one(self, key: bytes, value: bytes) -> None:
        self.tree.insert(key, value, replace=True)

    def close(self) -> None:
        self.tree.close()

    def recovers_from(self, name: str) -> bool:
        return name.startswith("tree.db")  # the tree and its WAL


class Lmdb(Peer):
    name = LMDB
    modules = ("lmdb",)

    def __init__(self, path: str) -> None:
        super().__init__(path)
        import lmdb
        self.env = lmdb.open(path, map_size=4 << 30, sync=False, metasync=False)

    def put_batch(self, items: Sequence[Pair]) -> None:
        with self.env.begin(write=True) as txn:
            for key, value in items:
                txn.put(key, value)

    def flush(self) -> None:
        self.env.sync(True)

    def get(self, key: bytes) -> bytes | None:
        with self.env.begin() as txn:
            return txn.get(key)

    def commit_one(self, key: bytes, value: bytes) -> None:
        with self.env.begin(write=True) as txn:
            txn.put(key, value)
        self.env.sync(True)  # opened with sync=False for the batches: this commit's fsync

    def close(self) -> None:
        self.env.close()

    def recovers_from(self, name: str) -> bool:
        return name == "data.mdb"


class Sqlite(Peer):
    name = SQLITE

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.file = os.path.join(path, "bench.db")
        self.conn = self._connect()
        self.conn.execute("PRAGMA synchronous=OFF")
        self.conn.execute("CREATE TABLE IF NOT EXISTS kv (key BLOB PRIMARY KEY, value BLOB NOT NULL)")

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.file, isolation_level=None, check_same_thread=False, timeout=60)
        conn.execute("PRAGMA journal_mode=WAL")
        return conn

    def put_batch(self, items: Sequence[Pair]) -> None:
        self.conn.execute("BEGIN")
        self.conn.executemany("INSERT OR REPLACE INTO kv VALUES (?, ?)", items)
        self.conn.execute("COMMIT")

    def flush(self) -> None:
        report.fsync_path(self.file + "-wal")

    def get(self, key: bytes) -> bytes | None:
        row = self.conn.execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def committer(self) -> Callable[[bytes, bytes], None]:
        conn = self._connect()
        conn.execute("PRAGMA synchronous=FULL")

        def commit_one(key: bytes, value: bytes) -> None:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (key, value))
            conn.execute("COMMIT")
        return commit_one

    def close(self) -> None:
        self.conn.close()

    def recovers_from(self, name: str) -> bool:
        return name in ("bench.db", "bench.db-wal")


PEERS: tuple[type[Peer], ...] = (LogStore, PageStore, Zodb, Durus, BPlusTree, Lmdb, Sqlite)
MINIDB = (LOGSTORE, PAGESTORE)


def available(peer: type[Peer]) -> str | None:
    """None if ``peer`` can run here, else one line saying why not."""
    for module in peer.modules:
        try:
            importlib.import_module(module)
        except ImportError as e:
            return f"{peer.name} skipped: `import {module}` failed ({e}); `make bench` installs the bench extra"
    return None
