"""The feeder (JE's ``Feeder``): the master's sender of the replication stream to one replica.

The master runs one feeder per replica, on the connection the replica
opened (after the handshake, :mod:`.network`). The replica asks where to
start (``StartStream``: the next VLSN it needs); the feeder finds each
VLSN from there through the VLSN index, and sends the replicated entries in
VLSN order, one ``Entry`` message each (:mod:`.wire`: the VLSN, the type
code, the item as logged, and an LN's database name, since database ids are
node-local). Finding an entry (JE `VLSNIndex`, "Gatekeeper for waiting for the
most recently logged entries", :mod:`minidb.replication.vlsn.wait`): first
the log item the put that woke the feeder handed over in the wait latch, then
the index's log item cache (the entries just logged, each held as logged),
and last the log, through a forward VLSN scanner, which holds its bucket and
reads the log from the nearest mapping at or below. The feeder counts each
source in its statistics (``nItemsFromWaitLatch``, ``nItemsFromCache``,
``nItemsFromLog``); only the last reads the log. Invariants:

- the feeder sends VLSN n+1 only after VLSN n, and only VLSNs the master
  holds (up to its range's last): the replica's stream has no gaps;
- it starts only at a VLSN inside the master's range, or just after it: an
  older one was cleaned from the master's log (the replica needs a network
  restore), a newer one means the replica holds entries the master does not
  and skipped syncup; both are a :class:`FeederError` and the connection is
  closed;
- before the stream starts it answers the replica's syncup requests
  (``EntryRequest``: its own entry at a VLSN, by LSN-neutral checksum,
  :mod:`.syncup`), so a replica that is ahead finds the matchpoint, rolls
  back, and asks for the stream from there;
- only a master feeds.

**Acks** (:mod:`.ack`, :mod:`.durability`): a feeder registers itself with
the master's ``feeder_txns`` (the master counts its *active* feeders before a
commit); it sends the Commit of a transaction whose commit waits for acks as
a ``Commit`` message (with the replica sync policy), and hands
every ``Ack`` it reads to ``feeder_txns.note_ack``. An ack for a VLSN the
master has not logged is refused (a :class:`FeederError`, the connection
closed); one for a commit nobody waits for is ignored and counted.

**File protection** (JE's ``FileProtector``, :mod:`minidb.logstore.cleaner.protect`):
from the replica's StartStream on, the feeder protects the log files from
the one holding its next VLSN, so the cleaner never deletes a file it still
has to send; the protection moves forward as it sends, and is released when
the feeder stops (:meth:`Feeder.close`, or a refused stream).

**Stepped or blocking.** :meth:`Feeder.pump` never blocks: it reads what
arrived (StartStream, Acks) and sends everything logged since its last call,
so the in-memory network's script (or a node's loop) decides when messages
move. :meth:`Feeder.feed` is one round of JE's feeder output thread: a
caught-up feeder blocks on the VLSN index for its next VLSN (up to
``FeederConfig.wait_ms``, JE's heartbeat interval; a timeout is a round that
sent nothing) and is woken by the put of that VLSN, with the entry in hand;
it then sends everything logged. :meth:`Feeder.start_thread` runs rounds in a
thread of its own until :meth:`Feeder.close` (which cancels the wait of this
feeder alone and joins the thread) or until the index closes with its
environment (the wait ends with ``IndexClosedError``, the feeder closes).
The thread never sleeps and never polls: it goes round once per wake-up
(``nWakeups``). Acks are read at the start of each round. Example (three
entries logged, the replica holding none)::

    feeder = Feeder(master, channel, "n2")
    net.deliver(); feeder.pump()     # StartStream(1) arrives: Entry 1, 2, 3 sent; returns 3
    feeder.start_thread()            # blocks on VLSN 4
    db.put("k", "v")                 # VLSN 4: the put wakes the feeder, which sends it without reading the log
    feeder.close()                   # the wait for VLSN 5 is cancelled, the thread ends

Locking: the feeder's thread takes no lock of its own; it reads the master's
range without a mutex and waits outside every mutex (:mod:`minidb.replication.vlsn.wait`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from minidb.errors import UserError
from minidb.log import LogEntry
from minidb.replication.errors import FeederError, WaitCancelledError, WaitTimeoutError
from minidb.replication.group.membership import NodeState
from minidb.replication.stream import wire
from minidb.replication.stream.durability import SYNC_CODES
from minidb.replication.syncup.syncup import feeder_answer
from minidb.replication.vlsn.scanner import not_erased
from minidb.replication.vlsn.wait import FROM_CACHE, FROM_LOG, FROM_WAIT_LATCH, LogItem, WaitCancel
from minidb.stats import Stats

if TYPE_CHECKING:
    from minidb.replication.env import ReplicatedEnvironment


FEEDER_STATS = [FROM_WAIT_LATCH, FROM_CACHE, FROM_LOG, "nWakeups", "nWaitTimeouts"]


@dataclass(frozen=True)
class FeederConfig:
    """How long a caught-up feeder blocks on the VLSN index in one round of :meth:`Feeder.feed`.

    ==============  ==========================  =======
    setting         JE parameter                default
    ==============  ==========================  =======
    ``wait_ms``     je.rep.heartbeatInterval    1000
    ==============  ==========================  =======

    JE's feeder sends a heartbeat when a wait times out; minidb's heartbeats
    travel with the elections (:mod:`minidb.replication.group.elections`), so
    a round that times out just ends, and the next one waits again.
    """

    wait_ms: int = 1000

    def __post_init__(self) -> None:
        if not isinstance(self.wait_ms, int) or self.wait_ms < 0:
            raise UserError(f"wait_ms {self.wait_ms!r} must be a whole number of ms, 0 or more")


class Feeder:
    """Streams the master's replicated entries to one replica (see the module documentation)."""

    def __init__(self, master: "ReplicatedEnvironment", channel, replica_name: str,
                 config: FeederConfig | None = None):
        self.master = master
        self.channel = channel
        self.replica_name = replica_name
        self.config = config or FeederConfig()
        self.stats = Stats("feeder", FEEDER_STATS)
        self.saved_shutdown_exception: Exception | None = None  # what stopped the thread, if not a close
        self._cancel = WaitCancel()
        self._thread: threading.Thread | None = None
        self.next_vlsn: int | None = None  # set by the replica's StartStream
        self.scanner = master.vlsn_index.forward_scanner()
        self.acked_vlsn = 0  # the highest Commit VLSN the replica acknowledged
        self.sent = 0
        self.syncup_requests = 0  # EntryRequests answered (syncup, :mod:`.syncup`)
        self.restore_requested: str | None = None  # the replica found no matchpoint: why
        self.protected = None  # the files this feeder still has to send (a ProtectedFileSet), once started
        self.closed = False
        master.feeder_txns.add_feeder(self)

    @property
    def active(self) -> bool:
        """Streaming: the replica asked for its start and the connection is open."""
        return not self.closed and self.next_vlsn is not None and not self.channel.closed

    @property
    def protector(self):
        return self.master.env.cleaner.protector

    @property
    def group_name(self) -> str:
        return self.master.group.name if self.master.group is not None else "standalone"

    @property
    def cache_hits(self) -> int:
        """Entries found in the index's two-level cache (the wait latch or the log item cache), not the log."""
        return self.stats[FROM_WAIT_LATCH] + self.stats[FROM_CACHE]

    def pump(self, limit: int | None = None, timeout: float | None = 0) -> int:
        """Read what the replica sent, then send the entries it still lacks (at most ``limit``); never
        blocks on the index.

        ``timeout``: how long to wait for a first message (over TCP; the in-memory network never waits).
        """
        self._read_messages(timeout)
        if self.next_vlsn is None:
            return 0
        self._check_master()
        return self._send_logged(limit)

    def feed(self) -> int:
        """One round of JE's feeder output thread: read what arrived, block on the VLSN index until the
        next VLSN is logged (at most ``config.wait_ms``), then send everything logged; how many sent.

        Raises :class:`WaitCancelledError` when :meth:`close` cancels the wait, :class:`IndexClosedError`
        when the index closes; 0 after a timeout, or before the replica asked for its start."""
        self._read_messages(0)
        if self.next_vlsn is None or self.closed:
            return 0
        self._check_master()
        try:
            item, source = self.master.vlsn_index.await_item(self.next_vlsn, self.config.wait_ms / 1000,
                                                             self._cancel)
        except WaitTimeoutError:
            self.stats.add("nWaitTimeouts")
            return 0
        finally:
            self.stats.add("nWakeups")
        return self._send_logged(None, (item, source))

    def start_thread(self) -> threading.Thread:
        """Run :meth:`feed` round after round in a thread of its own, until :meth:`close` or the index closes."""
        if self.next_vlsn is None or self.closed:
            raise UserError(f"the feeder to {self.replica_name} starts its thread once the replica asked for its "
                            "start (StartStream), and only while open")
        if self._thread is not None:
            raise UserError(f"the feeder to {self.replica_name} already runs its thread")
        self._thread = threading.Thread(target=self.run, name=f"feeder {self.master.node_name} -> "
                                                              f"{self.replica_name}", daemon=True)
        self._thread.start()
        return self._thread

    def run(self) -> None:
        """The thread's loop; an error other than a close stops it, closes the feeder and is kept in
        ``saved_shutdown_exception`` (JE's name)."""
        try:
            while not self.closed:
                self.feed()
        except WaitCancelledError:
            pass  # close() cancelled the wait
        except Exception as e:  # noqa: BLE001 - IndexClosedError, a closed connection...: never silently
            self.saved_shutdown_exception = e
        finally:
            self.close()

    def _check_master(self) -> None:
        if self.master.state is not NodeState.MASTER:
            self.close()
            raise FeederError(f"node {self.master.node_name} is {self.master.state.value}: only the master feeds "
                              f"replica {self.replica_name}")

    def _send_logged(self, limit: int | None, first: tuple[LogItem | None, str] | None = None) -> int:
        """Send the entries from ``next_vlsn`` to the master's last (at most ``limit``); ``first``: the
        item of ``next_vlsn`` and where it came from, if a wait already found it."""
        sent = 0
        while self.next_vlsn <= self.master.range.last and (limit is None or sent < limit) and not self.closed:
            entry = self._entry(self.next_vlsn, first)
            first = None
            fields = dict(vlsn=self.next_vlsn, type_code=entry.header.type_code, db_name=self._db_name(entry),
                          item=entry.item)
            sync = self.master.feeder_txns.replica_sync(entry.txn_id) if entry.type_name == "Commit" else None
            if sync is None:
                self.channel.send(wire.encode(self.group_name, "Entry", **fields))
            else:
                self.channel.send(wire.encode(self.group_name, "Commit", **fields, replica_sync=SYNC_CODES[sync]))
            self.next_vlsn += 1
            sent += 1
            self._protect_from(entry.lsn.file)  # the next VLSN lives in this file or a later one
        self.sent += sent
        return sent

    def _protect_from(self, file_number: int) -> None:
        """Protect the files from ``file_number`` on (moving this feeder's protection forward)."""
        old = self.protected
        if old is not None and old.first_file == file_number:
            return
        self.protected = self.protector.protect(f"feeder to {self.replica_name}", first_file=file_number)
        if old is not None:
            self.protector.release(old)

    def close(self) -> None:
        """Stop feeding: wake and join the thread, release the protected files, leave the master's feeders,
        close the connection."""
        self.closed = True
        self._cancel.cancel()  # this feeder's wait only: other feeders waiting for the same VLSN go on
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
            self._thread = None
        if self.protected is not None:
            self.protector.release(self.protected)
            self.protected = None
        self.master.feeder_txns.remove_feeder(self)
        self.channel.close()

    def _read_messages(self, timeout: float | None) -> None:
        while (message := self.channel.receive(timeout)) is not None:
            timeout = 0
            self.handle(message)

    def handle(self, message: wire.Message) -> None:
        """One message from the replica (a node's loop hands over the first one, read to choose the service)."""
        if message.type == "StartStream":
            self._start(message["start_vlsn"])
        elif message.type == "Ack":
            self._ack(message["txn_id"], message["vlsn"])
        elif message.type == "EntryRequest":  # syncup: the replica compares its sync points with ours
            kind, values = feeder_answer(self.master, message["vlsn"])
            self.channel.send(wire.encode(self.group_name, kind, **values))
            self.syncup_requests += 1
        elif message.type == "RestoreRequest":
            self.restore_requested = message["reason"]

    def _ack(self, txn_id: int, vlsn: int) -> None:
        if vlsn > self.master.range.last:
            self.close()
            raise FeederError(f"replica {self.replica_name} acknowledges txn {txn_id} at VLSN {vlsn}, which master "
                              f"{self.master.node_name} has not logged (its last is {self.master.range.last}): "
                              "refused, connection closed")
        self.acked_vlsn = max(self.acked_vlsn, vlsn)
        self.master.feeder_txns.note_ack(self.replica_name, txn_id, vlsn)

    def _start(self, vlsn: int) -> None:
        current = self.master.range
        first = current.first if not current.is_empty else self.master.next_stream_vlsn
        if vlsn < first:
            self.close()
            raise FeederError(f"replica {self.replica_name} asks for VLSN {vlsn}, but the master's log starts at "
                              f"VLSN {first} (cleaned): the replica needs a network restore")
        if vlsn > self.master.next_stream_vlsn:
            self.close()
            raise FeederError(f"replica {self.replica_name} asks for VLSN {vlsn}, after the master's last "
                              f"({current.last}): it holds entries the master does not; it must sync up first "
                              "(ReplicaFeederSyncup, Replica(..., syncup=True)) and roll them back")
        self.next_vlsn = vlsn
        log = self.master.log
        self._protect_from(log.end_lsn.file if vlsn > current.last else self.master.vlsn_index.get_lte_lsn(vlsn).file)

    def _entry(self, vlsn: int, found: tuple[LogItem | None, str] | None = None) -> LogEntry:
        """The entry of ``vlsn``: the item ``found`` by a wait (handed over in the wait latch), else the
        log item cache's, else the log's (at the item's LSN, or by a forward scan)."""
        item, source = found if found is not None else self.master.vlsn_index.await_item(vlsn, timeout=0)
        if item is not None and item.entry is not None:
            self.stats.add(source)
            return item.entry
        self.stats.add(FROM_LOG)
        if item is not None:
            return not_erased(self.master.log.read(item.lsn))
        return self.scanner.find(vlsn)

    def _db_name(self, entry: LogEntry) -> str:
        db_id = entry.values.get("db_id")
        impl = self.master.env.db_tree.get_by_id(db_id) if db_id is not None else None
        return impl.name if impl is not None else ""

    def __repr__(self) -> str:
        return f"Feeder({self.master.node_name} -> {self.replica_name}, next VLSN {self.next_vlsn})"


__all__ = ["Feeder", "FeederConfig", "FEEDER_STATS"]
