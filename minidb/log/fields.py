"""Field kinds of log entry items: explicit bytes for every value.

A log entry's *item* (the bytes after the entry header) is the concatenation
of its fields, in the order the entry-type table lists them. Each field kind
knows how to encode, decode and print one value; all integers are
little-endian::

    kind     bytes              Python value
    U8       1                  int
    U16      2                  int
    U32      4                  int
    U64      8                  int
    I64      8 (signed)         int
    BOOL     1 (0 or 1)         bool
    LSN      8 (file<<32|off)   minidb.log.lsn.LSN (NULL_LSN allowed)
    BYTES    4 length + bytes   bytes
    STR      2 length + UTF-8   str
    ListOf   4 count + records  list of dicts, one per record (to encode: or
                                tuples of the record's values in field order)

Decoding never trusts a length: a length that runs past the item is an
:class:`ItemFormatError`, so a corrupt item is reported, not mis-read.
"""

from __future__ import annotations

import struct
from typing import Any

from minidb.errors import LogError
from minidb.log.lsn import LSN


class ItemFormatError(LogError, ValueError):
    """An item's bytes (or the values given for them) do not match its entry type's fields."""


class Kind:
    """How one field value becomes bytes and back."""

    name = "?"

    def encode(self, value: Any, out: bytearray) -> None:
        raise NotImplementedError

    def decode(self, buf: bytes | memoryview, pos: int) -> tuple[Any, int]:
        raise NotImplementedError

    def format(self, value: Any) -> str:
        return str(value)

    def __repr__(self) -> str:
        return self.name


class _Fixed(Kind):
    def __init__(self, name: str, fmt: str):
        self.name = name
        self._struct = struct.Struct("<" + fmt)

    def encode(self, value: Any, out: bytearray) -> None:
        try:
            out += self._struct.pack(value)
        except struct.error as e:
            raise ItemFormatError(f"{self.name} cannot hold {value!r}: {e}") from None

    def decode(self, buf: bytes | memoryview, pos: int) -> tuple[Any, int]:
        end = pos + self._struct.size
        if end > len(buf):
            raise ItemFormatError(f"{self.name} at item offset {pos} runs past the item")
        return self._struct.unpack_from(buf, pos)[0], end


class _Bool(_Fixed):
    def __init__(self) -> None:
        super().__init__("BOOL", "B")

    def encode(self, value: Any, out: bytearray) -> None:
        out.append(1 if value else 0)

    def decode(self, buf: bytes | memoryview, pos: int) -> tuple[Any, int]:
        value, end = super().decode(buf, pos)
        if value > 1:
            raise ItemFormatError(f"BOOL at item offset {pos} holds {value}")
        return bool(value), end

    def format(self, value: Any) -> str:
        return "true" if value else "false"


class _Lsn(_Fixed):
    def __init__(self) -> None:
        super().__init__("LSN", "Q")

    def encode(self, value: Any, out: bytearray) -> None:
        if not isinstance(value, LSN):
            raise ItemFormatError(f"LSN field needs an LSN, not {value!r}")
        out += self._struct.pack(value.packed)

    def decode(self, buf: bytes | memoryview, pos: int) -> tuple[Any, int]:
        value, end = super().decode(buf, pos)
        return LSN.unpack(value), end


class _Sized(Kind):
    """A length prefix, then that many bytes."""

    def __init__(self, name: str, length_fmt: str, text: bool):
        self.name = name
        self._length = struct.Struct("<" + length_fmt)
        self._text = text

    def encode(self, value: Any, out: bytearray) -> None:
        raw = value.encode("utf-8") if self._text else bytes(value)
        try:
            out += self._length.pack(len(raw))
        except struct.error:
            raise ItemFormatError(f"{self.name} too long: {len(raw)} bytes") from None
        out += raw

    def decode(self, buf: bytes | memoryview, pos: int) -> tuple[Any, int]:
        if pos + self._length.size > len(buf):
            raise ItemFormatError(f"{self.name} length at item offset {pos} runs past the item")
        (length,) = self._length.unpack_from(buf, pos)
        start = pos + self._length.size
        end = start + length
        if end > len(buf):
            raise ItemFormatError(f"{self.name} of {length} bytes at item offset {pos} runs past the item")
        raw = bytes(buf[start:end])
        if not self._text:
            return raw, end
        try:
            return raw.decode("utf-8"), end
        except UnicodeDecodeError:
            raise ItemFormatError(f"{self.name} at item offset {pos} is not UTF-8") from None

    def format(self, value: Any) -> str:
        if self._text:
            return value
        shown = value[:32].hex()
        return shown + ("..." if len(value) > 32 else "")


class ListOf(Kind):
    """A counted list of records, each record a tuple of (name, kind) fields."""

    _count = struct.Struct("<I")

    def __init__(self, *fields: tuple[str, Kind]):
        self.fields = fields
        self.name = "ListOf(" + ", ".join(f"{n}:{k!r}" for n, k in fields) + ")"

    def encode(self, value: Any, out: bytearray) -> None:
        out += self._count.pack(len(value))
        names = [name for name, _ in self.fields]
        for record in value:
            if type(record) is tuple:  # the record's values in field order (a node's slots, zipped)
                if len(record) != len(names):
                    raise ItemFormatError(f"list record: {len(record)} values for the fields {names}")
                record = dict(zip(names, record, strict=True))
            encode_fields(self.fields, record, out, "list record")

    def decode(self, buf: bytes | memoryview, pos: int) -> tuple[Any, int]:
        if pos + 4 > len(buf):
            raise ItemFormatError(f"list count at item offset {pos} runs past the item")
        (count,) = self._count.unpack_from(buf, pos)
        pos += 4
        records = []
        for _ in range(count):
            record, pos = decode_fields(self.fields, buf, pos)
            records.append(record)
        return records, pos

    def format(self, value: Any) -> str:
        return "[" + "; ".join(
            " ".join(f"{n}={k.format(r[n])}" for n, k in self.fields) for r in value
        ) + "]"


U8 = _Fixed("U8", "B")
U16 = _Fixed("U16", "H")
U32 = _Fixed("U32", "I")
U64 = _Fixed("U64", "Q")
I64 = _Fixed("I64", "q")
BOOL = _Bool()
LSN_FIELD = _Lsn()
BYTES = _Sized("BYTES", "I", text=False)
STR = _Sized("STR", "H", text=True)


def encode_fields(fields: tuple[tuple[str, Kind], ...], values: dict, out: bytearray, what: str) -> None:
    missing = [name for name, _ in fields if name not in values]
    extra = set(values) - {name for name, _ in fields}
    if missing or extra:
        raise ItemFormatError(f"{what}: missing fields {missing}, unknown fields {sorted(extra)}")
    for name, kind in fields:
        try:
            kind.encode(values[name], out)
        except ItemFormatError as e:
            raise ItemFormatError(f"{what}.{name}: {e}") from None
        except (TypeError, AttributeError, ValueError, OverflowError):  # e.g. bytes(-1), a lone surrogate
            raise ItemFormatError(f"{what}.{name}: {kind!r} cannot hold {values[name]!r}") from None


def decode_fields(fields: tuple[tuple[str, Kind], ...], buf: bytes | memoryview, pos: int) -> tuple[dict, int]:
    values = {}
    for name, kind in fields:
        values[name], pos = kind.decode(buf, pos)
    return values, pos


# -- where an item's LSNs lie ------------------------------------------------------
# LSNs are node-local: the same replicated entry holds different LSNs on every
# node of a group (its txn_prev_lsn, a record's prev_lsn and abort_lsn ...).
# Comparing entries across nodes therefore needs the LSNs' byte positions.

def static_lsn_offsets(fields: tuple[tuple[str, Kind], ...]) -> tuple[int, ...] | None:
    """The item offsets of every LSN field when each follows fixed-size fields only (the same
    for every item of the type); None when a sized field or a list comes before an LSN."""
    offsets, pos = [], 0
    for index, (_, kind) in enumerate(fields):
        if kind is LSN_FIELD:
            offsets.append(pos)
        elif not isinstance(kind, _Fixed):
            rest = fields[index:]
            return tuple(offsets) if not any(_holds_lsn(k) for _, k in rest) else None
        pos += kind._struct.size
    return tuple(offsets)


def lsn_spans(fields: tuple[tuple[str, Kind], ...], buf: bytes | memoryview, pos: int = 0) -> list[tuple[int, int]]:
    """The (start, end) byte spans of every LSN value in an item, lists included, in order.
    A length that runs past the item is an :class:`ItemFormatError`."""
    spans: list[tuple[int, int]] = []
    _walk_lsns(fields, buf, pos, spans)
    return spans


def _holds_lsn(kind: Kind) -> bool:
    return kind is LSN_FIELD or (isinstance(kind, ListOf) and any(_holds_lsn(k) for _, k in kind.fields))


def _walk_lsns(fields: tuple[tuple[str, Kind], ...], buf: bytes | memoryview, pos: int,
               spans: list[tuple[int, int]]) -> int:
    for _, kind in fields:
        if isinstance(kind, ListOf):
            if pos + 4 > len(buf):
                raise ItemFormatError(f"list count at item offset {pos} runs past the item")
            (count,) = ListOf._count.unpack_from(buf, pos)
            pos += 4
            for _ in range(count):
                pos = _walk_lsns(kind.fields, buf, pos, spans)
            continue
        start = pos
        _, pos = kind.decode(buf, pos)  # checks every length against the item
        if kind is LSN_FIELD:
            spans.append((start, pos))
    return pos
