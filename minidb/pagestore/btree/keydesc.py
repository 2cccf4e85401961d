"""Key descriptors: what a B+tree's keys are, and their encoding as bytes that sort like the keys.

A B+tree compares keys as bytes, so each key is *encoded* such that the
order of the bytes (``bytes`` comparison, shorter first on a common prefix)
is the order of the keys. Shore's B-trees take keys "in lexicographic form"
the same way (bulk loading requires it). A **key descriptor** says what a
key is: one field or several (a *compound* key, ordered by its first field,
then the second...). Written as a string, fields separated by commas, e.g.
``"i4"``, ``"str"``, ``"u2,str,bytes"``:

=========  ============================  =====================================
field      Python value                  encoding
=========  ============================  =====================================
``i1``     int, -2**7 .. 2**7-1          big-endian two's complement with the
``i2``     int (16 bits, signed)         sign bit flipped (so -1 < 0 < 1 as
``i4``     int (32 bits, signed)         bytes), 1/2/4/8 bytes
``i8``     int (64 bits, signed)
``u1``..   int, 0 .. 2**(8n)-1           big-endian, 1/2/4/8 bytes
``u8``
``f8``     float (not NaN)               IEEE-754 double, big-endian; sign bit
                                         flipped for a positive number, every
                                         bit inverted for a negative one
``str``    str                           UTF-8 (:func:`minidb.errors.utf8`:
                                         a lone surrogate is a BadKeyError),
                                         then escaped as ``bytes``
``bytes``  bytes                         each 0x00 written 0x00 0xff, then the
                                         terminator 0x00 0x00
=========  ============================  =====================================

Invariants: every field's encoding is order-preserving and *prefix-free*
(no encoding is a prefix of another one of the same field: fixed widths, or
the terminator, which cannot appear inside an escaped string), so a
compound key is the concatenation of its fields' encodings and still sorts
field by field. A non-unique index appends the element to the encoded key
to order entries with equal keys (:mod:`minidb.pagestore.btree.keyed`),
which prefix-freeness keeps correct.

Worked example, descriptor ``"i2,str"``: ``(-1, "ab")`` encodes to
``7f ff 61 62 00 00`` and ``(0, "")`` to ``80 00 00 00``, which sorts after
it, as -1 < 0.

The descriptor is kept in the index's entry of the store directory as its
string (ASCII), :meth:`KeyDescriptor.pack`.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from minidb.errors import utf8
from minidb.pagestore.errors import BadRequestError

_INT_WIDTHS = {"1": 1, "2": 2, "4": 4, "8": 8}
_F8 = struct.Struct(">d")
_U64 = struct.Struct(">Q")
FIELD_NAMES = ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f8", "str", "bytes")


class BadKeyError(BadRequestError):
    """A key that does not fit its descriptor (wrong type, out of range, undecodable bytes)."""


def _escape(data: bytes) -> bytes:
    return data.replace(b"\x00", b"\x00\xff") + b"\x00\x00"


def _unescape(buf: bytes, pos: int) -> tuple[bytes, int]:
    out = bytearray()
    while True:
        at = buf.find(b"\x00", pos)
        if at < 0 or at + 1 >= len(buf):
            raise BadKeyError(f"encoded key {buf.hex()}: string at offset {pos} has no terminator")
        out += buf[pos:at]
        if buf[at + 1] == 0xFF:
            out.append(0)
            pos = at + 2
        elif buf[at + 1] == 0x00:
            return bytes(out), at + 2
        else:
            raise BadKeyError(f"encoded key {buf.hex()}: bad escape 00 {buf[at + 1]:02x} at offset {at}")


@dataclass(frozen=True)
class KeyField:
    """One field of a key descriptor."""

    kind: str

    def encode(self, value: Any) -> bytes:
        kind = self.kind
        if kind in ("str", "bytes"):
            if kind == "str" and not isinstance(value, str) or kind == "bytes" and not isinstance(value, bytes):
                raise BadKeyError(f"key field {kind}: {value!r} is not {'a str' if kind == 'str' else 'bytes'}")
            return _escape(utf8(value, "key field str", BadKeyError) if kind == "str" else value)
        if kind == "f8":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
                raise BadKeyError(f"key field f8: {value!r} is not a number (NaN has no order)")
            bits = _U64.unpack(_F8.pack(float(value) + 0.0))[0]  # + 0.0: -0.0 is 0.0
            return _U64.pack(bits ^ 0xFFFF_FFFF_FFFF_FFFF if bits >> 63 else bits | 1 << 63)
        width = _INT_WIDTHS[kind[1]]
        if isinstance(value, bool) or not isinstance(value, int):
            raise BadKeyError(f"key field {kind}: {value!r} is not an int")
        bits = 8 * width
        low, high = (-(1 << bits - 1), (1 << bits - 1) - 1) if kind[0] == "i" else (0, (1 << bits) - 1)
        if not low <= value <= high:
            raise BadKeyError(f"key field {kind}: {value} is outside {low}..{high}")
        if kind[0] == "i":
            value += 1 << bits - 1  # flipping the sign bit of two's complement is adding 2**(bits-1)
        return value.to_bytes(width, "big")

    def decode(self, buf: bytes, pos: int) -> tuple[Any, int]:
        kind = self.kind
        if kind in ("str", "bytes"):
            raw, pos = _unescape(buf, pos)
            return (raw.decode() if kind == "str" else raw), pos
        width = 8 if kind == "f8" else _INT_WIDTHS[kind[1]]
        if pos + width > len(buf):
            raise BadKeyError(f"encoded key {buf.hex()}: field {kind} at offset {pos} runs past the end")
        raw = int.from_bytes(buf[pos:pos + width], "big")
        if kind == "f8":
            bits = raw ^ (1 << 63) if raw >> 63 else raw ^ 0xFFFF_FFFF_FFFF_FFFF
            return _F8.unpack(_U64.pack(bits))[0], pos + width
        if kind[0] == "i":
            raw -= 1 << 8 * width - 1  # the sign bit was flipped: raw = value + 2**(bits-1)
        return raw, pos + width


class KeyDescriptor:
    """A key's fields (see the module documentation); ``encode``/``decode`` a key value."""

    def __init__(self, spec: str):
        if not isinstance(spec, str) or not spec:
            raise BadRequestError(f"key descriptor {spec!r}: give fields such as 'i4', 'str' or 'u2,str'")
        names = [part.strip() for part in spec.split(",")]
        for name in names:
            if name not in FIELD_NAMES:
                raise BadRequestError(f"key descriptor {spec!r}: unknown field {name!r} "
                                      f"(known: {', '.join(FIELD_NAMES)})")
        self.spec = ",".join(names)
        self.fields = tuple(KeyField(name) for name in names)

    @property
    def compound(self) -> bool:
        return len(self.fields) > 1

    def encode(self, key: Any) -> bytes:
        """The bytes of ``key`` (a tuple for a compound descriptor)."""
        if not self.compound:
            return self.fields[0].encode(key)
        if not isinstance(key, Sequence) or isinstance(key, (str, bytes)) or len(key) != len(self.fields):
            raise BadKeyError(f"key {key!r}: descriptor {self.spec!r} needs a tuple of {len(self.fields)} values")
        return b"".join(f.encode(v) for f, v in zip(self.fields, key, strict=True))

    def decode(self, data: bytes) -> Any:
        value, pos = self.decode_prefix(data)
        if pos != len(data):
            raise BadKeyError(f"encoded key {data.hex()}: {len(data) - pos} bytes left after descriptor {self.spec!r}")
        return value

    def decode_prefix(self, data: bytes) -> tuple[Any, int]:
        """The key encoded at the start of ``data`` and where its encoding ends (a non-unique index's sort
        key goes on with the element)."""
        values, pos = [], 0
        for f in self.fields:
            value, pos = f.decode(data, pos)
            values.append(value)
        return (tuple(values) if self.compound else values[0]), pos

    def pack(self) -> bytes:
        return self.spec.encode("ascii")

    @classmethod
    def unpack(cls, data: bytes) -> "KeyDescriptor":
        return cls(data.decode("ascii"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeyDescriptor) and other.spec == self.spec

    def __hash__(self) -> int:
        return hash(self.spec)

    def __repr__(self) -> str:
        return f"KeyDescriptor({self.spec!r})"


def successor(prefix: bytes) -> bytes | None:
    """The smallest byte string greater than every string that starts with ``prefix`` (None: none is)."""
    trimmed = prefix.rstrip(b"\xff")
    if not trimmed:
        return None
    return trimmed[:-1] + bytes([trimmed[-1] + 1])
