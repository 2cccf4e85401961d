"""The replication wire format: one framed message format for every transport.

The nodes of a replication group talk in *messages* (JE's replication
protocol: the handshake, the entry stream from a feeder to a replica, acks,
heartbeats, elections, syncup). Every message travels as one *frame* of
explicit bytes, the same on the in-memory network and over TCP
(:mod:`.network`); no pickle, nothing is evaluated. Invariants:

- a frame names its group: a frame of another group is never acted on;
- a frame is self-delimiting and checksummed: a reader knows from the first
  12 bytes how many follow, and refuses an oversized frame *before* reading
  its body, so a bad peer cannot make a node buffer gigabytes;
- decoding either returns a whole, valid message or raises
  :class:`WireFormatError` naming what is wrong and where (which peer, which
  byte offset); nothing is ever half-decoded.

Frame layout (integers little-endian)::

    offset  size  field         struct "<4sBBHI" for the first 12 bytes
    ------  ----  -----------   ----------------------------------------------
       0      4   magic         b"MDBR" (minidb replication)
       4      1   version       WIRE_VERSION (1); another version is refused
       5      1   type          the message type code (table below)
       6      2   group_len     g: bytes of the group name, 1..MAX_GROUP_NAME
       8      4   length        n: bytes of the payload, 0..MAX_PAYLOAD
      12      g   group         the group's name, UTF-8
    12+g      n   payload       the message's fields, in table order
  12+g+n      4   checksum      CRC-32 of bytes 0 .. 12+g+n

The payload is the message type's fields, encoded by the log's field kinds
(:mod:`minidb.log.fields`: ``U64`` 8 bytes, ``STR`` a 2-byte length and
UTF-8, ``BYTES`` a 4-byte length and the bytes); a payload with bytes left
over after its fields is refused too.

Message types (JE's names; codes 0x01-0x0f handshake, 0x10-0x1f the entry
stream, 0x20-0x2f elections, 0x30-0x3f syncup, 0x40-0x4f network restore)::

    code  name                 fields                               status
    0x01  Handshake            node_name STR, node_priority U32     built
    0x02  HandshakeOk          node_name STR                        built
    0x03  HandshakeRefused     reason STR                           built
    0x10  StartStream          start_vlsn U64                       built
    0x11  Entry                vlsn U64, type_code U8,              built
                               db_name STR, item BYTES
    0x12  Ack                  txn_id I64, vlsn U64                 built
    0x13  Heartbeat            master_vlsn U64, time_ms U64         built
    0x14  HeartbeatResponse    replica_vlsn U64, time_ms U64        built
    0x15  Commit               the fields of Entry, then            built
                               replica_sync U8
    0x20  Propose              term U64, counter U64, proposer STR  built
    0x21  Promise              term U64, counter U64, proposer STR, built
                               promised U8, promised_term U64,
                               promised_counter U64, promised_by STR,
                               accepted_counter U64, accepted_by STR,
                               accepted_value STR, last_txn_end U64,
                               priority U32, node_name STR,
                               last_term U64
    0x22  Accept               term U64, counter U64, proposer STR, built
                               master STR
    0x23  Accepted             term U64, counter U64, proposer STR, built
                               accepted U8, promised_term U64,
                               promised_counter U64, promised_by STR,
                               node_name STR
    0x24  Result               term U64, master STR, counter U64,   built
                               proposer STR
    0x30  EntryRequest         vlsn U64                             built
    0x31  EntryInfo            vlsn U64, type_code U8,              built
                               checksum U32, lsn U64
    0x32  EntryNotFound        vlsn U64, first U64, last U64        built
    0x33  RestoreRequest       replica_vlsn U64, reason STR         built
    0x40  FileListRequest      reason STR                           built
    0x41  FileList             count U32, log_head U32,             built
                               total_bytes U64
    0x42  FileInfo             file_number U32, length U64,         built
                               checksum U32
    0x43  FileRequest          file_number U32                      built
    0x44  FileStart            file_number U32, length U64          built
    0x45  FileChunk            file_number U32, offset U64,         built
                               data BYTES
    0x46  FileEnd              file_number U32, length U64,         built
                               checksum U32
    0x47  RestoreDone          files U32, total_bytes U64           built
    0x48  RestoreRefused       reason STR                           built

An ``Entry`` carries one replicated log entry: its VLSN, its type code and
its item exactly as the master logged it (the log's field table), and, for
an LN, the name of its database (database ids are node-local; "" otherwise).

The election messages (:mod:`.elections`, JE's Paxos ``Proposer``,
``Acceptor`` and ``Learner``) all start with a *proposal number*: ``term``,
``counter`` and ``proposer`` (the proposing node's name), compared in that
order, so two nodes never make the same one. ``Promise`` and ``Accepted``
echo the proposal they answer; ``promised`` / ``accepted`` is 1 for yes, 0
for a refusal, and ``promised_*`` is the highest proposal the acceptor has
promised (on a refusal: the one that beat this proposal, term 0 for none).
A ``Promise`` also reports the proposal the acceptor accepted in this term
(``accepted_counter`` 0 and empty names for none) and its suitability to be
master: ``last_txn_end`` (its VLSN range's), its ``priority``, its
``node_name`` and ``last_term`` (the term of the last TermStart in its log, 0
for none). ``Result`` tells a learner who is master for a term; the
proposal that decided it, or counter 0 and ``proposer`` "" when a node
passes on a result it learned. Example: node ``n1``'s first proposal in
term 3, to group ``g``::

    4d 44 42 52  01  20  01 00  14 00 00 00  67  03 00 00 00 00 00 00 00
    magic        ver type g=1   n=20         "g" term 3
    01 00 00 00 00 00 00 00  02 00 6e 31  <crc32>
    counter 1                "n1"

A ``Commit`` (JE's protocol ``Commit`` message) is the ``Entry`` of a Commit
that the master's commit waits for acks: ``replica_sync`` says how the
replica logs it before it acknowledges (1 SYNC, 2 WRITE_NO_SYNC, 3 NO_SYNC;
:mod:`.durability`). A Commit nobody waits for travels as a plain ``Entry``
(the replica acknowledges it too, logged with its own default policy).

Syncup (:mod:`.syncup`): the replica asks for the feeder's entry at a VLSN
(``EntryRequest``); the feeder answers with the entry's type code, its
LSN-neutral item checksum (:func:`~minidb.replication.syncup.syncup.item_checksum`)
and, for display only, its LSN (``file << 32 | offset``) in ``EntryInfo``, or
``EntryNotFound`` with the range it holds (``first``, ``last``; 0 when
empty). A replica that finds no common sync point sends ``RestoreRequest``
(its last VLSN and why) before it stops. Example, the answer for VLSN 3
(a Commit, type 0x50, checksum 0x1234abcd, at LSN 0x1/0x2a0), payload only::

    03 00 00 00 00 00 00 00  50  cd ab 34 12  a0 02 00 00 01 00 00 00
    vlsn 3                   type checksum     lsn 0x1/0x2a0

Network restore (:mod:`minidb.replication.restore`, JE's ``NetworkRestore``
and ``LogFileFeeder``): a node that cannot sync up asks a member for its log
files (``FileListRequest``); the member answers ``FileList`` (how many
files, its log head: the first file it keeps, their total length), then one
``FileInfo`` per file (its number, the length sent and the CRC-32 of those
bytes). The node then asks for each file in turn (``FileRequest``); the
member sends ``FileStart``, the file's bytes in ``FileChunk`` messages (each
at the ``offset`` where the last one ended) and ``FileEnd`` with the length
and checksum of what it sent. ``RestoreDone`` ends a restore that was
installed; ``RestoreRefused`` says why a member cannot serve one. Example,
the ``FileInfo`` of file 1 (0x2a0 bytes, checksum 0x1234abcd), payload
only::

    01 00 00 00  a0 02 00 00 00 00 00 00  cd ab 34 12
    file 1       length 0x2a0             checksum

Example: the handshake of node ``n2`` (priority 1) to group ``g``::

    4d 44 42 52  01  01  01 00  08 00 00 00  67  02 00 6e 32  01 00 00 00  <crc32>
    magic        ver type g=1   n=8          "g" "n2"         priority 1
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Any

from minidb.log.fields import BYTES, I64, STR, U8, U32, U64, ItemFormatError, Kind, decode_fields, encode_fields
from minidb.replication.errors import WireFormatError, WireVersionError

MAGIC = b"MDBR"
WIRE_VERSION = 1
MAX_GROUP_NAME = 255
MAX_PAYLOAD = 16 * 1024 * 1024

_HEAD = struct.Struct("<4sBBHI")
HEAD_SIZE = _HEAD.size  # 12
_CRC = struct.Struct("<I")
CRC_SIZE = _CRC.size


@dataclass(frozen=True)
class MessageType:
    """One row of the message table."""

    name: str
    code: int
    fields: tuple[tuple[str, Kind], ...]


_PROPOSAL = (("term", U64), ("counter", U64), ("proposer", STR))
_PROMISED = (("promised_term", U64), ("promised_counter", U64), ("promised_by", STR))

MESSAGE_TYPES = [
    MessageType("Handshake", 0x01, (("node_name", STR), ("node_priority", U32))),
    MessageType("HandshakeOk", 0x02, (("node_name", STR),)),
    MessageType("HandshakeRefused", 0x03, (("reason", STR),)),
    MessageType("StartStream", 0x10, (("start_vlsn", U64),)),
    MessageType("Entry", 0x11, (("vlsn", U64), ("type_code", U8), ("db_name", STR), ("item", BYTES))),
    MessageType("Ack", 0x12, (("txn_id", I64), ("vlsn", U64))),
    MessageType("Heartbeat", 0x13, (("master_vlsn", U64), ("time_ms", U64))),
    MessageType("HeartbeatResponse", 0x14, (("replica_vlsn", U64), ("time_ms", U64))),
    MessageType("Commit", 0x15, (("vlsn", U64), ("type_code", U8), ("db_name", STR), ("item", BYTES),
                                 ("replica_sync", U8))),
    MessageType("Propose", 0x20, _PROPOSAL),
    MessageType("Promise", 0x21, _PROPOSAL + (("promised", U8),) + _PROMISED + (
        ("accepted_counter", U64), ("accepted_by", STR), ("accepted_value", STR), ("last_txn_end", U64),
        ("priority", U32), ("node_name", STR), ("last_term", U64))),
    MessageType("Accept", 0x22, _PROPOSAL + (("master", STR),)),
    MessageType("Accepted", 0x23, _PROPOSAL + (("accepted", U8),) + _PROMISED + (("node_name", STR),)),
    MessageType("Result", 0x24, (("term", U64), ("master", STR), ("counter", U64), ("proposer", STR))),
    MessageType("EntryRequest", 0x30, (("vlsn", U64),)),
    MessageType("EntryInfo", 0x31, (("vlsn", U64), ("type_code", U8), ("checksum", U32), ("lsn", U64))),
    MessageType("EntryNotFound", 0x32, (("vlsn", U64), ("first", U64), ("last", U64))),
    MessageType("RestoreRequest", 0x33, (("replica_vlsn", U64), ("reason", STR))),
    MessageType("FileListRequest", 0x40, (("reason", STR),)),
    MessageType("FileList", 0x41, (("count", U32), ("log_head", U32), ("total_bytes", U64))),
    MessageType("FileInfo", 0x42, (("file_number", U32), ("length", U64), ("checksum", U32))),
    MessageType("FileRequest", 0x43, (("file_number", U32),)),
    MessageType("FileStart", 0x44, (("file_number", U32), ("length", U64))),
    MessageType("FileChunk", 0x45, (("file_number", U32), ("offset", U64), ("data", BYTES))),
    MessageType("FileEnd", 0x46, (("file_number", U32), ("length", U64), ("checksum", U32))),
    MessageType("RestoreDone", 0x47, (("files", U32), ("total_bytes", U64))),
    MessageType("RestoreRefused", 0x48, (("reason", STR),)),
]
BY_CODE = {t.code: t for t in MESSAGE_TYPES}
BY_NAME = {t.name: t for t in MESSAGE_TYPES}


@dataclass(frozen=True)
class Message:
    """A decoded message: its group, its type's name and its field values."""

    group: str
    type: str
    values: dict[str, Any]

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def __str__(self) -> str:
        shown = ", ".join(f"{k}={v.hex()[:16] if isinstance(v, bytes) else v}" for k, v in self.values.items())
        return f"{self.type}({shown})"


def message_type(name: str) -> MessageType:
    found = BY_NAME.get(name)
    if found is None:
        raise WireFormatError(f"no message type {name!r} (known: {', '.join(BY_NAME)})")
    return found


def encode(group: str, type_name: str, **values: Any) -> bytes:
    """The frame of one message (see the module documentation)."""
    kind = message_type(type_name)
    name = group.encode("utf-8") if isinstance(group, str) else b""
    if not 1 <= len(name) <= MAX_GROUP_NAME:
        raise WireFormatError(f"a group name has 1..{MAX_GROUP_NAME} UTF-8 bytes, not {group!r}")
    payload = bytearray()
    try:
        encode_fields(kind.fields, values, payload, type_name)  # type: ignore[arg-type]
    except ItemFormatError as e:
        raise WireFormatError(f"cannot encode {type_name}: {e}") from None
    if len(payload) > MAX_PAYLOAD:
        raise WireFormatError(f"{type_name} payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    body = _HEAD.pack(MAGIC, WIRE_VERSION, kind.code, len(name), len(payload)) + name + bytes(payload)
    return body + _CRC.pack(zlib.crc32(body))


def frame_size(head: bytes, where: str = "frame") -> int:
    """The whole frame's size from its first :data:`HEAD_SIZE` bytes, which are checked first."""
    if len(head) < HEAD_SIZE:
        raise WireFormatError(f"{where}: truncated frame: {len(head)} bytes, a header has {HEAD_SIZE}")
    magic, version, code, group_len, length = _HEAD.unpack_from(head, 0)
    if magic != MAGIC:
        raise WireFormatError(f"{where}: bad magic {magic!r} at offset 0 (expected {MAGIC!r}): not a minidb frame")
    if version != WIRE_VERSION:
        raise WireVersionError(f"{where}: wire version {version} at offset 4; this node speaks version "
                               f"{WIRE_VERSION}")
    if code not in BY_CODE:
        raise WireFormatError(f"{where}: unknown message type 0x{code:02x} at offset 5")
    if not 1 <= group_len <= MAX_GROUP_NAME:
        raise WireFormatError(f"{where}: group name length {group_len} at offset 6 (1..{MAX_GROUP_NAME})")
    if length > MAX_PAYLOAD:
        raise WireFormatError(f"{where}: oversize frame: payload length {length} at offset 8 exceeds "
                              f"{MAX_PAYLOAD}")
    return HEAD_SIZE + group_len + length + CRC_SIZE


def decode(data: bytes, where: str = "frame") -> Message:
    """The message in one whole frame; :class:`WireFormatError` names what is wrong and where."""
    data = bytes(data)
    size = frame_size(data, where)
    if len(data) < size:
        raise WireFormatError(f"{where}: truncated frame: {len(data)} of {size} bytes")
    if len(data) > size:
        raise WireFormatError(f"{where}: {len(data) - size} bytes after the frame's end at offset {size}")
    _, _, code, group_len, length = _HEAD.unpack_from(data, 0)
    (stored,) = _CRC.unpack_from(data, size - CRC_SIZE)
    if zlib.crc32(data[:size - CRC_SIZE]) != stored:
        raise WireFormatError(f"{where}: bad checksum at offset {size - CRC_SIZE} (frame of {size} bytes)")
    try:
        group = data[HEAD_SIZE:HEAD_SIZE + group_len].decode("utf-8")
    except UnicodeDecodeError:
        raise WireFormatError(f"{where}: the group name at offset {HEAD_SIZE} is not UTF-8") from None
    kind = BY_CODE[code]
    start = HEAD_SIZE + group_len
    payload = data[start:start + length]
    try:
        values, end = decode_fields(kind.fields, payload, 0)  # type: ignore[arg-type]
    except ItemFormatError as e:
        raise WireFormatError(f"{where}: {kind.name} payload at offset {start}: {e}") from None
    if end != length:
        raise WireFormatError(f"{where}: {kind.name} payload at offset {start} has {length - end} bytes "
                              "after its fields")
    return Message(group, kind.name, values)


class FrameBuffer:
    """Bytes arriving from a stream, cut into frames (a header is checked before its body is awaited)."""

    def __init__(self, where: str):
        self.where = where
        self._data = bytearray()

    def feed(self, data: bytes) -> None:
        self._data += data

    def needed(self) -> int:
        """How many more bytes the next frame needs (0: a whole frame is buffered)."""
        if len(self._data) < HEAD_SIZE:
            return HEAD_SIZE - len(self._data)
        return max(0, frame_size(bytes(self._data[:HEAD_SIZE]), self.where) - len(self._data))

    def next_frame(self) -> bytes | None:
        """The next whole frame, removed from the buffer, or None if it has not all arrived."""
        if self.needed():
            return None
        size = frame_size(bytes(self._data[:HEAD_SIZE]), self.where)
        frame = bytes(self._data[:size])
        del self._data[:size]
        return frame

    def __len__(self) -> int:
        return len(self._data)


__all__ = ["MAGIC", "WIRE_VERSION", "MAX_PAYLOAD", "MAX_GROUP_NAME", "HEAD_SIZE", "MessageType", "MESSAGE_TYPES",
           "Message", "encode", "decode", "frame_size", "FrameBuffer", "message_type"]
