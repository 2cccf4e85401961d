"""Formatting a volume: the header, the extent map, the store map, stores 1 and 2.

Formatting happens before the volume is mounted, so it writes its pages
directly (not through the buffer pool) and logs nothing: it writes store 0's
pages (the header, every extent-map and store-map page, each with its
checksum) in one write, extends the file to its full size (the other pages
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
  owns ``x(1.2)``; no pages allocated yet;
- extents 3-15 are free; store numbers 3-15 are unused.
"""

from __future__ import annotations

from minidb.io import Disk
from minidb.pagestore.errors import BadRequestError, VolumeError
from minidb.pagestore.volume.extmap import ExtlinkPage, Extlink, format_extlink_page
from minidb.pagestore.ids import PageId
from minidb.pagestore.pages.page import DEFAULT_PAGE_SIZE, PageTag, StoreFlags, stamp_checksum
from minidb.pagestore.pages.slotted import SlottedPage
from minidb.pagestore.volume.stores import DEFAULT_EFF, ROOT_INDEX, STORE_DIRECTORY, StnodePage, StoreNode, format_stnode_page
from minidb.pagestore.volume.volfile import volume_file_name
from minidb.pagestore.volume.volheader import DEFAULT_EXT_SZ, VolumeHeader


def format_volume(disk: Disk, vid: int = 1, num_pages: int = 1024, ext_sz: int = DEFAULT_EXT_SZ,
                  page_size: int = DEFAULT_PAGE_SIZE) -> VolumeHeader:
    """Create and format volume ``vid`` on ``disk``; return its header."""
    name = volume_file_name(vid)
    try:
        header = VolumeHeader.plan(vid, num_pages, ext_sz, page_size)
    except ValueError as e:
        raise BadRequestError(f"{disk.where(name)}: cannot format: {e}") from None
    if disk.exists(name):
        raise VolumeError(f"{disk.where(name)}: volume v({vid}) exists already")
    pages = format_pages(header)
    with disk.open(name, create=True) as f:
        f.write(0, b"".join(stamp_checksum(p.buf) for p in pages))
        f.truncate(header.num_pages * page_size)
        f.fsync()
    return header


def format_pages(header: VolumeHeader) -> list[SlottedPage]:
    """Store 0's pages of a freshly formatted volume, page 0 first."""
    vid, size = header.vid, header.page_size

    def new_page(number: int, tag: PageTag) -> SlottedPage:
        page = SlottedPage(bytearray(size))
        page.format(PageId(vid, 0, number), tag)
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
    for offset, snum in enumerate((STORE_DIRECTORY, ROOT_INDEX)):
        ext = header.first_data_ext + offset
        extmaps[ext // per_ext].put(ext, Extlink(owner=snum))
        stmaps[snum // per_store].put(snum, StoreNode(ext, DEFAULT_EFF, int(StoreFlags.REGULAR)))
    pages += [view.page for view in extmaps] + [view.page for view in stmaps]
    return pages
