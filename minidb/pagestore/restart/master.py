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

**The log must be whole.** The master record is written only once the log
is durable up to its ``chkpt_end``, and the page store deletes log files only
by scavenging (:meth:`~minidb.pagestore.sm.StorageManager.scavenge`), below
the master checkpoint, after recording the log head (:mod:`minidb.log.head`).
So before the log is opened (opening may cut a torn tail),
:func:`check_volume_and_log` refuses, with a
:class:`~minidb.pagestore.errors.LogLostError`, a volume whose log is
missing, whose first file (``00000001.jdb``, or the recorded head) is gone,
or whose log ends at or before the master checkpoint's ``chkpt_end`` (a file
cut or deleted at the end), and a master record whose volume is gone. Once
files were scavenged the master record is the only way into the log: a
missing master file, or a master checkpoint that lies before the first log
file kept, is refused too, and so is a master file shorter than its two
slots once its second record was written (the first write makes the whole
64 bytes: slot 1, after 32 zero bytes). Restart on
such a log would silently forget committed work. So would a volume older
than the master checkpoint (an older copy restored from a backup): its
checkpoint stamp (:mod:`minidb.pagestore.volume.volfile`) must name the master
checkpoint or a later one (:func:`check_volume_stamp`). (A page whose LSN lies
past the end of the log is the same loss; the buffer pool finds it when it
reads the page.) An empty directory holds no page store: nothing to check.

Worked example: the first checkpoint begins at 0x1/0x3c0 and ends at
0x1/0x4a2; the master file's slot 0 then holds sequence 1, master
0x1/0x3c0. The second checkpoint writes slot 1 (sequence 2); if the crash
tears that write, restart still finds 0x1/0x3c0 in slot 0.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from minidb import impl
from minidb.io import Disk
from minidb.log.end import CheckedFile, LogEnd, scan_end
from minidb.log.files import file_name, log_file_numbers
from minidb.log.head import read_log_head
from minidb.log.lsn import LSN, NULL_LSN
from minidb.pagestore.errors import LogLostError, VolumeCorruptionError
from minidb.pagestore.volume.volfile import volume_checkpoint_stamp, volume_env_id, volume_file_name

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


def check_log_is_whole(disk: Disk, volume_name: str) -> tuple[LogEnd, CheckedFile | None]:
    """Refuse a log that lost durable entries the volume ``volume_name`` relies on (see the module documentation).
    Returns the log's end as found (:func:`~minidb.log.end.scan_end`), for the log's opening to use."""
    record = check_log_files(disk, volume_name)
    found = scan_end(disk, env_id=volume_env_id(disk))  # the volume says which environment's files belong
    end = found[0].end_lsn
    if record is not None and record.end >= end:
        raise LogLostError(f"{disk.where(MASTER_FILE)}: the last checkpoint (from {record.master} to {record.end}) "
                           f"lies past the end of the log ({end}): durable log entries are missing")
    return found


def check_log_files(disk: Disk, volume_name: str) -> MasterRecord | None:
    """The checks of :func:`check_log_is_whole` that need no scan of the log: its files are there from the
    recorded head, the master record can lead into them, the volume is not older than it. Returns that
    master record (None: no checkpoint completed)."""
    numbers = log_file_numbers(disk)
    if not numbers:
        raise LogLostError(f"{disk.where()}: the volume {volume_name} has no log (no log files like "
                           f"{file_name(1)}): the log is missing")
    head = read_log_head(disk)
    if numbers[0] != head:
        scavenged = " (files before it were scavenged)" if head > 1 else ""
        raise LogLostError(f"{disk.where(file_name(head))}: the log's first file is missing{scavenged} (the log "
                           f"starts at {file_name(numbers[0])}); the page store needs its whole log")
    record = read_master(disk)
    if record is not None and record.sequence >= 2 and disk.size(MASTER_FILE) < 2 * SLOT.size:
        raise LogLostError(f"{disk.where(MASTER_FILE)}: the master file is cut short ({disk.size(MASTER_FILE)} of "
                           f"{2 * SLOT.size} bytes): its first write made both slots, so bytes were lost")
    if head > 1 and record is None:
        raise LogLostError(f"{disk.where(MASTER_FILE)}: the master checkpoint record is missing, but the log "
                           f"files before {file_name(head)} were scavenged: restart has no way into the log")
    if head > 1 and record is not None and record.master < LSN(head, 0):
        raise LogLostError(f"{disk.where(MASTER_FILE)}: the master checkpoint {record.master} lies before the "
                           f"first log file kept, {file_name(head)}: the master record is older than the log")
    if record is not None:
        check_volume_stamp(disk, record)
    return record


def check_volume_stamp(disk: Disk, record: MasterRecord) -> None:
    """Refuse a volume older than the master checkpoint: its checkpoint stamp (:mod:`minidb.pagestore.volume.volfile`)
    is missing or names an earlier checkpoint, so it is an older copy restored beside a newer log and master."""
    found = volume_checkpoint_stamp(disk)
    if found is None:
        return
    where, stamp = found
    if stamp is None or stamp < record.master:
        raise VolumeCorruptionError(
            f"{where}: the volume is older than its log's last checkpoint (the volume was last stamped at "
            f"{stamp if stamp is not None else 'no checkpoint'}, the master checkpoint is {record.master}): an "
            f"older copy of the volume; restart would miss the pages written before that checkpoint")


def check_volume_and_log(disk: Disk) -> tuple[LogEnd, CheckedFile | None] | None:
    """Before a page store's log is opened: its volume and its log must both be there, and the log whole.
    Returns the log's end as that check found it (None: no volume, so no check), which the log's opening
    right after may take instead of searching for it again (nothing is written in between)."""
    volume = volume_file_name(1)
    if disk.exists(volume):
        return check_log_is_whole(disk, volume)
    if disk.exists(MASTER_FILE):
        raise VolumeCorruptionError(f"{disk.where(volume)}: the volume is missing, but its master checkpoint "
                                    f"record is there: the page store lost its volume")
    return None


#: the check before the storage manager opens the log (restart's opening)
CHECK_VOLUME_AND_LOG = impl.hot_spot(check_volume_and_log)
