"""Full page images: what lets redo repair a torn page from the recent log alone.

A page write can be *torn*: the crash leaves part of the new bytes and part
of the old on disk (:mod:`minidb.pagestore.pages.page` detects it). The
entries of the log are changes *to* a page; they cannot be applied to a
page that is half old, half new. Redo needs an intact copy of the page to
start from, and the log must still hold it once old log files are deleted
(scavenged): the log is kept from the smallest recovery LSN of the dirty
pages on. So the page store keeps one invariant:

    **a dirty page's recovery LSN is the LSN of a full image of the page**
    (a ``page_image`` entry, or the ``page_format`` of a fresh page).

The rule that keeps it: **the change that makes a clean page dirty is
preceded by a** ``page_image`` **of the page** (the buffer pool calls
:func:`log_page_image` through its ``image_logger``, and the page is dirty
from the image's LSN on); later changes of the still-dirty page log no
image; once the page is written and clean, the next change logs one again.
A change that is not logged (the extent map's advisory free-space buckets)
makes the page dirty when it is unfixed: the image is logged then, and
holds the change. A page formatted afresh (``page_format``) needs no
image: formatting overwrites the whole page. A page of a TMP, LOAD or
INSERT store, whose changes are not logged at all, logs no image and is
kept out of the dirty page table instead
(:mod:`minidb.pagestore.pages.storeprop`).

Why not PostgreSQL's rule, an image at *the first change after each
checkpoint*? PostgreSQL's checkpoint writes every dirty page, so a page's
image after the last checkpoint is all redo ever needs. ARIES'
checkpoints are *fuzzy*: they write nothing, they only log the dirty pages
and their recovery LSNs, and log space is kept from the smallest of those.
With the checkpoint rule, a page changed at LSN i (first change after
checkpoint k-1: image), written and clean, changed again at r (not the first
change since k-1: no image), still dirty at checkpoint k (recovery LSN r),
then written torn after checkpoint k: the log is kept from r, and the only
image, at i, is gone. With the clean-to-dirty rule the change at r logs an
image at r itself. The rule needs no checkpoint at all: while a page is
dirty its recovery LSN (the image) stays in the dirty page table, so every
checkpoint keeps the log from the image on.

Restart (:mod:`minidb.pagestore.restart.redo`) rebuilds a torn page from the
newest image at or after the page's recovery LSN in analysis' dirty page
table, then redoes the page's later entries; it never reads the log before
the redo LSN for that. Redo dirties pages without images, so restart
writes every page before its checkpoint (:mod:`minidb.pagestore.restart`).

**The hole.** Most of a page is often zeros: the free gap between a slotted
page's records and its slot table (PostgreSQL's "hole" between
``pd_lower`` and ``pd_upper``), the unused entries of a store-map page. The
image leaves out the page's longest run of zero bytes (if at least
``MIN_HOLE`` long) and records where it was; redo puts the zeros back. The
run is found in the bytes rather than read from the header, so an image is
exact whatever the page's type.

Entry layout (fields of the log's table, :mod:`minidb.pagestore.wal.logdef`)::

    txn_id I64 = 0 | txn_prev_lsn LSN = NULL | vol U32 | store U32 | page U32
    | hole_start U16 | hole_len U16 | image BYTES (U32 length + page_size - hole_len bytes)

Worked example: a 512-byte file page with two records of 20 bytes has
``record_end`` 48 + 40 = 88 and its slot table at 512 - 12 - 8 = 492: the
hole is 404 zero bytes, so the image holds 108 bytes of the page (the entry,
with its header, 163 bytes).
"""

from __future__ import annotations

import re
from typing import Any

from minidb.log.lsn import LSN, NULL_LSN
from minidb.pagestore.pages.slotted import SlottedPage
from minidb.pagestore.wal.logdef import PAGE_IMAGE

MIN_HOLE = 16  # a shorter run of zeros is not worth its two fields
_ZEROS = re.compile(rb"\x00{%d,}" % MIN_HOLE)


def page_hole(page: SlottedPage) -> tuple[int, int]:
    """``(start, length)`` of the page's longest run of zero bytes, or ``(0, 0)`` if shorter than MIN_HOLE."""
    best = max((m.span() for m in _ZEROS.finditer(page.buf)), key=lambda span: span[1] - span[0], default=(0, 0))
    return (best[0], best[1] - best[0]) if best[1] - best[0] >= MIN_HOLE else (0, 0)


def image_values(page: SlottedPage) -> dict[str, Any]:
    """The fields of a ``page_image`` of ``page`` as it is now (txn 0: no transaction)."""
    start, length = page_hole(page)
    buf = page.buf
    return {"txn_id": 0, "txn_prev_lsn": NULL_LSN, "vol": page.pid.vol, "store": page.pid.store,
            "page": page.pid.page, "hole_start": start, "hole_len": length,
            "image": bytes(buf[:start]) + bytes(buf[start + length:])}


def log_page_image(log: Any, page: SlottedPage) -> LSN:
    """Log the full image of the fixed ``page``; the page takes the image's LSN."""
    lsn = log.append(PAGE_IMAGE, image_values(page))
    page.lsn = lsn
    return lsn


def restore_page_image(page: SlottedPage, v: dict[str, Any]) -> None:
    """The redo of ``page_image``: the page becomes the image, its hole zeros again."""
    start, image = v["hole_start"], v["image"]
    page.buf[:] = image[:start] + bytes(v["hole_len"]) + image[start:]
