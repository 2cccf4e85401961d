"""A volume file: the pages of one volume, read and written by page number.

A volume and its log live on the same :class:`~minidb.io.Disk`: the volume
is the file ``v<vid>.vol`` (``v1.vol`` for ``v(1)``) next to the log files
``00000001.jdb``, ... (the log ignores names that are not its own). Page
``n`` lives at byte offset ``n * page_size``.

Only the buffer pool reads and writes pages (and the formatter, before the
volume is mounted). :meth:`VolumeFile.write_run` writes a run of contiguous
pages **in one disk write**: the unit in which the simulated disk records,
tears and loses writes, and in which the write-ahead rule is checked.

Formatting makes the file its full size (``num_pages * page_size``) and
nothing ever shrinks it, so a shorter file has lost pages: mounting it is a
:class:`~minidb.pagestore.errors.VolumeCorruptionError` naming the first
missing page, as is a header page that is torn or fails its checksum. A
page of store 0 (the maps) that reads as zeros is damaged too (formatting
wrote every one of them): a :class:`~minidb.pagestore.errors.BadPageError`.
"""

from __future__ import annotations

from minidb.io import Disk, File
from minidb.pagestore.errors import BadPageError, BadRequestError, VolumeCorruptionError, VolumeError
from minidb.pagestore.volume.volheader import RECORD, VolumeHeader
from minidb.pagestore.pages.page import HEADER_SIZE, MIN_PAGE_SIZE, Page


def volume_file_name(vid: int) -> str:
    return f"v{vid}.vol"


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

    def close(self) -> None:
        self.file.close()

    def __repr__(self) -> str:
        return f"VolumeFile({self.where()}, {self.num_pages} pages of {self.page_size})"
