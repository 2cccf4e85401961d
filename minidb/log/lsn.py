"""Log sequence numbers: where an entry lives in the log.

An LSN is the pair (file number, byte offset of the entry in that file), as in
Berkeley DB JE's ``DbLsn`` and Shore's ``lsn_t``: the high part names the log
file (``00000001.jdb`` is file 1), the low part is the offset of the entry's
first header byte. LSNs are totally ordered, file first, so "written before"
and "smaller LSN" mean the same thing.

Packed form: one unsigned 64-bit integer, ``file << 32 | offset``; this is how
an LSN is stored inside log entries and pages. Printed form, as JE prints
them: ``0x1/0x26`` (file 1, offset 38). :data:`NULL_LSN` (packed
``0xffffffffffffffff``, printed ``NULL``) means "no LSN"; it has no position,
so comparing it with an LSN is an error rather than a silent answer.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from minidb.errors import UserError

MAX_FILE = 0xFFFF_FFFF
MAX_OFFSET = 0xFFFF_FFFF
NULL_PACKED = 0xFFFF_FFFF_FFFF_FFFF

_PATTERN = re.compile(r"^\s*0x([0-9a-fA-F]{1,8})/0x([0-9a-fA-F]{1,8})\s*$")


class _LSNFields(NamedTuple):
    file: int
    offset: int


class LSN(_LSNFields):
    """(file number, byte offset); compares by file, then offset.

    Both parts are unsigned 32-bit integers (the packed form has room for
    nothing else); anything else is refused when the LSN is made.
    """

    __slots__ = ()

    def __new__(cls, file: int, offset: int) -> "LSN":
        if not (isinstance(file, int) and isinstance(offset, int)
                and 0 <= file <= MAX_FILE and 0 <= offset <= MAX_OFFSET):
            raise UserError(f"LSN ({file!r}, {offset!r}) is out of range: file and offset are whole numbers "
                            f"from 0 to 0x{MAX_FILE:x}")
        return tuple.__new__(cls, (file, offset))

    @property
    def packed(self) -> int:
        return (self.file << 32) | self.offset

    @classmethod
    def unpack(cls, value: int) -> "LSN":
        if not isinstance(value, int) or not 0 <= value <= NULL_PACKED:
            raise UserError(f"packed LSN out of range: {value!r} (0 to 0x{NULL_PACKED:x})")
        return cls(value >> 32, value & MAX_OFFSET)

    @classmethod
    def parse(cls, text: str) -> "LSN":
        """Parse ``0x1/0x26`` (or ``NULL``); a malformed string is a UserError."""
        if not isinstance(text, str):
            raise UserError(f"bad LSN {text!r}: expected a string like 0x1/0x26")
        if text.strip().upper() == "NULL":
            return NULL_LSN
        match = _PATTERN.match(text)
        if not match:
            raise UserError(f"bad LSN {text!r}: expected the form 0x<file>/0x<offset>, e.g. 0x1/0x26")
        return cls(int(match.group(1), 16), int(match.group(2), 16))

    @property
    def is_null(self) -> bool:
        return self.file == MAX_FILE and self.offset == MAX_OFFSET

    def __str__(self) -> str:
        if self.is_null:
            return "NULL"
        return f"0x{self.file:x}/0x{self.offset:x}"

    def __repr__(self) -> str:
        return f"LSN({self})"

    def _check(self, other: object) -> None:
        if self.is_null or (isinstance(other, LSN) and other.is_null):
            raise ValueError("NULL_LSN has no position in the log and cannot be compared")

    def __lt__(self, other: object) -> bool:
        self._check(other)
        return tuple.__lt__(self, other)  # type: ignore[operator]

    def __le__(self, other: object) -> bool:
        self._check(other)
        return tuple.__le__(self, other)  # type: ignore[operator]

    def __gt__(self, other: object) -> bool:
        self._check(other)
        return tuple.__gt__(self, other)  # type: ignore[operator]

    def __ge__(self, other: object) -> bool:
        self._check(other)
        return tuple.__ge__(self, other)  # type: ignore[operator]


NULL_LSN = LSN(MAX_FILE, MAX_OFFSET)


def require_lsn(value: object, what: str = "LSN") -> LSN:
    """``value`` if it is an LSN; else a UserError naming it."""
    if not isinstance(value, LSN):
        hint = f" (LSN.parse({value!r}) makes one)" if isinstance(value, str) else ""
        raise UserError(f"{what} must be an LSN, not {type(value).__name__} {value!r}{hint}")
    return value  # in range: LSN() refuses anything else
