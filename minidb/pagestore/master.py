"""The master LSN: where restart finds the last completed checkpoint.

When a checkpoint has logged ``chkpt_end`` and the log is durable up to it,
the LSN of its ``chkpt_begin`` becomes the *master LSN* (Shore's
``master_lsn``), written "in a special place so that it can always be
discovered on restart". Here that place is a small file, ``master``, on the
same disk as the volume and the log, holding two copies of a 32-byte
record in two slots. Each write goes to the slot *not* holding the newest
record and is fsynced, so a crash tearing the write leaves the other slot,
the previous master, intact (the classic ping-pong of a database's control
file). Reading takes the valid slot with the highest sequence number; a
slot whose checksum does not match is ignored.

Byte layout of one slot (``struct`` format ``<4sIQQQ``; the file is two
slots, 64 bytes)::

    offset size field
       0     4  magic      b"MDBM"
       4     4  checksum   CRC-32 of bytes 8..31
       8     8  sequence   1, 2, 3, ... (the newest slot wins)
      16     8  master     LSN of the last complete checkpoint's chkpt_begin
      24     8  end        LSN of that checkpoint's chkpt_end

    0      4      8          16         24         32
    +------+------+----------+----------+----------+
    |MDBM  | crc  | sequence |  master  |   end    |
    +------+------+----------+----------+----------+

No file, or no valid slot, means no checkpoint completed: restart reads
the log from its beginning.

Worked example: the first checkpoint begins at 0x1/0x3c0 and ends at
0x1/0x4a2; the master file's slot 0 then holds sequence 1, master
0x1/0x3c0. The second checkpoint writes slot 1 (sequence 2); if the crash
tears that write, restart still finds 0x1/0x3c0 in slot 0.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from minidb.io import Disk
from minidb.log.lsn import LSN, NULL_LSN

MASTER_FILE = "master"
SLOT = struct.Struct("<4sIQQQ")
MAGIC = b"MDBM"


@dataclass(frozen=True)
class MasterRecord:
    sequence: int
    master: LSN
    end: LSN


def _pack(record: MasterRecord) -> bytes:
    body = struct.pack("<QQQ", record.sequence, record.master.packed, record.end.packed)
    return MAGIC + struct.pack("<I", zlib.crc32(body)) + body


def _unpack(data: bytes) -> MasterRecord | None:
    if len(data) < SLOT.size:
        return None
    magic, crc, sequence, master, end = SLOT.unpack_from(data, 0)
    if magic != MAGIC or crc != zlib.crc32(data[8:SLOT.size]) or not sequence:
        return None
    return MasterRecord(sequence, LSN.unpack(master), LSN.unpack(end))


def read_master(disk: Disk) -> MasterRecord | None:
    """The newest valid master record, or None if no checkpoint ever completed."""
    if not disk.exists(MASTER_FILE):
        return None
    with disk.open(MASTER_FILE) as f:
        data = f.read(0, 2 * SLOT.size)
    slots = [_unpack(data[i * SLOT.size:(i + 1) * SLOT.size]) for i in range(2)]
    valid = [s for s in slots if s is not None]
    return max(valid, key=lambda s: s.sequence) if valid else None


def master_lsn(disk: Disk) -> LSN:
    record = read_master(disk)
    return record.master if record is not None else NULL_LSN


def write_master(disk: Disk, master: LSN, end: LSN) -> MasterRecord:
    """Make ``master`` the master LSN, durably, without ever overwriting the newest record."""
    current = read_master(disk)
    sequence = current.sequence + 1 if current is not None else 1
    record = MasterRecord(sequence, master, end)
    with disk.open(MASTER_FILE, create=True) as f:
        f.write((sequence % 2) * SLOT.size, _pack(record))
        f.fsync()
    return record
