"""The replication wire format: frames round-trip, and every kind of bad frame is refused with where it is bad."""

import struct
import zlib

import pytest

from minidb.replication import wire
from minidb.replication.errors import WireFormatError, WireVersionError


def test_the_documented_handshake_bytes():
    frame = wire.encode("g", "Handshake", node_name="n2", node_priority=1)
    assert frame[:-4].hex(" ") == "4d 44 42 52 01 01 01 00 08 00 00 00 67 02 00 6e 32 01 00 00 00"
    assert frame[-4:] == struct.pack("<I", zlib.crc32(frame[:-4]))
    assert wire.decode(frame) == wire.Message("g", "Handshake", {"node_name": "n2", "node_priority": 1})


def test_the_documented_file_info_bytes():
    frame = wire.encode("g", "FileInfo", file_number=1, length=0x2a0, checksum=0x1234abcd)
    assert frame[13:-4].hex(" ") == "01 00 00 00 a0 02 00 00 00 00 00 00 cd ab 34 12"


@pytest.mark.parametrize("type_name, values", [
    ("HandshakeOk", {"node_name": "nœud-1"}),
    ("HandshakeRefused", {"reason": "node n9 is not a member of group g"}),
    ("StartStream", {"start_vlsn": 17}),
    ("Entry", {"vlsn": 2**40, "type_code": 0x41, "db_name": "accounts", "item": bytes(range(256)) * 3}),
    ("Ack", {"txn_id": -7, "vlsn": 3}),
    ("Heartbeat", {"master_vlsn": 9, "time_ms": 1_700_000_000_000}),
    ("HeartbeatResponse", {"replica_vlsn": 0, "time_ms": 1}),
    ("FileListRequest", {"reason": "share no sync point"}),
    ("FileList", {"count": 3, "log_head": 2, "total_bytes": 2**33}),
    ("FileInfo", {"file_number": 7, "length": 4096, "checksum": 0xFFFFFFFF}),
    ("FileRequest", {"file_number": 7}),
    ("FileStart", {"file_number": 7, "length": 4096}),
    ("FileChunk", {"file_number": 7, "offset": 1024, "data": bytes(range(256)) * 4}),
    ("FileEnd", {"file_number": 7, "length": 4096, "checksum": 0x1234ABCD}),
    ("RestoreDone", {"files": 3, "total_bytes": 9000}),
    ("RestoreRefused", {"reason": "file 00000009.jdb was not listed"}),
])
def test_every_built_message_round_trips(type_name, values):
    frame = wire.encode("bank group", type_name, **values)
    assert wire.decode(frame) == wire.Message("bank group", type_name, values)
    assert wire.frame_size(frame[:wire.HEAD_SIZE]) == len(frame)


def damaged(frame: bytes, offset: int, value: bytes) -> bytes:
    return frame[:offset] + value + frame[offset + len(value):]


def recrc(body: bytes) -> bytes:
    return body + struct.pack("<I", zlib.crc32(body))


GOOD = wire.encode("g", "StartStream", start_vlsn=5)


@pytest.mark.parametrize("frame, error, words", [
    (damaged(GOOD, 0, b"XDBR"), WireFormatError, "peer n3: bad magic b'XDBR' at offset 0"),
    (recrc(damaged(GOOD, 4, b"\x02")[:-4]), WireVersionError, "peer n3: wire version 2 at offset 4"),
    (GOOD[:7], WireFormatError, "peer n3: truncated frame: 7 bytes"),
    (GOOD[:-1], WireFormatError, "peer n3: truncated frame: 24 of 25 bytes"),
    (GOOD + b"\0", WireFormatError, "1 bytes after the frame's end at offset 25"),
    (damaged(GOOD, 14, b"\x06"), WireFormatError, "peer n3: bad checksum at offset 21"),
    (recrc(damaged(GOOD, 5, b"\x7a")[:-4]), WireFormatError, "unknown message type 0x7a at offset 5"),
    (recrc(damaged(GOOD, 8, struct.pack("<I", wire.MAX_PAYLOAD + 1))[:-4]), WireFormatError,
     "oversize frame: payload length 16777217 at offset 8"),
    (recrc(damaged(GOOD, 6, b"\0\0")[:-4]), WireFormatError, "group name length 0 at offset 6"),
    (recrc(damaged(GOOD, 8, b"\x07")[:-4][:-1]), WireFormatError, "StartStream payload at offset 13"),
    (recrc(damaged(GOOD, 8, b"\x09")[:-4] + b"\0"), WireFormatError, "has 1 bytes after its fields"),
])
def test_a_bad_frame_is_refused_naming_what_and_where(frame, error, words):
    with pytest.raises(error) as caught:
        wire.decode(frame, where="peer n3")
    assert words in str(caught.value)


def test_an_oversize_frame_is_refused_from_its_header_alone():
    head = struct.pack("<4sBBHI", wire.MAGIC, wire.WIRE_VERSION, 0x11, 1, 1 << 31)
    buffer = wire.FrameBuffer("peer n1")
    buffer.feed(head)
    with pytest.raises(WireFormatError, match="oversize"):
        buffer.needed()


def test_frames_arrive_in_pieces():
    frames = [wire.encode("g", "Entry", vlsn=v, type_code=0x40, db_name="", item=b"x" * v) for v in range(1, 6)]
    stream = b"".join(frames)
    buffer = wire.FrameBuffer("peer")
    got = []
    for i in range(0, len(stream), 7):
        buffer.feed(stream[i:i + 7])
        while (frame := buffer.next_frame()) is not None:
            got.append(wire.decode(frame)["vlsn"])
    assert got == [1, 2, 3, 4, 5] and len(buffer) == 0


def test_encoding_refuses_what_it_cannot_send():
    with pytest.raises(WireFormatError, match="no message type 'Hello'"):
        wire.encode("g", "Hello")
    with pytest.raises(WireFormatError, match="group name"):
        wire.encode("", "StartStream", start_vlsn=1)
    with pytest.raises(WireFormatError, match="StartStream: missing fields"):
        wire.encode("g", "StartStream")
