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

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from minidb import impl
from minidb.log.header import ERASED_TYPE, EntryHeader, Provisional
from minidb.log.lsn import LSN
from minidb.log.types import EntryType, txn_info, type_by_code


@dataclass(frozen=True)
class LogEntry:
    lsn: LSN
    header: EntryHeader
    item: bytes

    @property
    def entry_type(self) -> EntryType | None:
        """The declared type, or None for an erased entry or an unknown code."""
        return type_by_code(self.header.type_code)

    @property
    def type_name(self) -> str:
        entry_type = self.entry_type
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

    @cached_property
    def values(self) -> dict[str, Any]:
        """The item decoded by its entry type's fields ({} if erased or unknown), once: readers ask
        several fields of one entry (``entry["key"]``, ``entry["data"]``, ``txn_id``)."""
        entry_type = self.entry_type  # None if erased: that code is never declared
        if entry_type is None:
            return {}
        return entry_type.decode(self.item)

    @property
    def txn_id(self) -> int | None:
        return self._txn_info()[0]

    @property
    def txn_prev_lsn(self) -> LSN | None:
        return self._txn_info()[1]

    def _txn_info(self) -> tuple[int | None, LSN | None]:
        """(txn_id, txn_prev_lsn) of a transactional entry; (None, None) of any other, whose item is not
        decoded for it: a reader asking every entry read for its transaction (recovery learning the ids)
        decodes no BIN's slots by asking."""
        entry_type = self.entry_type
        if entry_type is None or not entry_type.transactional:
            return None, None
        return txn_info(entry_type, self.values)

    def __getitem__(self, field: str) -> Any:
        return self.values[field]

    def __repr__(self) -> str:
        return f"LogEntry({self.lsn} {self.type_name} size={self.size})"


LOG_ENTRY = impl.hot_spot(LogEntry)
