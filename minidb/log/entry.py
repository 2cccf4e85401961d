"""A log entry as readers return it: its LSN, header and item bytes.

Readers (:mod:`minidb.log.reader`, :meth:`LogManager.read
<minidb.log.manager.LogManager.read>` and the scans) never hand out raw bytes:
each entry they return is a frozen :class:`LogEntry` holding where it lives
(``lsn``), its parsed header (:class:`~minidb.log.header.EntryHeader`: type
code, flags, ``prev`` offset, item size, VLSN) and the item bytes. Everything
else is derived, never stored twice:

- ``type_name`` and ``values`` come from the entry-type table
  (:mod:`minidb.log.types`); an erased entry (type byte 0xff, the data
  eraser's ``LOG_ERASED``) is named ``Erased`` and has no values, though
  ``erased_type_name`` says what it was (its erased form keeps the original
  type code); an undeclared code is ``Unknown(0x..)``;
- ``size`` is header plus item, and ``end`` the LSN where the next entry of
  the same file starts;
- ``txn_id`` and ``txn_prev_lsn`` are the first two fields of a
  transactional (flag T) type, None otherwise.

Worked example: ``append(TRACE, {"message": "hello"})`` on a fresh log gives
LSN ``0x1/0x2e``; reading it back gives ``LogEntry(0x1/0x2e Trace size=21)``:
a 14-byte header (checksum 2531396293, type 0x02, prev 0, item size 7) and the
item ``05 00 68 65 6c 6c 6f`` (a 2-byte length and ``hello``), so ``values``
is ``{'message': 'hello'}``, ``end`` is ``0x1/0x43`` and ``txn_id`` None.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from minidb.log.header import ERASED_TYPE, EntryHeader, Provisional
from minidb.log.lsn import LSN
from minidb.log.types import EntryType, txn_info, type_by_code

_TXN_ID = struct.Struct("<q")  # a transactional item's first field (see minidb.log.types)


class _DecodedOnce:
    """A value computed on first use and then kept in the instance's ``__dict__``.

    What ``functools.cached_property`` does, without its lock: on Python 3.11 that
    lock is one for the whole class, taken on every first access, and costs more than
    decoding a small item (recovery and gets decode tens of thousands of entries).
    Being a non-data descriptor, it is not consulted again once the instance holds
    the value; two threads racing on a first access both decode the same immutable
    bytes and one result is kept, which is harmless.
    """

    def __init__(self, compute):
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.compute(obj)  # a frozen dataclass still has a __dict__
        return value


@dataclass(frozen=True, init=False)
class LogEntry:
    lsn: LSN
    header: EntryHeader
    item: bytes

    def __init__(self, lsn: LSN, header: EntryHeader, item: bytes):
        # Frozen all the same (assigning an attribute raises); filled in straight into its __dict__,
        # because readers make one LogEntry per entry read and a frozen dataclass's own __init__ sets
        # each field through object.__setattr__, several times the cost.
        fields = self.__dict__
        fields["lsn"], fields["header"], fields["item"] = lsn, header, item

    @property
    def entry_type(self) -> EntryType | None:
        """The declared type, or None for an erased entry or an unknown code."""
        return type_by_code(self.header.type_code)

    @property
    def type_name(self) -> str:
        # Scans ask this of every entry: one dictionary look-up (the erased code is never declared).
        entry_type = type_by_code(self.header.type_code)
        if entry_type is not None:
            return entry_type.name
        code = self.header.type_code
        return "Erased" if code == ERASED_TYPE else f"Unknown(0x{code:02x})"

    @property
    def erased_type_name(self) -> str | None:
        """What an erased entry was (its erased form keeps the original type code); None if not erased."""
        if not self.header.erased:
            return None
        if not self.item:
            return "Unknown(none)"
        was = type_by_code(self.item[0])
        return was.name if was is not None else f"Unknown(0x{self.item[0]:02x})"

    @property
    def size(self) -> int:
        return self.header.entry_size

    @property
    def end(self) -> LSN:
        """The LSN just past this entry (where the next one starts)."""
        return LSN(self.lsn.file, self.lsn.offset + self.size)

    @property
    def provisional(self) -> Provisional:
        return self.header.provisional

    @property
    def vlsn(self) -> int | None:
        return self.header.vlsn

    @_DecodedOnce
    def values(self) -> dict[str, Any]:
        """The item decoded by its entry type's fields ({} if erased or unknown)."""
        entry_type = type_by_code(self.header.type_code)  # None if erased: that code is never declared
        if entry_type is None:
            return {}
        return entry_type.decode(self.item)

    @property
    def txn_id(self) -> int | None:
        entry_type = self.entry_type
        if entry_type is None or not entry_type.transactional:
            return None  # nothing to decode: recovery asks this of every entry it reads
        if "values" not in self.__dict__ and len(self.item) >= _TXN_ID.size:
            return _TXN_ID.unpack_from(self.item)[0]  # only the first field, not the whole item
        return txn_info(entry_type, self.values)[0]

    @property
    def txn_prev_lsn(self) -> LSN | None:
        entry_type = self.entry_type
        return txn_info(entry_type, self.values)[1] if entry_type else None

    def __getitem__(self, field: str) -> Any:
        return self.values[field]

    def __repr__(self) -> str:
        return f"LogEntry({self.lsn} {self.type_name} size={self.size})"
