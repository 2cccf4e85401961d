"""Syncup (JE's ``ReplicaFeederSyncup``): a joining replica and its feeder agree on a matchpoint.

Before a replica (or a former master) takes the master's stream, it must
hold nothing the master does not: after a failover its log may end with
entries that never reached the new master. Syncup finds the *matchpoint*,
the newest sync point (Commit, Abort or Matchpoint) that both logs hold
with the same content at the same VLSN; everything after it is rolled back
(:mod:`.rollback`) and the stream resumes at the matchpoint's VLSN + 1.

The search (:func:`search_matchpoint`, a pure function; the engine calls it
from one place, :meth:`ReplicaFeederSyncup.pump`): the replica walks its
log backward from its last sync point (the backward VLSN scanner, which
skips entries already rolled back) and, for each candidate sync point, asks
the feeder for its entry at that VLSN, until the two agree. Entries are
compared by the **LSN-neutral item checksum** (:func:`item_checksum`): the
CRC-32 of the entry's type code (1 byte), its VLSN (8 bytes, little-endian)
and its item with every LSN in it read as NULL_LSN. LSNs are node-local (the
same entry sits at different offsets on each node, and an item holds LSNs:
``prev_lsn``, ``txn_prev_lsn``, ``abort_lsn``), so the checksum must leave
them out; two equal checksums at one VLSN mean the same replicated entry.
Invariants:

- the matchpoint is a sync point the feeder holds with the same checksum;
  no newer candidate agreed (it is the newest common one);
- no common sync point (the replica's candidates run out): a
  :class:`~minidb.replication.errors.NetworkRestoreRequiredError` (the
  replica must be restored from another node's files); nothing is changed;
- the feeder is asked only about sync points, one VLSN at a time, newest first.

Messages (codes and bytes in :mod:`.wire`): ``EntryRequest`` (replica ->
feeder), ``EntryInfo`` or ``EntryNotFound`` (feeder -> replica),
``RestoreRequest`` (replica -> feeder, when there is no matchpoint).

Stepped, never blocking: :meth:`ReplicaFeederSyncup.pump` re-runs the search
with the answers received so far; when the search needs an answer it does not
have, it sends one ``EntryRequest`` and returns. The in-memory network's
script moves the messages (the feeder answers in its own ``pump``); over TCP
``pump(timeout=...)`` waits for the answer. Example::

    syncup = ReplicaFeederSyncup(replica_env, channel, "n1")
    while not syncup.done:
        syncup.pump(); net.deliver(); feeder.pump(); net.deliver()
    syncup.result         # MatchpointSearchResults(matchpoint_vlsn=3, ..., examined=2)
    syncup.rollback       # RollbackResult of what was rolled back (None: nothing)
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from minidb import impl
from minidb.log import LSN, NULL_LSN, LogEntry
from minidb.log.fields import ItemFormatError, lsn_spans
from minidb.log.types import type_by_code
from minidb.replication.errors import NetworkRestoreRequiredError, SyncupError
from minidb.replication.stream import wire
from minidb.replication.syncup.rollback import RollbackResult, roll_back
from minidb.replication.vlsn.range import SYNC_TYPES

if TYPE_CHECKING:
    from minidb.replication.env import ReplicatedEnvironment

_NULL_LSN_BYTES = struct.pack("<Q", NULL_LSN.packed)
_TYPE_AND_VLSN = struct.Struct("<BQ")


def item_checksum(type_code: int, vlsn: int, item: bytes | memoryview) -> int:
    """The LSN-neutral checksum of a replicated entry: CRC-32 of type code, VLSN and item, LSNs read as NULL."""
    crc = zlib.crc32(_TYPE_AND_VLSN.pack(type_code, vlsn))
    entry_type = type_by_code(type_code)
    spans: list[tuple[int, int]] = []
    if entry_type is not None:
        try:
            spans = lsn_spans(entry_type.all_fields, item)
        except ItemFormatError:
            spans = []  # a malformed item compares by its raw bytes (it then agrees with nothing sound)
    pos = 0
    for start, end in spans:
        crc = zlib.crc32(_NULL_LSN_BYTES, zlib.crc32(item[pos:start], crc))
        pos = end
    return zlib.crc32(item[pos:], crc)


def entry_checksum(entry: LogEntry) -> int:
    assert entry.vlsn is not None
    return item_checksum(entry.header.type_code, entry.vlsn, entry.item)


@dataclass(frozen=True)
class Candidate:
    """One replicated entry of the replica's log, as the search sees it (newest first)."""

    vlsn: int
    type_name: str
    checksum: int
    lsn: LSN


@dataclass(frozen=True)
class FeederEntry:
    """The feeder's answer for one VLSN: its entry's type, LSN-neutral checksum and (node-local) LSN."""

    type_name: str
    checksum: int
    lsn: LSN


@dataclass(frozen=True)
class MatchpointSearchResults:
    """What the search found (JE's ``MatchpointSearchResults``).

    ``matchpoint_vlsn``/``matchpoint_lsn``: the matchpoint (0 and NULL_LSN when there is none:
    ``network_restore`` is then True); ``examined``: how many sync points were compared with the feeder.
    """

    matchpoint_vlsn: int
    matchpoint_lsn: LSN
    examined: int
    network_restore: bool

    def describe(self) -> str:
        if self.network_restore:
            return f"no common sync point after examining {self.examined}: a network restore is needed"
        return f"matchpoint VLSN {self.matchpoint_vlsn} at {self.matchpoint_lsn} ({self.examined} examined)"


def search_matchpoint(candidates: Iterable[Candidate],
                      feeder_entry: Callable[[int], FeederEntry | None]) -> MatchpointSearchResults:
    """The newest sync point among ``candidates`` (the replica's entries, newest first) that the feeder holds
    with the same checksum; ``feeder_entry(vlsn)`` is the feeder's entry at a VLSN (None: it has none)."""
    examined = 0
    for candidate in candidates:
        if candidate.type_name not in SYNC_TYPES:
            continue
        examined += 1
        theirs = feeder_entry(candidate.vlsn)
        if theirs is not None and theirs.checksum == candidate.checksum:
            return MatchpointSearchResults(candidate.vlsn, candidate.lsn, examined, False)
    return MatchpointSearchResults(0, NULL_LSN, examined, True)


def _matchpoint_from_exercise(hook: impl.Hook, student: Callable) -> Callable[..., MatchpointSearchResults]:
    """A student's ``find_matchpoint`` (exercise 14a: tuples, LSNs as ``LSN.packed``, the answer ``(vlsn or None,
    examined)``), its answer checked: a sync point among the candidates it read. A feeder answer that has not
    arrived yet interrupts the student's search as it does minidb's (``pump`` runs it again when it comes)."""
    def search(candidates: Iterable[Candidate], feeder_entry: Callable[[int], FeederEntry | None]) -> MatchpointSearchResults:
        read: dict[int, Candidate] = {}

        def mine() -> Iterator[tuple[int, str, int, int]]:
            for candidate in candidates:
                read[candidate.vlsn] = candidate
                yield candidate.vlsn, candidate.type_name, candidate.checksum, candidate.lsn.packed

        def theirs(vlsn: int) -> tuple[str, int, int] | None:
            entry = feeder_entry(vlsn)
            return None if entry is None else (entry.type_name, entry.checksum, entry.lsn.packed)

        answer = student(mine(), impl.engine_callback(theirs))
        if not (isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[1], int)
                and (answer[0] is None or isinstance(answer[0], int))):
            raise hook.wrong(f"returned {answer!r}, not (matchpoint VLSN or None, examined)")
        vlsn, examined = answer
        if vlsn is None:
            return MatchpointSearchResults(0, NULL_LSN, examined, True)
        if vlsn not in read or read[vlsn].type_name not in SYNC_TYPES:
            raise hook.wrong(f"returned VLSN {vlsn}: not a sync point among the entries it read")
        return MatchpointSearchResults(vlsn, read[vlsn].lsn, examined, False)
    return search


#: where :meth:`ReplicaFeederSyncup.pump` asks :func:`search_matchpoint` (exercise 14a's hook)
MATCHPOINT = impl.register("14a_matchpoint", "find_matchpoint", search_matchpoint, _matchpoint_from_exercise)


def replica_candidates(env: "ReplicatedEnvironment") -> Iterator[Candidate]:
    """The replica's replicated entries from its last sync point backward (the backward VLSN scanner)."""
    current = env.range
    if current.is_empty or not current.last_sync:
        return
    scanner = env.vlsn_index.backward_scanner()
    for vlsn in range(current.last_sync, current.first - 1, -1):
        entry = scanner.find(vlsn)
        yield Candidate(vlsn, entry.type_name, entry_checksum(entry), entry.lsn)


class _Unanswered(Exception):
    """Raised inside the search when the feeder's answer for a VLSN has not arrived yet."""

    def __init__(self, vlsn: int):
        self.vlsn = vlsn


class ReplicaFeederSyncup:
    """The replica's side of a syncup, stepped (see the module documentation).

    ``done`` once the matchpoint is found and everything after it rolled back (``rollback``: the
    :class:`~minidb.replication.syncup.rollback.RollbackResult`, None if nothing was after it);
    ``start_vlsn`` is then where the stream resumes.
    """

    def __init__(self, env: "ReplicatedEnvironment", channel, master_name: str, rollback_limit: int | None = None):
        self.env = env
        self.channel = channel
        self.master_name = master_name
        self.rollback_limit = rollback_limit
        self.answers: dict[int, FeederEntry | None] = {}
        self.requested: set[int] = set()
        self.result: MatchpointSearchResults | None = None
        self.rollback: RollbackResult | None = None
        self.done = False
        self._candidates: list[Candidate] = []
        self._source = replica_candidates(env)
        current = env.range
        if current.is_empty:  # nothing to agree on: the stream starts at the next VLSN
            self.done = True
            self.start_vlsn = env.next_stream_vlsn

    def _cached_candidates(self) -> Iterator[Candidate]:
        yield from self._candidates
        for candidate in self._source:
            self._candidates.append(candidate)
            yield candidate

    def _feeder_entry(self, vlsn: int) -> FeederEntry | None:
        if vlsn not in self.answers:
            raise _Unanswered(vlsn)
        return self.answers[vlsn]

    def pump(self, timeout: float | None = 0) -> bool:
        """Read the feeder's answers, advance the search (sending at most one request); True when done."""
        if self.done:
            return True
        self._read_answers(0 if not self.requested - set(self.answers) else timeout)
        try:
            result = MATCHPOINT.call(self._cached_candidates(), self._feeder_entry)  # the one call site
        except _Unanswered as waiting:
            if waiting.vlsn not in self.requested:
                self.requested.add(waiting.vlsn)
                self.channel.send(wire.encode(self.env.group.name, "EntryRequest", vlsn=waiting.vlsn))
            return False
        self.result = result
        if result.network_restore:
            reason = (f"node {self.env.node_name} and master {self.master_name} share no sync point "
                      f"(examined {result.examined}; replica range {self.env.range})")
            self.channel.send(wire.encode(self.env.group.name, "RestoreRequest", replica_vlsn=self.env.range.last,
                                          reason=reason))
            raise NetworkRestoreRequiredError(f"{reason}: a network restore is needed; nothing was rolled back")
        self.rollback = roll_back(self.env, result.matchpoint_vlsn, result.matchpoint_lsn, self.rollback_limit)
        self.start_vlsn = result.matchpoint_vlsn + 1
        self.done = True
        return True

    def _read_answers(self, timeout: float | None) -> None:
        while (message := self.channel.receive(timeout)) is not None:
            timeout = 0
            vlsn = message.values.get("vlsn")
            if message.type == "EntryInfo":
                entry_type = type_by_code(message["type_code"])
                if entry_type is None:
                    raise SyncupError(f"{self.channel.where}: the feeder's entry at VLSN {vlsn} has unknown type "
                                      f"0x{message['type_code']:02x}")
                self.answers[vlsn] = FeederEntry(entry_type.name, message["checksum"], LSN.unpack(message["lsn"]))
            elif message.type == "EntryNotFound":
                self.answers[vlsn] = None
            else:
                raise SyncupError(f"{self.channel.where}: unexpected {message.type} during syncup")

    def __repr__(self) -> str:
        state = self.result.describe() if self.result else f"{len(self.answers)} answers"
        return f"ReplicaFeederSyncup({self.env.node_name} with {self.master_name}: {state})"


def feeder_answer(master: "ReplicatedEnvironment", vlsn: int) -> tuple[str, dict]:
    """The feeder's answer to ``EntryRequest(vlsn)``: a message type and its fields."""
    current = master.range
    if current.is_empty or not current.first <= vlsn <= current.last:
        return "EntryNotFound", {"vlsn": vlsn, "first": current.first, "last": current.last}
    entry = master.vlsn_index.find(vlsn)
    return "EntryInfo", {"vlsn": vlsn, "type_code": entry.header.type_code, "checksum": entry_checksum(entry),
                         "lsn": entry.lsn.packed}


__all__ = ["item_checksum", "entry_checksum", "Candidate", "FeederEntry", "MatchpointSearchResults",
           "search_matchpoint", "replica_candidates", "ReplicaFeederSyncup", "feeder_answer"]
