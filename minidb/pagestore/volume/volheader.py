"""The volume header (page 0) and the layout it implies.

A volume is formatted for a fixed number of pages, so the number of
extent-map and store-map pages is known from the start (extending a volume
would mean reformatting it). Page 0 is the *header*; store 0, the
pseudo-store of extent-map and store-map pages, follows from page 1:

    page 0                    the volume header
    pages 1 .. E              extent-map pages (E = ceil(extents / extlinks per page))
    pages E+1 .. E+S          store-map pages (S = ceil(stores / store nodes per page))
    the rest                  pages of stores 1, 2, ... in extents of ext_sz pages

The extents that hold store 0's pages (``store0_exts``) are never given to
another store: the search for a free extent starts after them.

The header is an ordinary page (tag HEADER) whose slot 0 holds this record
(little-endian, ``struct`` format ``<8sIIIIIIIIIIIIIQ``, 68 bytes)::

    offset size field               worked example (64 pages of 512 bytes, ext_sz 4)
    ------ ---- ------------------  ------------------------------------------------
       0     8  magic               b"minidbVL"
       8     4  format_version      3
      12     4  vid                 1                  the volume id, v(1)
      16     4  ext_sz              4                  pages per extent
      20     4  num_exts            16                 extents on the volume
      24     4  store0_exts         1                  extents used by store 0
      28     4  store0_pages        4                  pages used by store 0 (0..3)
      32     4  first_extmap_page   1
      36     4  num_extmap_pages    2                  13 extlinks per page
      40     4  first_stmap_page    3
      44     4  num_stmap_pages     1                  55 store nodes per page
      48     4  page_size           512
      52     4  directory_root      4                  root page of store 1, the store directory
      56     4  root_index_root     8                  root page of store 2, the root index
      60     8  env_id              0x5c0f...          the environment id its log files carry

    0         8      12    16    20    24    28    32    36    40    44    48    52    56    60         68
    +---------+------+-----+-----+-----+-----+-----+-----+-----+-----+-----+-----+-----+-----+----------+
    |  magic  | vers | vid |ext_sz|nexts|s0ext|s0pgs|fxmap|nxmap|fsmap|nsmap|pgsz |dirrt|rixrt|  env_id  |
    +---------+------+-----+-----+-----+-----+-----+-----+-----+-----+-----+-----+-----+-----+----------+

As in Shore, the volume has as many store nodes as extents.

**The two B+trees every volume has.** Stores 1 (the store directory) and 2
(the root index) are B+trees (:mod:`minidb.pagestore.directory`). A B+tree's
root page never moves, and these two roots must be found before anything
else can be looked up, so formatting places each at the first page of its
store's first extent (store 1 gets the first extent after store 0's, store
2 the next) and the header records both. Version 1 volumes, whose store
directory was a heap of records, are refused (``format_version``).

**The environment id.** A page store is a volume, its log and its master
file; the volume is formatted right after its log is created and records the
log's environment id (:mod:`minidb.log.logdef`). The volume is the arbiter:
opening the storage manager gives the log this id, so a log file copied in
from another page store (same operations, other values: the same LSN chain)
is refused by name, whichever file it is. Version 2 volumes, which record
no id, are refused. (A volume formatted on its own, without a log, records
0: no environment yet.)
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

from minidb.pagestore.errors import VolumeError
from minidb.pagestore.pages.page import HEADER_SIZE, check_page_size
from minidb.pagestore.volume.extmap import MAX_EXT_SZ, extlinks_per_page
from minidb.pagestore.volume.stores import FIRST_USER_STORE, stnodes_per_page

MAGIC = b"minidbVL"
FORMAT_VERSION = 3  # 2: stores 1 and 2 are B+trees whose roots the header records; 3: and the environment id
RECORD = struct.Struct("<8sIIIIIIIIIIIIIQ")
VERSION = struct.Struct("<I")  # at offset 8: read first, so an older, shorter header is named as such
DEFAULT_EXT_SZ = 8
MAX_PAGES = 0xFFFF_FFFF  # a page number is 4 bytes (the page header's ``page``, ``num_exts`` here)


def _whole(name: str, value: object, low: int, high: int, why: str = "") -> int:
    """``value`` if it is an int in ``low..high``; else a ValueError naming ``name`` and the range."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} {value!r} is outside {low}..{high:,}{why}")
    return value


@dataclass(frozen=True)
class VolumeHeader:
    vid: int
    ext_sz: int
    num_exts: int
    store0_exts: int
    store0_pages: int
    first_extmap_page: int
    num_extmap_pages: int
    first_stmap_page: int
    num_stmap_pages: int
    page_size: int
    directory_root: int
    root_index_root: int
    format_version: int = FORMAT_VERSION
    env_id: int = 0  # the environment id of the volume's log (0: none, a volume formatted without a log)

    @classmethod
    def plan(cls, vid: int, num_pages: int, ext_sz: int = DEFAULT_EXT_SZ, page_size: int = 8192,
             env_id: int = 0) -> "VolumeHeader":
        """The layout of a volume of (at most) ``num_pages`` pages, in whole extents."""
        _whole("volume id", vid, 1, 0xFFFF_FFFF)
        _whole("num_pages", num_pages, 1, MAX_PAGES, " (a page number is 4 bytes)")
        _whole("ext_sz", ext_sz, 1, MAX_EXT_SZ)
        check_page_size(page_size)
        num_exts = num_pages // ext_sz
        num_extmap = max(1, math.ceil(num_exts / extlinks_per_page(page_size)))
        num_stmap = max(1, math.ceil(num_exts / stnodes_per_page(page_size)))
        store0_pages = 1 + num_extmap + num_stmap
        store0_exts = math.ceil(store0_pages / ext_sz)
        # store 0's extents, one for each of stores 1 and 2, and one to spare.
        needed = store0_exts + FIRST_USER_STORE
        if num_exts < needed:
            raise ValueError(
                f"a volume of {num_pages} pages with {ext_sz} pages per extent is too small: "
                f"{num_exts} extents, at least {needed} needed"
            )
        first = store0_exts * ext_sz  # stores 1 and 2 take the next two extents; their roots come first
        return cls(vid, ext_sz, num_exts, store0_exts, store0_pages, 1, num_extmap, 1 + num_extmap,
                   num_stmap, page_size, first, first + ext_sz, env_id=env_id)

    # -- derived sizes ------------------------------------------------------------
    @property
    def num_pages(self) -> int:
        return self.num_exts * self.ext_sz

    @property
    def num_stores(self) -> int:
        return self.num_exts

    @property
    def extlinks_per_page(self) -> int:
        return extlinks_per_page(self.page_size)

    @property
    def stnodes_per_page(self) -> int:
        return stnodes_per_page(self.page_size)

    @property
    def first_data_ext(self) -> int:
        """The lowest extent that can be given to a store (the static lower bound of searches)."""
        return self.store0_exts

    def extmap_page(self, ext: int) -> int:
        return self.first_extmap_page + ext // self.extlinks_per_page

    def stmap_page(self, snum: int) -> int:
        return self.first_stmap_page + snum // self.stnodes_per_page

    def extmap_pages(self) -> range:
        return range(self.first_extmap_page, self.first_extmap_page + self.num_extmap_pages)

    def stmap_pages(self) -> range:
        return range(self.first_stmap_page, self.first_stmap_page + self.num_stmap_pages)

    # -- bytes ------------------------------------------------------------------------
    def pack(self) -> bytes:
        return RECORD.pack(MAGIC, self.format_version, self.vid, self.ext_sz, self.num_exts, self.store0_exts,
                           self.store0_pages, self.first_extmap_page, self.num_extmap_pages,
                           self.first_stmap_page, self.num_stmap_pages, self.page_size, self.directory_root,
                           self.root_index_root, self.env_id)

    @classmethod
    def unpack(cls, data: bytes, where: str) -> "VolumeHeader":
        if len(data) >= 12 and data[:8] == MAGIC and VERSION.unpack_from(data, 8)[0] != FORMAT_VERSION:
            raise VolumeError(f"{where}: volume format version {VERSION.unpack_from(data, 8)[0]}, this minidb "
                              f"reads version {FORMAT_VERSION} only (its header records the "
                              f"environment id of its log)")
        if len(data) < RECORD.size:
            raise VolumeError(f"{where}: the volume header is cut short ({len(data)} bytes)")
        (magic, version, vid, ext_sz, num_exts, store0_exts, store0_pages, first_extmap, num_extmap,
         first_stmap, num_stmap, page_size, dir_root, rix_root, env_id) = RECORD.unpack_from(data)
        if magic != MAGIC:
            raise VolumeError(f"{where}: not a minidb volume (magic {magic!r})")
        header = cls(vid, ext_sz, num_exts, store0_exts, store0_pages, first_extmap, num_extmap, first_stmap,
                     num_stmap, page_size, dir_root, rix_root, version, env_id)
        try:
            expected = cls.plan(vid, num_exts * ext_sz, ext_sz, page_size, env_id)
        except ValueError as e:
            raise VolumeError(f"{where}: impossible volume header: {e}") from None
        if expected != header:
            raise VolumeError(f"{where}: inconsistent volume header {header}")
        return header


HEADER_RECORD_OFFSET = HEADER_SIZE  # slot 0's record of a freshly formatted header page
