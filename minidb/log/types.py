"""Entry types as a table, like Shore's ``logdef.dat``.

Each part of minidb that writes log entries declares its entry types in one
readable table (a module named ``logdef.py``): name, type code, flags and
fields. Encoding, decoding and printing come from the table; nobody writes a
serializer per type. A table registers itself in the process-wide registry
when its module is imported, and the registry refuses two types with one code
or one name, so a code always means one thing.

Type codes are partitioned by owner so the tables cannot collide::

    codes       owner
    0x01-0x07   minidb.log          (FileHeader, Trace)
    0x08-0x0f   generator           synthetic workloads of ``minidb generate
                                    --engine log`` (minidb/spark/logdef.py):
                                    test entries for the data pipeline
    0x10-0x3f   minidb.pagestore
    0x80-0x8f   minidb.pagestore    its B+trees (an owner may have several ranges)
    0x40-0x6f   minidb.logstore
    0x70-0x7e   minidb.replication
    0xff        an erased entry (never declared; see header.ERASED_TYPE)

Flags, one letter each, as in logdef.dat:

    R  redoable             U  undoable            L  logical undo
    C  compensation (CLR)   T  transactional: the item begins with
                               txn_id (I64: signed, negative for the
                               log store's internal transactions) and
                               txn_prev_lsn (LSN), the previous entry of
                               the same transaction

A row may carry a fifth column, the *fudge factor* (Shore's log-space
reservation): the log space that undoing an entry of that type may need, as
a multiple of the entry's size (its CLR, the inverse operation's entries).
It defaults to 0 (nothing to reserve); only the page store uses it
(:mod:`minidb.pagestore.wal.logspace`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from minidb.log.codec import CODEC_OF
from minidb.log.fields import I64, LSN_FIELD, Kind
from minidb.log.lsn import LSN


class CodeRanges(tuple):
    """The type codes of an owner with several ranges; ``in`` and iteration cover them all."""

    def __contains__(self, code: object) -> bool:
        return any(code in r for r in tuple.__iter__(self))

    def __iter__(self):
        return (code for r in tuple.__iter__(self) for code in r)


OWNER_CODES = {
    "log": range(0x01, 0x08),
    "generator": range(0x08, 0x10),
    "pagestore": CodeRanges((range(0x10, 0x40), range(0x80, 0x90))),
    "logstore": range(0x40, 0x70),
    "replication": range(0x70, 0x7F),
}
FLAG_LETTERS = {"R": "redo", "U": "undo", "L": "logical", "C": "compensation", "T": "transactional"}
TXN_FIELDS: tuple[tuple[str, Kind], ...] = (("txn_id", I64), ("txn_prev_lsn", LSN_FIELD))
_FLAG_ATTRIBUTES = (("T", "transactional"), ("R", "redoable"), ("U", "undoable"), ("L", "logical"),
                    ("C", "compensation"))


@dataclass(frozen=True)
class EntryType:
    """One row of an entry-type table."""

    name: str
    code: int
    flags: str
    fields: tuple[tuple[str, Kind], ...]
    owner: str = ""
    fudge: float = 0.0
    all_fields: tuple[tuple[str, Kind], ...] = field(init=False, repr=False)
    # The flags one by one, read from the letters once (every logged change asks some of them):
    transactional: bool = field(init=False, repr=False, compare=False)  # T
    redoable: bool = field(init=False, repr=False, compare=False)  # R
    undoable: bool = field(init=False, repr=False, compare=False)  # U
    logical: bool = field(init=False, repr=False, compare=False)  # L
    compensation: bool = field(init=False, repr=False, compare=False)  # C

    def __post_init__(self) -> None:
        unknown = set(self.flags) - set(FLAG_LETTERS)
        if unknown:
            raise ValueError(f"entry type {self.name}: unknown flags {sorted(unknown)}")
        full = (TXN_FIELDS if "T" in self.flags else ()) + tuple(self.fields)
        object.__setattr__(self, "all_fields", full)
        for letter, name in _FLAG_ATTRIBUTES:
            object.__setattr__(self, name, letter in self.flags)

    def encode(self, values: dict[str, Any]) -> bytes:
        """The item of ``values`` (an :class:`~minidb.log.fields.ItemFormatError` names a bad field)."""
        return CODEC_OF.call(self).encode(values)

    def decode(self, item: bytes | memoryview) -> dict[str, Any]:
        """The values of an item (an :class:`~minidb.log.fields.ItemFormatError` names a bad field)."""
        return CODEC_OF.call(self).decode(item)

    def format(self, values: dict[str, Any]) -> str:
        """``<Name field="value" .../>``, the body ``minidb printlog`` shows."""
        parts = [self.name]
        for name, kind in self.all_fields:
            parts.append(f'{name}="{_escape(kind.format(values[name]))}"')
        return "<" + " ".join(parts) + "/>"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


class EntryTable:
    """The entry types of one owner; registering it makes the codes known."""

    def __init__(self, owner: str, rows: list[tuple[Any, ...]], register: bool = True):
        if owner not in OWNER_CODES:
            raise ValueError(f"unknown entry table owner {owner!r}")
        self.owner = owner
        self.types: dict[str, EntryType] = {}
        for name, code, flags, fields, *fudge in rows:
            if code not in OWNER_CODES[owner]:
                raise ValueError(f"{owner} entry type {name}: code 0x{code:02x} is outside {owner}'s range")
            if name in self.types:
                raise ValueError(f"{owner}: entry type {name} declared twice")
            self.types[name] = EntryType(name, code, flags, tuple(fields), owner, *fudge)
        if register:
            register_table(self)

    def __getitem__(self, name: str) -> EntryType:
        return self.types[name]

    def __getattr__(self, name: str) -> EntryType:
        try:
            return self.__dict__["types"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __iter__(self):
        return iter(self.types.values())


_BY_CODE: dict[int, EntryType] = {}
_BY_NAME: dict[str, EntryType] = {}


def register_table(table: EntryTable) -> None:
    for entry_type in table:
        known = _BY_CODE.get(entry_type.code)
        if known is not None and known != entry_type:
            raise ValueError(f"entry type code 0x{entry_type.code:02x} is both {known.name} and {entry_type.name}")
        known = _BY_NAME.get(entry_type.name)
        if known is not None and known != entry_type:
            raise ValueError(f"entry type name {entry_type.name} is declared by {known.owner} and {table.owner}")
        _BY_CODE[entry_type.code] = entry_type
        _BY_NAME[entry_type.name] = entry_type


def type_by_code(code: int) -> EntryType | None:
    return _BY_CODE.get(code)


def type_by_name(name: str) -> EntryType | None:
    return _BY_NAME.get(name)


def known_types() -> list[EntryType]:
    return sorted(_BY_CODE.values(), key=lambda t: t.code)


def txn_info(entry_type: EntryType, values: dict[str, Any]) -> tuple[int | None, LSN | None]:
    """(transaction id, previous LSN of the transaction) where the type has them."""
    if not entry_type.transactional:
        return None, None
    return values["txn_id"], values["txn_prev_lsn"]
