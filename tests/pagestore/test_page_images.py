"""Full page images: one per clean-to-dirty transition, the recovery LSN is the image's, torn pages repaired from
the log after the redo LSN alone."""

import random

import pytest

from minidb.errors import SimulatedCrash
from minidb.io import CrashMode
from minidb.log import file_name
from minidb.pagestore.errors import PageStoreCorruptionError
from minidb.pagestore.pages.page import PageTag
from minidb.pagestore.pages.slotted import SlottedPage
from minidb.pagestore.wal.logrec import REDO
from minidb.pagestore.wal.pageimage import image_values, page_hole

from tests.pagestore.sm_helpers import entries, new_sm, open_again

FILE_MAX = 2048


def images_of(sm, page: int, start=None) -> list:
    return [e for e in entries(sm, ("page_image",), start) if e.values["page"] == page]


def records_sm(count: int = 6, **options):
    """A store with one file of ``count`` small records, committed, every page written and clean."""
    sm = new_sm(**{"file_max": FILE_MAX, **options})
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rids = [sm.create_rec(t, fid, b"record %d" % i) for i in range(count)]
    sm.bp.force_all()
    return sm, fid, rids


def test_one_image_per_clean_to_dirty_transition():
    sm, fid, rids = records_sm()
    page = rids[0].page
    assert images_of(sm, page) == []  # the page began with page_format: that is its image
    with sm.transaction() as t:
        sm.update_rec(t, rids[0], 0, b"R")  # clean -> dirty: the image first
        sm.update_rec(t, rids[1], 0, b"R")  # the page is dirty: no second image
    first = images_of(sm, page)
    changes = [e for e in entries(sm, ("rec_splice",)) if e.values["page"] == page]
    assert len(first) == 1 and len(changes) == 2 and first[0].lsn < changes[0].lsn
    sm.bp.force_all()  # written: clean again
    with sm.transaction() as t:
        sm.update_rec(t, rids[2], 0, b"R")
    assert len(images_of(sm, page)) == 2


def test_the_recovery_lsn_is_the_images_lsn():
    sm, fid, rids = records_sm()
    with sm.transaction() as t:
        sm.update_rec(t, rids[0], 0, b"R")
        sm.update_rec(t, rids[0], 1, b"S")
    (image,) = images_of(sm, rids[0].page)
    assert sm.bp.dirty_page_table()[rids[0].pid] == image.lsn
    assert [v.rec_lsn for v in sm.bp.frame_views() if v.pid == rids[0].pid] == [image.lsn]


def test_a_fresh_pages_format_is_its_image():
    sm, fid, rids = records_sm()
    with sm.transaction() as t:
        made = [sm.create_rec(t, fid, b"x" * 120) for _ in range(4)]  # 4 x 124 bytes do not fit on one page
    rid = made[-1]
    assert rid.page != rids[0].page and images_of(sm, rid.page) == []
    (fmt,) = [e for e in entries(sm, ("page_format",)) if e.values["page"] == rid.page]
    assert sm.bp.dirty_page_table()[rid.pid] == fmt.lsn


def test_an_image_leaves_out_the_hole_and_restores_the_page_exactly():
    page = SlottedPage(bytearray(512))
    from minidb.pagestore.ids import PageId
    page.format(PageId(1, 3, 17), PageTag.FILE)
    page.insert(b"x" * 20)
    page.insert(b"y" * 20)
    assert page_hole(page) == (88, 512 - 12 - 8 - 88)  # between the records and the slot table
    values = image_values(page)
    assert len(values["image"]) == 512 - values["hole_len"] == 108
    copy = SlottedPage(bytearray(b"\xee" * 512))
    REDO["page_image"](copy, values)
    assert copy.buf == page.buf
    rng = random.Random(5)
    noise = SlottedPage(bytearray(rng.randrange(1, 256) for _ in range(512)))  # no run of zeros: no hole
    assert page_hole(noise) == (0, 0) and image_values(noise)["image"] == bytes(noise.buf)


def test_printlog_shows_an_image_by_its_size():
    sm, fid, rids = records_sm()
    with sm.transaction() as t:
        sm.update_rec(t, rids[0], 0, b"R")
    (image,) = images_of(sm, rids[0].page)
    text = image.entry_type.format(image.values)
    size = len(image.values["image"])
    assert f'page="{rids[0].page}"' in text and f'image="{size} bytes"' in text and size < 512


def overwrite_log_before(disk, lsn) -> int:
    """Overwrite every log byte before ``lsn`` (but the first file's header entry) with 0xee; return how many.

    What scavenging would have deleted, made unreadable instead: any read there fails."""
    count = 0
    for number in range(1, lsn.file + 1):
        with disk.open(file_name(number)) as f:
            start, end = 38, (lsn.offset if number == lsn.file else f.size())  # the FileHeader entry stays
            f.write(start, b"\xee" * (end - start))
            f.fsync()
            count += end - start
    return count


def fuzzy_checkpoint_example():
    """The docs' example: a page changed (image at i), written clean, changed again (image at r), still dirty
    at a checkpoint, written torn after it. Returns the crashed disk, the record on the page and r."""
    sm, fid, rids = records_sm()
    with sm.transaction() as t:
        other = sm.create_file(t)
        filler = [sm.create_rec(t, other, b"filler %d" % i) for i in range(4)]

    def fill(count: int) -> None:  # changes to another page, to fill log files
        for i in range(count):
            with sm.transaction() as t:
                sm.update_rec(t, filler[i % 4], 0, b"%x" % i)

    fill(12)
    sm.bp.force_all()
    with sm.transaction() as t:
        sm.update_rec(t, rids[0], 0, b"I")  # the first image, at i
    sm.bp.force_all()  # written: clean
    with sm.transaction() as t:
        sm.update_rec(t, rids[0], 0, b"R")  # clean -> dirty again: the image at r
    r = images_of(sm, rids[0].page)[-1].lsn
    sm.checkpoint()  # fuzzy: the page stays dirty, recovery LSN r
    fill(12)
    with sm.transaction() as t:
        sm.update_rec(t, rids[0], 1, b"Z")
    sm.bp.force_all()
    write = max(e.index for e in sm.disk.events if e.kind == "write" and e.offset == rids[0].page * 512)
    assert sm.log.end_lsn.file > r.file > 1
    return sm.disk.crash_image(write, CrashMode.torn(100)), rids[0], r


def test_a_torn_page_is_repaired_after_the_log_before_the_redo_lsn_is_gone():
    disk, rid, r = fuzzy_checkpoint_example()
    assert overwrite_log_before(disk, r) > FILE_MAX
    sm = open_again(disk)
    report = sm.restart_report
    assert report.analysis.redo_lsn == r
    (repair,) = report.redo.pages_repaired
    assert (repair.pid, repair.image_lsn, repair.scanned_from) == (rid.pid, r, r)
    assert "torn page" in report.trace_text() and f"repaired from its image at {r}" in report.trace_text()
    with sm.transaction() as t:
        assert sm.read_rec(t, rid).body == b"RZcord 0"
    assert sm.check() == []


def test_a_torn_page_without_an_image_is_refused_naming_it():
    """Images switched off: the torn page's log from its recovery LSN on holds only changes, never silently
    applied to a half-written page."""
    sm, fid, rids = records_sm()
    sm.checkpoint()  # the page's page_format is before the redo LSN now
    sm.bp.image_logger = None
    with sm.transaction() as t:
        sm.update_rec(t, rids[0], 0, b"R")
    sm.bp.force_all()
    write = max(e.index for e in sm.disk.events if e.kind == "write" and e.offset == rids[0].page * 512)
    disk = sm.disk.crash_image(write, CrashMode.torn(100))
    with pytest.raises(PageStoreCorruptionError, match=rf"torn page.*the log from p\(1.{fid.store}.{rids[0].page}\)'s "
                                                       r"recovery LSN 0x\w+/0x\w+ on holds no image of it"):
        open_again(disk)


def log_bytes_per_transaction(images: bool, count: int = 40) -> float:
    """A workload of small updates with the page cleaner running now and then; log bytes per transaction."""
    sm, fid, rids = records_sm(count=12, frames=8)
    if not images:
        sm.bp.image_logger = None
    rng = random.Random(3)
    start = sm.log.end_lsn
    for i in range(count):
        with sm.transaction() as t:
            for _ in range(3):
                sm.update_rec(t, rng.choice(rids), 0, b"%02d" % i)
        if i % 5 == 4:
            sm.bp.clean()
    return sum(e.size for e in sm.log.scan(start)) / count


def test_log_bytes_per_transaction_with_and_without_images():
    without, with_images = log_bytes_per_transaction(False), log_bytes_per_transaction(True)
    # Measured: 210 bytes per transaction without images, 281 with (docs/ARCHITECTURE.md): an image of a
    # 512-byte page holds its records and slots only.
    assert without < with_images < 1.5 * without


@pytest.mark.parametrize("prop", ["regular", "tmp", "load"])
def test_a_large_records_pages_get_images_as_their_stores_pages_do(prop):
    """A large record's pages carry their file's flags: a page of a regular file, written and read again,
    logs its image at its next change (a page added by growth has its format); the pages of a TMP file or
    of a LOAD file being loaded never log one."""
    sm = new_sm(file_max=FILE_MAX, max_small_rec=8, index_fanout=4, frames=8)
    t = sm.begin()
    fid = sm.create_file(t, prop)
    rid = sm.create_rec(t, fid, bytes(3 * 448), b"hd")  # LARGE_0: one chunk of 3 full data pages
    other = sm.create_file(t)
    for _ in range(10):  # a page each: the record's pages are evicted (written), read again clean below
        sm.create_rec(t, other, bytes(400))
    pages = sm.files.large_layout(rid).pages
    assert not any(v.pid.page in pages for v in sm.bp.frame_views() if v.pid is not None)
    start = entries(sm)[-1].lsn
    sm.update_rec(t, rid, 0, b"first page")
    sm.update_rec(t, rid, 2 * 448, b"third page")
    sm.append_rec(t, rid, b"more")  # a fourth page
    sm.commit(t)
    large = sm.files.file_info(fid).large
    imaged = [e.values["page"] for e in entries(sm, ("page_image",), start) if e.values["store"] == large]
    assert len(pages) == 3 and len(sm.files.large_layout(rid).pages) == 4
    assert imaged == ([pages[0], pages[2]] if prop == "regular" else [])


def test_a_crash_while_logging_an_image_is_not_hidden_by_the_unfix():
    """The image logged before a change can be the write that crashes (here it starts a new log file).
    The change was never applied: the unfix that follows (in a ``finally``) must not log the image again
    on the crashed disk, which would replace the crash by "handle was lost"; restart then finds the
    record as the last commit left it."""
    sm, fid, rids = records_sm()
    with sm.transaction() as t:
        other = sm.create_rec(t, sm.create_file(t), b"pad")
    sm.bp.force_all()  # rids[0]'s page is clean: its next change logs an image first
    pad = sm.begin()
    while FILE_MAX - sm.log.end_lsn.offset > 150:  # unflushed entries, and no room for a page image
        sm.update_rec(pad, other, 0, b"P")
    t = sm.begin()
    sm.disk.schedule_crash(after_ops=1)  # the write that ends the log file, for the image
    with pytest.raises(SimulatedCrash) as crash:
        sm.free_rec(t, rids[0])
    assert crash.value.__context__ is None
    assert [f.page for f in sm.bp.frame_views() if f.pid == rids[0].pid and f.dirty] == []
    again = open_again(sm.disk)
    with again.transaction() as t:
        assert again.read_rec(t, rids[0]).body == b"record 0"
