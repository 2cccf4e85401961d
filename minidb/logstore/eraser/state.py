"""The persisted state of an erasure cycle (the file ``eraser.state`` beside the log).

A cycle survives a close and an open: the eraser rewrites this file after
each file it processes, and reads it when the environment opens, to resume
the cycle (if its end time has not passed) or start a fresh one. Format (all
integers little-endian)::

    offset  size  field
    ------  ----  ----------------------------------------------------
       0     4    magic b"ERSR"
       4     2    format version (1)
       6     8    cycle start, ms since the epoch (UTC)
      14     8    cycle end, ms since the epoch (UTC)
      22     4    n, the number of files selected
      26    5*n   per file: number (4), status (1): 0 to do, 1 erased
                  (or had nothing to erase), 2 deleted (a reserved file)
    26+5n    4    CRC-32 of every byte before it

It is written to ``eraser.state.tmp``, fsynced, and renamed over
``eraser.state`` (a rename is durable at once), so a crash leaves the old
state or the new one, never a mix. A state file that does not parse (wrong
magic, version, size or CRC) is reported by :func:`read_state` with what is
wrong; the eraser then starts a fresh cycle (erasing again is harmless).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

from minidb.io import Disk

STATE_FILE = "eraser.state"
STATE_TMP = "eraser.state.tmp"
MAGIC = b"ERSR"
VERSION = 1
HEAD = struct.Struct("<4sHQQI")
FILE = struct.Struct("<IB")
CRC = struct.Struct("<I")

TO_DO, ERASED, DELETED = 0, 1, 2


@dataclass
class CycleState:
    start_ms: int
    end_ms: int
    files: dict[int, int] = field(default_factory=dict)  # file number -> status, in selection order

    @property
    def remaining(self) -> list[int]:
        return [n for n, status in self.files.items() if status == TO_DO]

    @property
    def processed(self) -> list[int]:
        return [n for n, status in self.files.items() if status != TO_DO]

    def pack(self) -> bytes:
        body = HEAD.pack(MAGIC, VERSION, self.start_ms, self.end_ms, len(self.files))
        body += b"".join(FILE.pack(n, status) for n, status in self.files.items())
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
        size = HEAD.size + count * FILE.size + CRC.size
        if len(data) != size:
            raise ValueError(f"{len(data)} bytes, but {count} files make {size}")
        (stored,) = CRC.unpack_from(data, size - CRC.size)
        if stored != zlib.crc32(data[: size - CRC.size]):
            raise ValueError("CRC mismatch")
        files = {}
        for i in range(count):
            number, status = FILE.unpack_from(data, HEAD.size + i * FILE.size)
            if status not in (TO_DO, ERASED, DELETED):
                raise ValueError(f"file 0x{number:x} has unknown status {status}")
            files[number] = status
        return cls(start, end, files)


def write_state(disk: Disk, state: CycleState) -> None:
    if disk.exists(STATE_TMP):
        disk.delete(STATE_TMP)
    with disk.open(STATE_TMP, create=True) as handle:
        handle.write(0, state.pack())
        handle.fsync()
    disk.rename(STATE_TMP, STATE_FILE)


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


__all__ = ["CycleState", "STATE_FILE", "read_state", "write_state", "TO_DO", "ERASED", "DELETED"]
