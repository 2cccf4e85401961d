"""A volume file: the pages of one volume, read and written by page number.

A volume and its log live on the same :class:`~minidb.io.Disk`: the volume
is the file ``v<vid>.vol`` (``v1.vol`` for ``v(1)``) next to the log files
``00000001.jdb``, ... (the log ignores names that are not its own). Page
``n`` lives at byte offset ``n * page_size``.

Only the buffer pool reads and writes pages (and the formatter, before the
volume is mounted). :meth:`VolumeFile.write_run` writes a run of contiguous
pages **in one disk write**: the unit in which the simulated disk records,
tears and loses writes, and in which the write-ahead rule is checked.

Formatting makes the file its full size (``num_pages * page_size``), its
disk space taken then, the stamp slots below included (``File.allocate``, so
writing a page back or a stamp never meets
a full disk, not even in an abort or restart), and nothing ever shrinks it,
so a shorter file has lost pages: mounting it is a
:class:`~minidb.pagestore.errors.VolumeCorruptionError` naming the first
missing page, as is a header page that is torn or fails its checksum. A
page of store 0 (the maps) that reads as zeros is damaged too (formatting
wrote every one of them): a :class:`~minidb.pagestore.errors.BadPageError`.

**The checkpoint stamp.** After the pages, the file ends in two 24-byte
slots that record the last checkpoint the volume has seen: each checkpoint,
once its ``chkpt_end`` is durable and before it becomes the master
(:mod:`minidb.pagestore.restart.chkpt`), writes its ``chkpt_begin`` LSN into
the slot not holding the newest stamp and fsyncs the volume, so every page
written before the checkpoint is durable with it, and a torn stamp write
leaves the previous stamp. Hence the newest stamp is never older than the
master checkpoint; a volume whose stamp is older (or missing, while a master
exists) is an older copy of the volume, restored from a backup: restart
would redo from the master checkpoint only and miss the pages flushed
before it, so opening refuses it
(:func:`minidb.pagestore.restart.master.check_volume_and_log`). A copy taken
after the stamp is sound: what it lacks was written after the checkpoint,
and restart redoes it, as after a crash. (It does not cover the pages of a
LOAD or INSERT store forced after the last checkpoint, which no log entry
can redo.)

Byte layout of one stamp slot (``struct`` format ``<4sIQQ``)::

    offset size field
       0     4  magic      b"MDBC"
       4     4  checksum   CRC-32 of bytes 8..23
       8     8  sequence   1, 2, 3, ... (the newest valid slot wins)
      16     8  chkpt      the chkpt_begin LSN of the checkpoint
"""

from __future__ import annotations

import struct
import zlib

from minidb.io import Disk, File
from minidb.log.lsn import LSN
from minidb.pagestore.errors import BadPageError, BadRequestError, VolumeCorruptionError, VolumeError
from minidb.pagestore.pages.page import HEADER_SIZE, MIN_PAGE_SIZE, Page
from minidb.pagestore.volume.volheader import RECORD, VolumeHeader


def volume_file_name(vid: int) -> str:
    return f"v{vid}.vol"


STAMP = struct.Struct("<4sIQQ")
STAMP_MAGIC = b"MDBC"
STAMP_SLOTS_SIZE = 2 * STAMP.size  # the two slots after the pages, taken on disk when the volume is formatted


def volume_env_id(disk: Disk, vid: int = 1) -> int | None:
    """The environment id that volume ``vid``'s header records, which its log files must carry (None:
    no volume, a volume that records none, or one too damaged to say; mounting it says why)."""
    if not disk.exists(volume_file_name(vid)):
        return None
    try:
        volume = VolumeFile(disk, vid)
    except VolumeError:  # VolumeCorruptionError included
        return None
    volume.close()
    return volume.header.env_id or None


def volume_checkpoint_stamp(disk: Disk, vid: int = 1) -> tuple[str, LSN | None] | None:
    """Where volume ``vid`` is and the checkpoint it was last stamped with (None: no volume, or one
    too damaged to say; mounting it says why)."""
    if not disk.exists(volume_file_name(vid)):
        return None
    try:
        volume = VolumeFile(disk, vid)
    except VolumeError:
        return None
    try:
        return volume.where(), volume.checkpoint_stamp()
    finally:
        volume.close()


class VolumeFile:
    """An open volume file (see the module documentation)."""

    def __init__(self, disk: Disk, vid: int, readonly: bool = False):
        name = volume_file_name(vid)
        if not disk.exists(name):
            raise VolumeError(f"{disk.where(name)}: no volume v({vid}) on this disk (no file {name})")
        self.disk = disk
        self.name = name
        self.file: File = disk.open(name)
        try:
            self.header = self._read_header()
            self._check_size()
        except BaseException:
            self.file.close()
            raise
        if self.header.vid != vid:
            self.file.close()
            raise VolumeError(f"{self.where()}: the file holds volume v({self.header.vid}), not v({vid})")
        self.vid = vid
        self.page_size = self.header.page_size
        self.num_pages = self.header.num_pages

    def where(self, page: int | None = None) -> str:
        place = self.disk.where(self.name)
        return place if page is None else f"{place} page {page}"

    def _read_header(self) -> VolumeHeader:
        first = self.file.read(0, HEADER_SIZE + RECORD.size)
        if len(first) < MIN_PAGE_SIZE and self.file.size() < MIN_PAGE_SIZE:
            raise VolumeError(f"{self.where()}: too short to be a volume ({self.file.size()} bytes)")
        header = VolumeHeader.unpack(first[HEADER_SIZE:], self.where(0))
        page = Page(bytearray(self.file.read(0, header.page_size)))
        if page.size != header.page_size:
            raise VolumeCorruptionError(f"{self.where(0)}: the header page is cut short")
        try:
            page.check(self.where(0))
        except BadPageError as e:
            raise VolumeCorruptionError(str(e)) from None
        return header

    def _check_size(self) -> None:
        size, page_size = self.file.size(), self.header.page_size
        if size < self.header.num_pages * page_size:
            first = size // page_size
            raise VolumeCorruptionError(
                f"{self.where(first)}: the volume file is cut short ({size} of {self.header.num_pages * page_size} "
                f"bytes): pages {first}..{self.header.num_pages - 1} are missing")

    def check_page(self, page: int) -> None:
        if not 0 <= page < self.num_pages:
            raise BadRequestError(f"{self.where()}: page {page} is outside the volume (0..{self.num_pages - 1})")

    def read_page(self, page: int) -> bytes:
        self.check_page(page)
        data = self.file.read(page * self.page_size, self.page_size)
        if len(data) < self.page_size:
            raise VolumeCorruptionError(f"{self.where(page)}: the page lies past the end of the volume file "
                                        f"({self.file.size()} bytes): the file was cut short")
        if page < self.header.store0_pages and not any(data):
            raise BadPageError(f"{self.where(page)}: a map page reads as zeros, but formatting wrote it: damaged")
        return data

    def write_run(self, first_page: int, data: bytes) -> None:
        """Write contiguous pages starting at ``first_page`` in one disk write."""
        count = len(data) // self.page_size
        if count < 1 or len(data) % self.page_size:
            raise ValueError(f"a run must be whole pages, not {len(data)} bytes")
        self.check_page(first_page)
        self.check_page(first_page + count - 1)
        self.file.write(first_page * self.page_size, data)

    def sync(self) -> None:
        self.file.fsync()

    # -- the checkpoint stamp (see the module documentation) ----------------------------------------
    def _stamps(self) -> list[tuple[int, LSN]]:
        """The valid stamp slots as (sequence, chkpt_begin LSN)."""
        base = self.header.num_pages * self.page_size
        data = self.file.read(base, STAMP_SLOTS_SIZE)
        found = []
        for at in range(0, len(data) - STAMP.size + 1, STAMP.size):
            magic, crc, sequence, lsn = STAMP.unpack_from(data, at)
            if magic == STAMP_MAGIC and crc == zlib.crc32(data[at + 8:at + STAMP.size]) and sequence:
                found.append((sequence, LSN.unpack(lsn)))
        return found

    def checkpoint_stamp(self) -> LSN | None:
        """The ``chkpt_begin`` LSN of the last checkpoint stamped on the volume (None: none)."""
        stamps = self._stamps()
        return max(stamps)[1] if stamps else None

    def stamp_checkpoint(self, lsn: LSN) -> None:
        """Record checkpoint ``lsn`` in the slot not holding the newest stamp, and fsync the volume."""
        stamps = self._stamps()
        sequence = max(stamps)[0] + 1 if stamps else 1
        body = struct.pack("<QQ", sequence, lsn.packed)
        slot = STAMP_MAGIC + struct.pack("<I", zlib.crc32(body)) + body
        self.file.write(self.header.num_pages * self.page_size + (sequence % 2) * STAMP.size, slot)
        self.file.fsync()

    def close(self) -> None:
        self.file.close()

    def __repr__(self) -> str:
        return f"VolumeFile({self.where()}, {self.num_pages} pages of {self.page_size})"
