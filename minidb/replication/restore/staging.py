"""The staging area of a network restore: files received, verified, then installed all at once.

A network restore (:mod:`.client`) must never leave a node with half of a
log that opens: the node's own files stay untouched until the new ones are
all on its disk, verified and durable. The disk interface is one flat
directory (:mod:`minidb.io.base`), so the staging area is a *name prefix*:
every file a restore writes is named ``restore.<name>`` (``restore.00000001.jdb``,
``restore.loghead``), and :class:`StagingDisk` shows them as a disk of their
own, under their plain names, so that the log's own verifier
(:func:`minidb.log.verify.verify_log`) reads the staged log exactly as it
reads any log. The log never reads a ``restore.*`` file (its files are
named ``NNNNNNNN.jdb``).

The steps, and what a crash between any two of them leaves:

1. ``discard``: every ``restore.*`` file of an earlier attempt is deleted;
2. each file is received into ``restore.<name>`` and fsynced, its length
   and CRC-32 checked against the member's list;
3. the staged log is verified (every file, every entry, the FileHeader
   chain and the environment id), and its log head written
   (``restore.loghead``) when the member's log starts after file 1;
4. the *marker* ``restore.marker`` is written **last** and fsynced: the
   list of files (number, length, checksum) and the log head. Until it is
   durable the restore is incomplete: a crash leaves the node's own log,
   untouched, and ``restore.*`` files that the next attempt (or the next
   open) discards;
5. :func:`install` (*rolls forward*: every step may be done again): it
   deletes the node's old log (the log files the marker does not list,
   ``eraser.state``, whose cycle names the old files, and ``loghead`` when
   the new log has none), renames each ``restore.<name>`` over ``<name>``,
   checks every listed file is there at its length, and deletes the marker.

A crash inside step 5 leaves a mix of old and new files, so nobody may open
the directory before the install is finished: ``ReplicatedEnvironment.open``
calls :func:`finish_restore` first, which finishes an install whose marker
is valid and discards a staging area that has none. An invalid marker is one
a crash tore before its fsync, since the install starts only after it: the
node's log is then still its own.

**What a restore deletes**, exactly: the ``restore.*`` files it wrote (an
incomplete attempt, or the marker at the end); at install, the old log
files (``NNNNNNNN.jdb``) the marker does not list, ``eraser.state`` and
``loghead`` (both replaced by the new log's). Everything else in the
directory stays (``election.acceptor``: the node's promises are its own).

Marker layout (little-endian; ``struct`` ``"<4sHHII"``, then per file
``"<IQI"``, then the CRC)::

    offset     size  field
    ------     ----  -------------------------------------------------
       0         4   magic       b"MDBS" (minidb staged restore)
       4         2   version     1
       6         2   reserved    0
       8         4   count       n, the files staged
      12         4   log_head    the first file of the restored log
      16       16*n  per file:   number (4), length (8), CRC-32 (4)
    16+16n       4   checksum    CRC-32 of bytes 0 .. 16+16n

Worked example: files 3 and 4 (0x2a0 and 0x1c8 bytes) of a log whose head
is 3: ``4d444253 0100 0000 02000000 03000000``, then ``03000000
a002000000000000 <crc of file 3>`` and ``04000000 c801000000000000 <crc>``,
then the marker's CRC: 52 bytes.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from minidb.io import Disk, File
from minidb.log.files import all_log_file_numbers, file_name
from minidb.log.head import HEAD_FILE, write_log_head
from minidb.log.verify import verify_log
from minidb.logstore.eraser.state import STATE_FILE
from minidb.replication.errors import RestoreChecksumError, StagedRestoreCorruptionError

PREFIX = "restore."
MARKER = "marker"  # restore.marker on the node's disk
MAGIC = b"MDBS"
VERSION = 1
_HEAD = struct.Struct("<4sHHII")
_FILE = struct.Struct("<IQI")
_CRC = struct.Struct("<I")


@dataclass(frozen=True)
class FileInfo:
    """One file of a restore: its number, the length sent and the CRC-32 of those bytes."""

    number: int
    length: int
    checksum: int

    @property
    def name(self) -> str:
        return file_name(self.number)


class StagingDisk(Disk):
    """The ``restore.*`` files of ``disk``, under their plain names (see the module documentation)."""

    def __init__(self, disk: Disk):
        self.disk = disk

    def open(self, name: str, create: bool = False) -> File:
        return self.disk.open(PREFIX + self.check_name(name), create)

    def exists(self, name: str) -> bool:
        return self.disk.exists(PREFIX + self.check_name(name))

    def list(self) -> list[str]:
        return [n[len(PREFIX):] for n in self.disk.list() if n.startswith(PREFIX)]

    def delete(self, name: str) -> None:
        self.disk.delete(PREFIX + self.check_name(name))

    def rename(self, old: str, new: str) -> None:
        self.disk.rename(PREFIX + old, PREFIX + self.check_name(new))

    def size(self, name: str) -> int:
        return self.disk.size(PREFIX + name)

    def free_space(self) -> int | None:
        return self.disk.free_space()

    def where(self, name: str = "") -> str:
        return self.disk.where(PREFIX + name if name else "") + ("" if name else f" ({PREFIX}*)")


def discard(disk: Disk) -> list[str]:
    """Delete every ``restore.*`` file (an incomplete restore's); the names deleted."""
    gone = [n for n in disk.list() if n.startswith(PREFIX)]
    for name in gone:
        disk.delete(name)
    return gone


def verify_staged(disk: Disk, files: list[FileInfo], log_head: int) -> None:
    """Step 3: each staged file as listed, the staged log whole (its head recorded first); else
    :class:`RestoreChecksumError` naming the file and offset."""
    staging = StagingDisk(disk)
    for info in files:
        with staging.open(info.name) as f:
            data = f.read_all()
        if len(data) != info.length or zlib.crc32(data) != info.checksum:
            raise RestoreChecksumError(staging.where(info.name), 0,
                                       f"staged file has {len(data)} bytes, CRC-32 0x{zlib.crc32(data):08x}; "
                                       f"the member listed {info.length} bytes, 0x{info.checksum:08x}")
    if log_head > 1:
        write_log_head(staging, log_head)
    report = verify_log(staging)
    if not report.ok:
        problem = report.problem
        raise RestoreChecksumError(staging.where(problem.file_name), problem.offset, f"the staged log does not "
                                   f"verify: {problem.what}")


def encode_marker(files: list[FileInfo], log_head: int) -> bytes:
    body = _HEAD.pack(MAGIC, VERSION, 0, len(files), log_head)
    body += b"".join(_FILE.pack(f.number, f.length, f.checksum) for f in files)
    return body + _CRC.pack(zlib.crc32(body))


def decode_marker(data: bytes) -> tuple[list[FileInfo], int] | None:
    """The files and log head of a valid marker; None for a torn or invalid one."""
    if len(data) < _HEAD.size + _CRC.size:
        return None
    magic, version, _, count, log_head = _HEAD.unpack_from(data, 0)
    end = _HEAD.size + count * _FILE.size
    if magic != MAGIC or version != VERSION or len(data) != end + _CRC.size \
            or _CRC.unpack_from(data, end)[0] != zlib.crc32(data[:end]):
        return None
    files = [FileInfo(*_FILE.unpack_from(data, _HEAD.size + i * _FILE.size)) for i in range(count)]
    return files, log_head


def write_marker(disk: Disk, files: list[FileInfo], log_head: int) -> None:
    """Step 4: the marker, written last and fsynced: from here on the restore is installed, even after a crash."""
    with StagingDisk(disk).open(MARKER, create=True) as f:
        f.truncate(0)
        f.write(0, encode_marker(files, log_head))
        f.fsync()


def read_marker(disk: Disk) -> tuple[list[FileInfo], int] | None:
    staging = StagingDisk(disk)
    if not staging.exists(MARKER):
        return None
    with staging.open(MARKER) as f:
        return decode_marker(f.read_all())


@dataclass
class Installed:
    """What an install did: the files it put in place and the old files it deleted."""

    installed: list[str]
    removed: list[str]

    def __str__(self) -> str:
        return f"installed {len(self.installed)} files, removed {len(self.removed)} old files"


def install(disk: Disk) -> Installed | None:
    """Step 5, rolled forward from a valid marker (None: there is none); every step may be done again."""
    marker = read_marker(disk)
    if marker is None:
        return None
    files, log_head = marker
    listed = {f.number for f in files}
    removed = []
    old = [file_name(n) for n in all_log_file_numbers(disk) if n not in listed] + [STATE_FILE]
    if log_head <= 1:
        old.append(HEAD_FILE)  # the new log has no head record; the old one's would hide its files
    for name in old:
        if disk.exists(name):
            disk.delete(name)
            removed.append(name)
    staging = StagingDisk(disk)
    if staging.exists(HEAD_FILE):
        disk.rename(PREFIX + HEAD_FILE, HEAD_FILE)
    installed = []
    for info in files:
        if staging.exists(info.name):
            disk.rename(PREFIX + info.name, info.name)
            installed.append(info.name)
        if not disk.exists(info.name) or disk.size(info.name) != info.length:
            raise StagedRestoreCorruptionError(f"{disk.where(info.name)}: a network restore's install finds it "
                                               f"missing or not {info.length} bytes long: the directory was "
                                               "changed behind the restore")
    staging.delete(MARKER)
    discard(disk)  # nothing else staged may outlive the install
    return Installed(installed, removed)


def finish_restore(disk: Disk) -> str | None:
    """Before an environment opens: finish an install whose marker is durable, discard an incomplete
    staging area; what was done, or None if nothing was staged."""
    if not any(n.startswith(PREFIX) for n in disk.list()):
        return None
    done = install(disk)
    if done is not None:
        return f"a network restore's install was finished: {done}"
    return f"an incomplete network restore was discarded: {', '.join(discard(disk))}"


__all__ = ["FileInfo", "StagingDisk", "Installed", "PREFIX", "MARKER", "discard", "verify_staged", "encode_marker",
           "decode_marker", "write_marker", "read_marker", "install", "finish_restore"]
