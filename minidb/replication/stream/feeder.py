"""The feeder (JE's ``Feeder``): the master's sender of the replication stream to one replica.

The master runs one feeder per replica, on the connection the replica
opened (after the handshake, :mod:`.network`). The replica asks where to
start (``StartStream``: the next VLSN it needs); the feeder finds each
VLSN from there through the VLSN index, and sends the replicated entries in
VLSN order, one ``Entry`` message each (:mod:`.wire`: the VLSN, the type
code, the item as logged, and an LN's database name, since database ids are
node-local). Finding an entry (JE `VLSNIndex`, "Gatekeeper for waiting for the
most recently logged entries"): first the index's log item cache
(``wait_for_vlsn`` with no wait: the entries just logged), else a forward
VLSN scanner, which holds its bucket and reads the log from the nearest
mapping at or below. Invariants:

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

It is stepped, never blocks: :meth:`Feeder.pump` reads what arrived
(StartStream, Acks) and sends everything logged since its last call, so the
in-memory network's script decides when messages move. Example (three
entries logged, the replica holding none)::

    feeder = Feeder(master, channel, "n2")
    net.deliver(); feeder.pump()     # StartStream(1) arrives: Entry 1, 2, 3 sent; returns 3
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidb.log import LogEntry
from minidb.replication.errors import FeederError
from minidb.replication.group.membership import NodeState
from minidb.replication.stream import wire
from minidb.replication.stream.durability import SYNC_CODES
from minidb.replication.syncup.syncup import feeder_answer
from minidb.replication.vlsn.scanner import not_erased

if TYPE_CHECKING:
    from minidb.replication.env import ReplicatedEnvironment


class Feeder:
    """Streams the master's replicated entries to one replica (see the module documentation)."""

    def __init__(self, master: "ReplicatedEnvironment", channel, replica_name: str):
        self.master = master
        self.channel = channel
        self.replica_name = replica_name
        self.next_vlsn: int | None = None  # set by the replica's StartStream
        self.scanner = master.vlsn_index.forward_scanner()
        self.acked_vlsn = 0  # the highest Commit VLSN the replica acknowledged
        self.sent = 0
        self.cache_hits = 0  # entries found through the log item cache rather than a scan
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

    def pump(self, limit: int | None = None, timeout: float | None = 0) -> int:
        """Read what the replica sent, then send the entries it still lacks (at most ``limit``).

        ``timeout``: how long to wait for a first message (over TCP; the in-memory network never waits).
        """
        self._read_messages(timeout)
        if self.next_vlsn is None:
            return 0
        if self.master.state is not NodeState.MASTER:
            self.close()
            raise FeederError(f"node {self.master.node_name} is {self.master.state.value}: only the master feeds "
                              f"replica {self.replica_name}")
        sent = 0
        while self.next_vlsn <= self.master.range.last and (limit is None or sent < limit):
            entry = self._entry(self.next_vlsn)
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
        """Stop feeding: release the protected files, leave the master's feeders, close the connection."""
        if self.protected is not None:
            self.protector.release(self.protected)
            self.protected = None
        self.closed = True
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

    def _entry(self, vlsn: int) -> LogEntry:
        """The entry of ``vlsn``: from the log item cache if it is there, else by a forward scan."""
        item = self.master.vlsn_index.wait_for_vlsn(vlsn, timeout=0)
        if item is not None:
            self.cache_hits += 1
            return not_erased(self.master.log.read(item.lsn))
        return self.scanner.find(vlsn)

    def _db_name(self, entry: LogEntry) -> str:
        db_id = entry.values.get("db_id")
        impl = self.master.env.db_tree.get_by_id(db_id) if db_id is not None else None
        return impl.name if impl is not None else ""

    def __repr__(self) -> str:
        return f"Feeder({self.master.node_name} -> {self.replica_name}, next VLSN {self.next_vlsn})"


__all__ = ["Feeder"]
