"""The persisted state of an erasure cycle (the file ``eraser.state`` beside the log).

A cycle survives a close and an open: the eraser rewrites this file after
each file it processes, and reads it when the environment opens, to resume
the cycle (if its end time has not passed) or start a fresh one. The same
file records the eraser's *intent* while it erases one file: which entries
it is about to overwrite and what each one was, written (and durable) before
the first byte of the file changes and dropped in the write that marks the
file erased. Format (all integers little-endian)::

    offset   size  field
    ------   ----  ----------------------------------------------------
       0      4    magic b"ERSR"
       4      2    format version (2)
       6      8    cycle start, ms since the epoch (UTC)
      14      8    cycle end, ms since the epoch (UTC)
      22      4    n, the number of files selected
      26     5*n   per file: number (4), status (1): 0 to do, 1 erased
                   (or had nothing to erase), 2 deleted (a reserved file),
                   3 skipped (left alone: the VLSN index still covers it)
    26+5n     4    the file being erased (0: none; log files start at 1)
    30+5n     4    m, the entries of that file being erased
    34+5n    5*m   per entry: its offset (4), its original type code (1)
    34+5n+5m  4    CRC-32 of every byte before it

Worked example: a cycle of files 1 and 5, file 1 done, the eraser at work on
two entries of file 5 (an LN_TX, type 0x41, at 0x1a0 and a BIN, type 0x49, at
0x2c4): n = 2, then ``01000000 01`` and ``05000000 00``; then ``05000000``
``02000000`` (m = 2), ``a0010000 41`` and ``c4020000 49``; then the CRC: 54
bytes in all.

It is written to ``eraser.state.tmp``, fsynced, and renamed over
``eraser.state`` (a rename is durable at once), so a crash leaves the old
state or the new one, never a mix. A state file that does not parse (wrong
magic, version, size or CRC) is reported by :func:`read_state` with what is
wrong; the eraser then starts a fresh cycle (erasing again is harmless).
Readers of the log that must accept a half-erased entry take the intent from
:func:`erasing_of` (file -> offset -> original type), read once per open.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

from minidb.io import Disk

STATE_FILE = "eraser.state"
STATE_TMP = "eraser.state.tmp"
MAGIC = b"ERSR"
VERSION = 2
HEAD = struct.Struct("<4sHQQI")
FILE = struct.Struct("<IB")
INTENT = struct.Struct("<II")  # the file being erased (0: none), its entry count
ENTRY = struct.Struct("<IB")  # an entry being erased: offset, original type code
CRC = struct.Struct("<I")

TO_DO, ERASED, DELETED, SKIPPED = 0, 1, 2, 3
STATUS_NAMES = {TO_DO: "to do", ERASED: "erased", DELETED: "deleted", SKIPPED: "skipped"}


@dataclass
class CycleState:
    start_ms: int
    end_ms: int
    files: dict[int, int] = field(default_factory=dict)  # file number -> status, in selection order
    erasing: tuple[int, dict[int, int]] | None = None  # the file being erased, offset -> original type

    def erasing_map(self) -> dict[int, dict[int, int]]:
        """The intent as the log's readers take it: file -> offset -> original type (empty: none)."""
        return {} if self.erasing is None else {self.erasing[0]: dict(self.erasing[1])}

    @property
    def remaining(self) -> list[int]:
        return [n for n, status in self.files.items() if status == TO_DO]

    @property
    def processed(self) -> list[int]:
        return [n for n, status in self.files.items() if status != TO_DO]

    def pack(self) -> bytes:
        body = HEAD.pack(MAGIC, VERSION, self.start_ms, self.end_ms, len(self.files))
        body += b"".join(FILE.pack(n, status) for n, status in self.files.items())
        number, entries = self.erasing if self.erasing is not None else (0, {})
        body += INTENT.pack(number, len(entries))
        body += b"".join(ENTRY.pack(offset, code) for offset, code in sorted(entries.items()))
        return body + CRC.pack(zlib.crc32(body))

    @classmethod
    def unpack(cls, data: bytes) -> "CycleState":
        if len(data) < HEAD.size + CRC.size:
            raise ValueError(f"{len(data)} bytes, shorter than an empty state ({HEAD.size + CRC.size})")
        magic, version, start, end, count = HEAD.unpack_from(data, 0)
        if magic != MAGIC:
            raise ValueError(f"magic {magic!r}, not {MAGIC!r}")
        if version != VERSION:
            raise ValueError(f"format version {version}, this engine reads {VERSION}")
        at = HEAD.size + count * FILE.size
        if len(data) < at + INTENT.size + CRC.size:
            raise ValueError(f"{len(data)} bytes, but {count} files make at least {at + INTENT.size + CRC.size}")
        number, erasing = INTENT.unpack_from(data, at)
        size = at + INTENT.size + erasing * ENTRY.size + CRC.size
        if len(data) != size:
            raise ValueError(f"{len(data)} bytes, but {count} files and {erasing} entries being erased make {size}")
        (stored,) = CRC.unpack_from(data, size - CRC.size)
        if stored != zlib.crc32(data[: size - CRC.size]):
            raise ValueError("CRC mismatch")
        files = {}
        for i in range(count):
            file_number, status = FILE.unpack_from(data, HEAD.size + i * FILE.size)
            if status not in STATUS_NAMES:
                raise ValueError(f"file 0x{file_number:x} has unknown status {status}")
            files[file_number] = status
        entries = dict(ENTRY.unpack_from(data, at + INTENT.size + i * ENTRY.size) for i in range(erasing))
        if number == 0 and entries:
            raise ValueError(f"{len(entries)} entries being erased, but no file")
        return cls(start, end, files, (number, entries) if number else None)


def write_state(disk: Disk, state: CycleState) -> None:
    disk.replace(STATE_FILE, state.pack())  # through STATE_TMP


def read_state(disk: Disk) -> tuple[CycleState | None, str | None]:
    """The persisted cycle (or None), and what is wrong with the file if it does not parse."""
    if not disk.exists(STATE_FILE):
        return None, None
    with disk.open(STATE_FILE) as handle:
        data = handle.read_all()
    try:
        return CycleState.unpack(data), None
    except ValueError as e:
        return None, f"{disk.where(STATE_FILE)}: {e}"


def erasing_of(disk: Disk) -> dict[int, dict[int, int]]:
    """The unfinished erasure recorded on ``disk`` (file -> offset -> original type; empty: none, or no
    readable state, in which case nothing half erased is accepted)."""
    state, _ = read_state(disk)
    return {} if state is None else state.erasing_map()


__all__ = ["CycleState", "STATE_FILE", "read_state", "write_state", "erasing_of", "TO_DO", "ERASED", "DELETED", "SKIPPED",
           "STATUS_NAMES"]
