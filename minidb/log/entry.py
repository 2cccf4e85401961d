"""A log entry as readers return it: its LSN, header and item bytes."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from minidb.log.header import EntryHeader, Provisional
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
        if self.header.erased:
            return "Erased"
        entry_type = self.entry_type
        return entry_type.name if entry_type else f"Unknown(0x{self.header.type_code:02x})"

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
        """The item decoded by its entry type's fields ({} if erased or unknown)."""
        entry_type = self.entry_type
        if entry_type is None or self.header.erased:
            return {}
        return entry_type.decode(self.item)

    @property
    def txn_id(self) -> int | None:
        entry_type = self.entry_type
        return txn_info(entry_type, self.values)[0] if entry_type else None

    @property
    def txn_prev_lsn(self) -> LSN | None:
        entry_type = self.entry_type
        return txn_info(entry_type, self.values)[1] if entry_type else None

    def __getitem__(self, field: str) -> Any:
        return self.values[field]

    def __repr__(self) -> str:
        return f"LogEntry({self.lsn} {self.type_name} size={self.size})"
