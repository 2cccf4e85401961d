"""Damage to a page store is found and named: a lost log (item 2), bad pages (item 3), bad maps, a volume
cut short, and a new page that a concurrent fix cannot make a record miss (item 9)."""

import struct
import threading

import pytest

from minidb.errors import CorruptionError, UserError
from minidb.io import CrashMode, OSDisk, SimDisk
from minidb.log import file_name
from minidb.pagestore import PageId
from minidb.pagestore.buffer.latch import SH
from minidb.pagestore.errors import (
    LogLostError,
    PageChecksumError,
    PageStoreCorruptionError,
    VolumeCorruptionError,
    VolumeError,
)
from minidb.pagestore.pages.page import stamp_checksum
from minidb.pagestore.restart.master import MASTER_FILE, read_master
from minidb.pagestore.verify import verify_pagestore
from minidb.pagestore.volume.volfile import VolumeFile, volume_file_name

from tests.pagestore.sm_helpers import new_sm, open_again

PAGE = 512
VOL = volume_file_name(1)


def records_sm(disk=None, count=4, close=True, **options):
    """A page store with one file of ``count`` records ``record 0`` ...; closed cleanly unless ``close`` is False."""
    sm = new_sm(**options) if disk is None else _format_on(disk, **options)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rids = [sm.create_rec(t, fid, b"record %d" % i) for i in range(count)]
    if close:
        sm.close()
    return sm, fid, rids


def _format_on(disk, **options):
    from minidb.pagestore.sm import StorageManager

    from tests.pagestore.sm_helpers import OPTIONS
    return StorageManager.format(disk, num_pages=128, ext_sz=4, page_size=PAGE, frames=16, **{**OPTIONS, **options})


def files_of(disk) -> dict[str, bytes]:
    out = {}
    for name in disk.list():
        with disk.open(name) as f:
            out[name] = f.read_all()
    return out


def page_bytes(disk, number: int) -> bytearray:
    with disk.open(VOL) as f:
        return bytearray(f.read(number * PAGE, PAGE))


def put_page(disk, number: int, data: bytes) -> None:
    with disk.open(VOL) as f:
        f.write(number * PAGE, bytes(data))
        f.fsync()


# -- item 2: the page store opens without its log ----------------------------------------------------
def committed_but_not_written():
    """Durable commits whose pages are only in the pool, then a crash: the log alone holds them."""
    sm, fid, rids = records_sm(close=False)
    sm.disk.crash()
    return sm.disk, fid, rids


def test_item2_a_deleted_log_is_corruption_and_nothing_changes():
    disk, _, _ = committed_but_not_written()
    disk.delete(file_name(1))
    before = files_of(disk)
    with pytest.raises(LogLostError, match=r"v1.vol has no log .*the log is missing") as e:
        open_again(disk)
    assert isinstance(e.value, CorruptionError)
    assert files_of(disk) == before  # no new, empty log was started


def test_item2_a_log_cut_before_the_master_checkpoint_is_corruption():
    sm, fid, rids = records_sm()
    disk = sm.disk
    master = read_master(disk)
    cut = [e.lsn.offset for e in sm.log.scan() if e.lsn < master.master][-1]  # an entry boundary before it
    with disk.open(file_name(1)) as f:
        f.truncate(cut)
        f.fsync()
    before = files_of(disk)
    with pytest.raises(LogLostError, match=r"master: the last checkpoint .* lies past the end of the log"):
        open_again(disk)
    assert files_of(disk) == before


def test_item2_the_log_s_first_file_missing_is_corruption():
    sm, _, _ = records_sm(file_max=1024, close=True)
    assert len([n for n in sm.disk.list() if n.endswith(".jdb")]) >= 2
    sm.disk.delete(file_name(1))
    with pytest.raises(LogLostError, match=r"00000001.jdb: the log's first file is missing"):
        open_again(sm.disk, file_max=1024)


def test_item2_a_page_lsn_past_the_end_of_the_log_is_corruption():
    """No master to compare with: the pages written under the write-ahead rule tell that the log lost entries."""
    sm, fid, rids = records_sm()
    disk = sm.disk
    disk.delete(MASTER_FILE)
    first_rec = next(e for e in sm.log.scan() if e.type_name == "rec_insert")
    with disk.open(file_name(1)) as f:
        f.truncate(first_rec.lsn.offset)
        f.fsync()
    with pytest.raises(LogLostError, match=r"v1.vol page \d+: page LSN 0x1/0x[0-9a-f]+ lies past the end of the log"):
        open_again(disk)


def test_item2_an_empty_directory_is_no_page_store_and_can_be_formatted():
    disk = SimDisk("empty")
    with pytest.raises(VolumeError, match="no volume") as e:
        open_again(disk)
    assert not isinstance(e.value, CorruptionError)
    sm, fid, rids = records_sm(disk)
    assert sorted(open_again(disk).contents()[fid].values()) == [(b"", b"record %d" % i) for i in range(4)]


# -- item 3: volume pages carry a checksum ---------------------------------------------------------------
def test_item3_a_flipped_bit_in_a_record_is_an_error_naming_the_page():
    sm, fid, rids = records_sm()
    data = page_bytes(sm.disk, rids[1].page)
    at = bytes(data).index(b"record 1")
    data[at + 7] ^= 0x04  # "record 1" -> "record 5"
    put_page(sm.disk, rids[1].page, data)
    again = open_again(sm.disk)
    with pytest.raises(PageChecksumError, match=rf"v1.vol page {rids[1].page}: checksum mismatch"):
        with again.transaction() as t:
            again.read_rec(t, rids[1])
    with pytest.raises(PageChecksumError):
        again.contents()


def test_item3_a_zeroed_page_is_lost_not_an_empty_page():
    sm, fid, rids = records_sm()
    put_page(sm.disk, rids[0].page, bytes(PAGE))
    again = open_again(sm.disk)
    with pytest.raises(PageStoreCorruptionError, match=rf"p\(1.{fid.store}.{rids[0].page}\): a page of file .* "
                                                       r"holds zeros"):
        again.contents()
    with pytest.raises(PageStoreCorruptionError,
                       match=rf"v1.vol page {rids[0].page}: allocated to s\(1.{fid.store}\), it holds zeros"):
        verify_pagestore(sm.disk)


def test_item3_pages_never_written_are_not_damage():
    sm = new_sm()
    unused = PageId(1, 0, sm.volume.header.num_pages - 1)
    page = sm.bp.fix(unused, SH)  # a hole of the formatted file: zeros, no checksum, valid
    try:
        assert page.never_written() and page.checksum == 0
    finally:
        sm.bp.unfix(page)
    sm.close()
    assert verify_pagestore(sm.disk).pages == sm.volume.header.store0_pages + 2  # and the roots of stores 1, 2


def test_item3_the_checksum_is_written_and_cleared_in_the_frame():
    sm, fid, rids = records_sm()
    on_disk = page_bytes(sm.disk, rids[0].page)
    assert struct.unpack_from("<I", on_disk, PAGE - 12)[0] != 0
    assert stamp_checksum(bytes(on_disk[:PAGE - 12]) + bytes(4) + bytes(on_disk[PAGE - 8:])) == bytes(on_disk)
    again = open_again(sm.disk)
    page = again.bp.fix(rids[0].pid, SH)
    try:
        assert page.checksum == 0 and bytes(page.buf[PAGE - 8:]) == bytes(on_disk[PAGE - 8:])
    finally:
        again.bp.unfix(page)


def test_item3_a_damaged_page_with_equal_lsns_is_repaired_by_restart_from_its_image():
    """An unlogged change (the extent map's advisory buckets) logs the page's image when it is unfixed; the page
    written, then damaged before its volume was fsynced: the LSN pair agrees, the checksum does not, and redo
    repairs the page from that image."""
    sm, fid, rids = records_sm(close=False)
    sm.bp.force_all()
    extmap = sm.volume.header.extmap_page(rids[0].page // 4)
    bucket = sm.volume.page_bucket(rids[0].pid)
    sm.volume.set_page_bucket(rids[0].pid, (bucket + 1) % 16)
    image = [e for e in sm.log.scan() if e.type_name == "page_image"][-1]
    assert image.values["page"] == extmap
    sm.bp.clean()
    write = max(e.index for e in sm.disk.events if e.kind == "write" and e.offset == extmap * PAGE)
    crashed = sm.disk.crash_image(write, CrashMode.everything())
    data = page_bytes(crashed, extmap)
    data[200] ^= 0xFF
    put_page(crashed, extmap, data)
    again = open_again(crashed)
    assert [(r.pid.page, r.image_lsn) for r in again.restart_report.redo.pages_repaired] == [(extmap, image.lsn)]
    assert "checksum mismatch" in again.restart_report.trace_text()
    assert again.volume.page_bucket(rids[0].pid) == (bucket + 1) % 16
    assert sorted(again.contents()[fid]) == rids
    assert again.check() == []


def test_item3_minidb_verify_names_a_bad_page(tmp_path, capsys):
    from minidb.cli import main

    path = tmp_path / "ps"
    disk = OSDisk(path, create=True)
    sm, fid, rids = records_sm(disk)
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "ok: page store v1.vol: 4 stores, 8 pages checked"
    data = page_bytes(disk, rids[2].page)
    data[bytes(data).index(b"record 2")] ^= 1
    put_page(disk, rids[2].page, data)
    before = files_of(disk)
    assert main(["verify", str(path)]) == 1
    out = capsys.readouterr().out.strip()
    assert out.startswith("problem: ") and f"v1.vol page {rids[2].page}: checksum mismatch" in out
    assert len(out.splitlines()) == 1
    assert files_of(disk) == before  # verify changed nothing
    disk.delete(file_name(1))
    assert main(["verify", str(path)]) == 1
    assert "the log is missing" in capsys.readouterr().out


# -- item 9: damaged maps, a volume cut short, a new page taken by a concurrent fix --------------------------
def damage_map(disk, number: int, change) -> None:
    """Change map page ``number`` on disk and give it a valid checksum (damage that passes the page check)."""
    data = page_bytes(disk, number)
    change(data)
    put_page(disk, number, stamp_checksum(data[:PAGE - 12] + bytes(4) + data[PAGE - 8:]))


def _no_slots(data: bytearray) -> None:
    struct.pack_into("<H", data, 30, 0)


def _next_out_of_range(data: bytearray) -> None:
    # extlink of extent 2 (store 2's): its slot-0 record starts at 48 + 4; next is 4 bytes into the extlink
    struct.pack_into("<I", data, 48 + 4 + 2 * 32 + 4, 9999)


@pytest.mark.parametrize("change, what", [(_no_slots, "no slot 0|slot 0"), (_next_out_of_range, "out of range")])
def test_item9_damaged_volume_maps_are_corruption_not_user_errors(change, what):
    sm, fid, rids = records_sm()
    damage_map(sm.disk, sm.volume.header.first_extmap_page, change)
    damaged = r"v1.vol page 1 \(p\(1.0.1\)\): damaged extent-map page: "
    with pytest.raises(VolumeCorruptionError, match=rf"{damaged}.*({what})") as e:
        again = open_again(sm.disk)
        again.contents()
        again.create_file(again.begin())
    assert not isinstance(e.value, UserError)


def test_item9_a_volume_file_cut_to_half_is_corruption_naming_the_page():
    sm, fid, rids = records_sm()
    half = sm.volume.header.num_pages // 2
    with sm.disk.open(VOL) as f:
        f.truncate(half * PAGE)
        f.fsync()
    with pytest.raises(VolumeCorruptionError, match=rf"v1.vol page {half}: the volume file is cut short .*"
                                                    rf"pages {half}..127 are missing"):
        open_again(sm.disk)


def test_item9_a_concurrent_fix_of_a_fresh_page_does_not_make_a_record_miss_it():
    """The scripted interleaving: as soon as the inserting thread lets go of its freshly allocated page,
    another thread fixes it (a reader, a cleaner); the record must still land on that page."""
    sm = new_sm(max_small_rec=300)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        sm.create_rec(t, fid, b"a" * 200)
        sm.create_rec(t, fid, b"b" * 200)  # the file's first page is now full
    fresh: list[PageId] = []
    held, release = threading.Event(), threading.Event()
    real_alloc, real_unfix = sm.volume.alloc_page, sm.bp.unfix

    def alloc_page(*args, **kw):
        pid = real_alloc(*args, **kw)
        fresh.append(pid)
        return pid

    def other_thread(pid):
        page = sm.bp.fix(pid, SH)
        held.set()
        release.wait(10)
        real_unfix(page)

    def unfix(page, dirty=False):
        real_unfix(page, dirty)
        if fresh and page.frame.pid == fresh[0] and not held.is_set() and threading.current_thread() is main:
            threading.Thread(target=other_thread, args=(fresh[0],)).start()
            assert held.wait(10)

    main = threading.current_thread()
    sm.volume.alloc_page, sm.bp.unfix = alloc_page, unfix
    try:
        with sm.transaction() as t:
            rid = sm.create_rec(t, fid, b"c" * 200)
    finally:
        release.set()
    assert held.is_set() and rid.pid == fresh[0]
    sm.volume.alloc_page, sm.bp.unfix = real_alloc, real_unfix
    assert sm.contents()[fid][rid] == (b"", b"c" * 200)


def test_item2_a_master_record_without_its_volume_is_corruption():
    sm, fid, rids = records_sm()
    sm.disk.delete(VOL)
    with pytest.raises(VolumeCorruptionError, match=r"v1.vol: the volume is missing, but its master"):
        open_again(sm.disk)


def test_item3_a_zeroed_map_page_not_in_the_dirty_page_table_is_refused_by_restart():
    """Damage to a page no crash can have torn (it was clean): the log after the redo LSN holds no image of it, so
    restart names it and changes nothing."""
    sm, fid, rids = records_sm()
    extmap = sm.volume.header.extmap_page(rids[0].page // 4)
    put_page(sm.disk, extmap, bytes(PAGE))
    before = files_of(sm.disk)
    with pytest.raises(PageStoreCorruptionError, match=rf"v1.vol page {extmap}: a map page reads as zeros.*"
                                                       rf"p\(1.0.{extmap}\) is not in the dirty page table"):
        open_again(sm.disk)
    assert files_of(sm.disk) == before
    with pytest.raises(PageStoreCorruptionError, match=rf"v1.vol page {extmap}: a map page reads as zeros"):
        VolumeFile(sm.disk, 1).read_page(extmap)  # anywhere but in redo: an error
