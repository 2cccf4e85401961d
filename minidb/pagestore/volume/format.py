"""Formatting a volume: the header, the extent map, the store map, stores 1 and 2.

Formatting happens before the volume is mounted, so it writes its pages
directly (not through the buffer pool) and logs nothing: it writes store 0's
pages (the header, every extent-map and store-map page, each with its
checksum) and the root pages of stores 1 and 2 in one write, extends the file to its full size (the other pages
read as zeros, tag FREE) and fsyncs. A volume is therefore either fully
formatted and durable before any log entry refers to it, or, after a crash
during formatting, not a volume at all (mounting it fails with a
:class:`VolumeError` that says so: not a volume, a bad header page, or a
file cut short).

What a fresh volume holds (the worked example of
:mod:`minidb.pagestore.volume.volheader`: 64 pages of 512 bytes, ``ext_sz`` 4):

- extent ``x(1.0)`` holds store 0's pages: page 0 (the header), pages 1-2
  (the extent map: 16 extents at 13 extlinks per page) and page 3 (the
  store map); its pmap is ``####``;
- store 1 (the store directory) owns ``x(1.1)``, store 2 (the root index)
  owns ``x(1.2)``; each has its first page allocated (pmap ``#...``): the
  root of its B+tree, an empty leaf (page 4 and page 8), which the header
  records (:mod:`minidb.pagestore.directory`);
- extents 3-15 are free; store numbers 3-15 are unused.
"""

from __future__ import annotations

import struct

from minidb.io import Disk
from minidb.pagestore.errors import BadRequestError, VolumeError
from minidb.pagestore.ids import PageId
from minidb.pagestore.pages.page import DEFAULT_PAGE_SIZE, PageTag, StoreFlags, stamp_checksum
from minidb.pagestore.pages.slotted import SlottedPage
from minidb.pagestore.volume.extmap import Extlink, ExtlinkPage, format_extlink_page
from minidb.pagestore.volume.stores import (
    DEFAULT_EFF,
    ROOT_INDEX,
    STORE_DIRECTORY,
    StnodePage,
    StoreNode,
    format_stnode_page,
)
from minidb.pagestore.volume.volfile import STAMP_SLOTS_SIZE, volume_file_name
from minidb.pagestore.volume.volheader import DEFAULT_EXT_SZ, VolumeHeader

# Slot 0 of an empty B+tree root, a keyed page's header (:mod:`minidb.pagestore.btree.keyed`, which sits above
# the volume): level 1 (a leaf), pid0 0. The page store's verify checks both roots as B+trees.
EMPTY_LEAF_HEADER = struct.pack("<HI", 1, 0)


def format_volume(disk: Disk, vid: int = 1, num_pages: int = 1024, ext_sz: int = DEFAULT_EXT_SZ,
                  page_size: int = DEFAULT_PAGE_SIZE, env_id: int = 0) -> VolumeHeader:
    """Create and format volume ``vid`` on ``disk``; return its header. ``env_id``: the environment id
    of the log beside it (:mod:`minidb.pagestore.volume.volheader`)."""
    name = volume_file_name(vid)
    try:
        header = VolumeHeader.plan(vid, num_pages, ext_sz, page_size, env_id)
    except ValueError as e:
        raise BadRequestError(f"{disk.where(name)}: cannot format: {e}") from None
    if disk.exists(name):
        raise VolumeError(f"{disk.where(name)}: volume v({vid}) exists already")
    pages = format_pages(header)
    image = bytearray(page_size * (pages[-1].pid.page + 1))  # the pages between read as zeros: FREE
    for page in pages:
        image[page.pid.page * page_size:(page.pid.page + 1) * page_size] = stamp_checksum(page.buf)
    with disk.open(name, create=True) as f:
        f.write(0, bytes(image))
        # Taken now, the checkpoint stamp's slots too: writing a page back or a stamp never needs new space.
        f.allocate(header.num_pages * page_size + STAMP_SLOTS_SIZE)
        f.fsync()
    return header


def format_pages(header: VolumeHeader) -> list[SlottedPage]:
    """Store 0's pages of a freshly formatted volume, page 0 first, then the roots of stores 1 and 2."""
    vid, size = header.vid, header.page_size

    def new_page(number: int, tag: PageTag, store: int = 0) -> SlottedPage:
        page = SlottedPage(bytearray(size))
        page.format(PageId(vid, store, number), tag)
        return page

    pages = [new_page(0, PageTag.HEADER)]
    pages[0].insert(header.pack())
    per_ext = header.extlinks_per_page
    extmaps = []
    for i, number in enumerate(header.extmap_pages()):
        page = new_page(number, PageTag.EXTLINK)
        format_extlink_page(page, i * per_ext, per_ext)
        extmaps.append(ExtlinkPage(page))
    for ext in range(header.store0_exts):
        first = ext * header.ext_sz
        used = min(header.ext_sz, header.store0_pages - first)
        extmaps[ext // per_ext].put(ext, Extlink(owner=0, pmap=(1 << used) - 1))
    per_store = header.stnodes_per_page
    stmaps = []
    for i, number in enumerate(header.stmap_pages()):
        page = new_page(number, PageTag.STNODE)
        format_stnode_page(page, i * per_store, per_store)
        stmaps.append(StnodePage(page))
    roots = []
    for offset, (snum, root) in enumerate(((STORE_DIRECTORY, header.directory_root),
                                           (ROOT_INDEX, header.root_index_root))):
        ext = header.first_data_ext + offset
        extmaps[ext // per_ext].put(ext, Extlink(owner=snum, pmap=1 << (root - ext * header.ext_sz)))
        stmaps[snum // per_store].put(snum, StoreNode(ext, DEFAULT_EFF, int(StoreFlags.REGULAR)))
        roots.append(new_page(root, PageTag.BTREE, snum))
        roots[-1].insert(EMPTY_LEAF_HEADER)
    pages += [view.page for view in extmaps] + [view.page for view in stmaps] + roots
    return pages
