"""The volume manager: format, stores, extents, page allocation, caches, errors, dumps."""

import random

import pytest

from minidb.errors import UserError
from minidb.io import SimDisk
from minidb.log import LogManager
from minidb.pagestore import (
    AllocMode,
    BadRequestError,
    BufferPool,
    Deleting,
    PageId,
    StoreFlags,
    StoreId,
    Volume,
    VolumeError,
    VolumeFullError,
    format_volume,
)
from minidb.pagestore.volume.volfile import STAMP_SLOTS_SIZE, volume_file_name

from tests.cli.test_cli import check_golden
from tests.pagestore.helpers import fixed_clock, mount, new_volume

APPEND, COMPACT = AllocMode.APPEND, AllocMode.COMPACT


def entry_names(setup, since):
    return [e.type_name for e in setup.log.scan() if e.lsn > since]


# -- formatting and mounting ------------------------------------------------------------
def test_format_lays_out_the_volume_as_the_header_says():
    s = new_volume()
    h = s.vol.header
    assert (h.num_pages, h.num_exts, h.ext_sz, h.page_size) == (64, 16, 4, 512)
    assert (h.extlinks_per_page, h.num_extmap_pages, h.first_stmap_page, h.stnodes_per_page) == (13, 2, 3, 55)
    assert (h.store0_pages, h.store0_exts, h.first_data_ext) == (4, 1, 1)
    assert s.vol.stores() == [StoreId(1, 1), StoreId(1, 2)]
    assert [s.vol.store_extents(st) for st in s.vol.stores()] == [[1], [2]]
    assert s.vol.extlink(0).pmap_text(4) == "####"
    assert s.disk.size(volume_file_name(1)) == 64 * 512 + STAMP_SLOTS_SIZE  # the pages, then the checkpoint stamp's slots
    assert s.vol.check() == []
    assert [e.type_name for e in s.log.scan()] == ["FileHeader"]  # formatting logs nothing


def test_mounting_reads_the_header_back():
    s = new_volume()
    again = s.reopen()
    assert again.vol.header == s.vol.header


@pytest.mark.parametrize("damage, message", [
    (lambda f: f.write(48, b"notavol!"), "not a minidb volume"),
    (lambda f: f.write(48 + 8, (7).to_bytes(4, "little")), "volume format version 7"),
    (lambda f: f.write(48 + 20, (99).to_bytes(4, "little")), "inconsistent volume header|impossible"),
    (lambda f: f.write(0, b"\x01"), "torn page"),
    (lambda f: f.truncate(100), "too short|cut short"),
])
def test_a_damaged_header_is_refused(damage, message):
    disk = SimDisk("d")
    format_volume(disk, num_pages=64, ext_sz=4, page_size=512)
    with disk.open(volume_file_name(1)) as f:
        damage(f)
    with pytest.raises(VolumeError, match=message):
        Volume(disk, BufferPool(4, 512), None)


def test_mount_errors_name_the_file():
    disk = SimDisk("d")
    with pytest.raises(VolumeError, match=r"sim:d/v1.vol: no volume v\(1\)"):
        Volume(disk, BufferPool(4, 512), None)
    format_volume(disk, num_pages=64, ext_sz=4, page_size=512)
    with pytest.raises(VolumeError, match="exists already"):
        format_volume(disk, num_pages=64, ext_sz=4, page_size=512)
    with pytest.raises(UserError, match="too small"):
        format_volume(disk, vid=2, num_pages=12, ext_sz=4, page_size=512)
    assert not disk.exists(volume_file_name(2))


# -- stores ---------------------------------------------------------------------------------
def test_create_store_logs_three_entries_and_owns_one_extent():
    s = new_volume()
    before = s.log.last_lsn
    st = s.vol.create_store()
    assert st == StoreId(1, 3)
    # the store map page and the extent map page were clean: each change is preceded by the page's image
    assert entry_names(s, before) == ["page_image", "store_operation", "page_image", "create_ext_list",
                                      "store_operation"]
    ops = [e.values["op"] for e in s.log.scan() if e.type_name == "store_operation"]
    assert ops == ["create_store", "set_first_ext"]
    assert s.vol.store_extents(st) == [3]
    node = s.vol.store_node(3)
    assert (node.first_ext, node.store_flags, node.deleting) == (3, StoreFlags.REGULAR, Deleting.NOT_DELETING)
    assert s.vol.create_store(StoreFlags.TMP) == StoreId(1, 4)
    assert s.vol.check() == []


def test_allocation_worked_example_of_the_module():
    s = new_volume()
    st = s.vol.create_store()
    pages = [s.vol.alloc_page(st, APPEND).page for _ in range(5)]
    assert pages == [12, 13, 14, 15, 16]
    assert s.vol.store_extents(st) == [3, 4]
    s.vol.free_page(PageId(1, 3, 16))
    assert s.vol.store_extents(st) == [3] and s.vol.extlink(4).owner == 0
    assert s.vol.check() == []


def test_append_goes_past_the_last_allocated_page_compact_fills_holes():
    s = new_volume()
    st = s.vol.create_store()
    for _ in range(6):
        s.vol.alloc_page(st, APPEND)  # 12..17: x(1.3) full, x(1.4) half
    s.vol.free_page(PageId(1, 3, 13))
    s.vol.free_page(PageId(1, 3, 17))
    assert s.vol.alloc_page(st, APPEND).page == 17  # after the last allocated page (16), not 13
    assert s.vol.alloc_page(st, COMPACT).page == 13  # the lowest reserved page
    assert s.vol.alloc_page(st, COMPACT).page == 18
    assert s.vol.alloc_page(st, APPEND).page == 19
    assert s.vol.alloc_page(st, APPEND).page == 20  # a new extent
    assert s.vol.store_extents(st) == [3, 4, 5]
    assert [p.page for p in s.vol.store_pages(st)] == list(range(12, 21))


def test_new_extents_link_at_the_tail_across_extent_map_pages():
    s = new_volume()
    stores = [s.vol.create_store() for _ in range(3)]  # x(1.3), x(1.4), x(1.5)
    first = stores[0]
    for _ in range(4 * 11):  # fill x(1.3) and 10 more extents: x(1.6) .. x(1.15) (page 2 from 14 on)
        s.vol.alloc_page(first, APPEND)
    assert s.vol.store_extents(first) == [3] + list(range(6, 16))
    names = [e.type_name for e in s.log.scan() if e.type_name in ("create_ext_list", "set_ext_next")]
    # x(1.14) is the first extent on the second extent-map page: its link to x(1.13) is a second entry
    assert names.count("set_ext_next") == 1
    assert s.vol.check() == []


def test_freeing_extents_in_the_middle_and_at_the_head_relinks_the_list():
    s = new_volume()
    st = s.vol.create_store()
    pages = [s.vol.alloc_page(st, APPEND) for _ in range(4 * 13)]  # all 13 free extents: 3..15
    assert s.vol.store_extents(st) == list(range(3, 16))
    with pytest.raises(VolumeFullError, match="is full"):
        s.vol.alloc_page(st, APPEND)
    for pid in pages[4 * 10:4 * 12]:  # x(1.13) and x(1.14): across the extent-map page boundary
        s.vol.free_page(pid)
    for pid in pages[:4]:  # the head, x(1.3)
        s.vol.free_page(pid)
    assert s.vol.store_extents(st) == list(range(4, 13)) + [15]
    assert s.vol.store_node(3).first_ext == 4
    assert {s.vol.extlink(e).owner for e in (3, 13, 14)} == {0}
    assert s.vol.check() == []
    assert s.vol.stats["nExtentsFreed"] == 3


def test_the_last_extent_of_a_store_is_kept():
    s = new_volume()
    st = s.vol.create_store()
    pid = s.vol.alloc_page(st)
    s.vol.free_page(pid)
    assert s.vol.store_extents(st) == [3] and s.vol.extlink(3).pmap == 0
    with pytest.raises(BadRequestError, match="only extent"):
        s.vol.free_extent(st, 3)


def test_a_freed_extent_can_be_deferred_and_freed_later():
    s = new_volume()
    st = s.vol.create_store()
    pages = [s.vol.alloc_page(st, APPEND) for _ in range(5)]
    s.vol.free_page(pages[4], free_empty_extent=False)  # as a transaction does until it commits
    assert s.vol.store_extents(st) == [3, 4]
    assert s.vol.free_extent_if_empty(st, 4)
    assert not s.vol.free_extent_if_empty(st, 3)  # has allocated pages
    assert s.vol.store_extents(st) == [3]


def test_destroying_a_store_returns_all_its_extents():
    s = new_volume()
    keep, gone = s.vol.create_store(), s.vol.create_store()
    for i in range(12):
        s.vol.alloc_page(keep if i % 3 == 0 else gone, APPEND)
    exts = s.vol.store_extents(gone)
    assert len(exts) == 2
    before = s.log.last_lsn
    s.vol.destroy_store(gone)
    assert s.vol.store_node(gone.store).deleting == Deleting.DELETING
    with pytest.raises(BadRequestError, match="being deleted"):
        s.vol.alloc_page(gone)
    assert sorted(s.vol.remove_store(gone)) == sorted(exts)
    assert entry_names(s, before) == ["store_operation", "store_operation", "free_ext_list", "store_operation"]
    assert all(s.vol.extlink(e).owner == 0 and s.vol.extlink(e).pmap == 0 for e in exts)
    assert gone not in s.vol.stores() and keep in s.vol.stores()
    assert s.vol.check() == []
    new = s.vol.create_store()  # the search for a store number revolves: it starts after 4
    assert new == StoreId(1, 5)
    assert s.vol.store_extents(new) == [min(exts)]  # the lowest free extent is found again


def test_store_destruction_errors():
    s = new_volume()
    st = s.vol.create_store()
    with pytest.raises(BadRequestError, match="reserved store"):
        s.vol.destroy_store(StoreId(1, 1))
    with pytest.raises(BadRequestError, match="not marked for deletion"):
        s.vol.remove_store(st)
    with pytest.raises(BadRequestError, match=r"s\(1.9\): no such store"):
        s.vol.destroy_store(StoreId(1, 9))


def test_drop_store_is_destroy_then_remove():
    s = new_volume()
    st = s.vol.create_store()
    assert s.vol.drop_store(st) == [3]
    assert s.vol.stats["nStoresMarked"] == s.vol.stats["nStoresRemoved"] == 1


# -- caches -----------------------------------------------------------------------------------
def random_workload(vol, rng, steps):
    """Seeded random allocations and frees; returns what allocation answered."""
    stores = [vol.create_store() for _ in range(3)]
    allocated = {st: [] for st in stores}
    answers = []
    for _ in range(steps):
        st = rng.choice(stores)
        if allocated[st] and rng.random() < 0.35:
            pid = allocated[st].pop(rng.randrange(len(allocated[st])))
            vol.free_page(pid)
        else:
            mode = rng.choice([APPEND, COMPACT])
            try:
                pid = vol.alloc_page(st, mode)
            except VolumeFullError:
                answers.append("full")
                continue
            allocated[st].append(pid)
            answers.append(str(pid))
    return stores, allocated, answers


@pytest.mark.parametrize("seed", range(4))
def test_caches_primed_after_reopen_give_the_same_answers_as_a_full_search(seed):
    warm = new_volume(num_pages=256, ext_sz=4)
    stores, allocated, _ = random_workload(warm.vol, random.Random(seed), 120)
    warm.log.sync()
    warm.bp.force_all()
    cold = mount(warm.disk.clone())  # reopened: the caches are empty
    search = mount(warm.disk.clone(), use_caches=False)  # never caches: always a full search
    rng = random.Random(1000 + seed)
    plan = [(rng.choice(stores), rng.choice([APPEND, COMPACT]), rng.random()) for _ in range(80)]
    results = []
    for setup in (warm, cold, search):
        held = {st: list(pages) for st, pages in allocated.items()}
        got = []
        for st, mode, roll in plan:
            if held[st] and roll < 0.3:
                setup.vol.free_page(held[st].pop(int(roll * 100) % len(held[st])))
                got.append("freed")
            else:
                pid = setup.vol.alloc_page(st, mode)
                held[st].append(pid)
                got.append(str(pid))
        assert setup.vol.check() == []
        results.append(got)
    assert results[0] == results[1] == results[2]
    assert cold.vol.stats["nReservedCacheMisses"] > 0 and cold.vol.stats["nLastPageCacheMisses"] > 0
    assert cold.vol.stats["nReservedCacheHits"] > 0 and cold.vol.stats["nLastPageCacheHits"] > 0
    assert search.vol.stats["nReservedCacheHits"] == 0


def test_cache_state_is_primed_lazily():
    s = new_volume()
    st = s.vol.create_store()
    for _ in range(6):
        s.vol.alloc_page(st, APPEND)
    again = s.reopen()
    assert again.vol.cache_state() == {"min_free_ext": 1, "reserved_page_cache": {}, "last_page_cache": {}}
    again.vol.alloc_page(st, COMPACT)
    assert again.vol.cache_state()["reserved_page_cache"] == {3: [4]}
    assert again.vol.stats["nReservedCacheMisses"] == 1
    again.vol.alloc_page(st, COMPACT)
    assert again.vol.stats["nReservedCacheHits"] == 1


# -- errors change nothing ----------------------------------------------------------------------
def test_errors_change_nothing():
    s = new_volume()
    a, b = s.vol.create_store(), s.vol.create_store()
    pa = s.vol.alloc_page(a)
    s.vol.alloc_page(b)
    before = s.snapshot()
    cases = [
        (lambda: s.vol.free_page(PageId(1, 3, pa.page + 1)), r"p\(1.3.13\) is not allocated"),
        (lambda: s.vol.free_page(PageId(1, 4, pa.page)), r"page 12 belongs to s\(1.3\), not to s\(1.4\)"),
        (lambda: s.vol.free_page(PageId(1, 3, 40)), r"belongs to no store \(the extent is free\)"),
        (lambda: s.vol.free_page(PageId(1, 3, 64)), "page 64 is outside the volume"),
        (lambda: s.vol.free_page(PageId(1, 9, 40)), r"s\(1.9\): no such store"),
        (lambda: s.vol.alloc_page(StoreId(1, 99)), "no such store"),
        (lambda: s.vol.alloc_page(StoreId(2, 3)), r"not on volume v\(1\)"),
        (lambda: s.vol.free_extent(a, 5), r"x\(1.5\) does not belong to s\(1.3\)"),
        (lambda: s.vol.free_extent(a, 3), "still has allocated pages"),
        (lambda: s.vol.create_store(StoreFlags(0)), "needs store flags"),
    ]
    for action, message in cases:
        with pytest.raises(BadRequestError, match=message):
            action()
        assert s.snapshot() == before, message
    # a full volume: take every free extent, then ask for one more
    while s.vol.extlink(15).owner == 0:
        s.vol.alloc_page(b, APPEND)
    for _ in range(3):
        s.vol.alloc_page(b, APPEND)  # x(1.15) full too
    full = s.snapshot()
    with pytest.raises(VolumeFullError, match=r"v\(1\) is full: 1 free extent\(s\) wanted, 0 left"):
        s.vol.alloc_page(b, APPEND)
    with pytest.raises(VolumeFullError, match="is full"):
        s.vol.create_store()
    assert s.snapshot() == full and s.vol.check() == []


def test_store_numbers_can_run_out_before_extents():
    s = new_volume()
    for _ in range(13):  # 16 store nodes: 0, 1, 2 and 13 more
        s.vol.create_store()
    before = s.snapshot()
    with pytest.raises(VolumeFullError, match="no unused store number is left"):
        s.vol.create_store()
    assert s.snapshot() == before


# -- unlogged advisory buckets ------------------------------------------------------------------
def test_page_buckets_are_kept_without_logging():
    s = new_volume()
    st = s.vol.create_store()
    pages = [s.vol.alloc_page(st, APPEND) for _ in range(3)]
    before = s.log.last_lsn
    s.vol.set_page_bucket(pages[1], 9)
    s.vol.set_page_bucket(pages[2], 3)
    assert s.log.last_lsn == before
    assert [s.vol.page_bucket(p) for p in pages] == [0, 9, 3]
    assert list(s.vol.pages_with_bucket(st, 3)) == pages[1:]
    assert PageId(1, 0, 1) in s.bp.dirty_page_table()
    with pytest.raises(BadRequestError, match="not an allocated page"):
        s.vol.set_page_bucket(PageId(1, 3, 15), 1)
    with pytest.raises(ValueError, match="bucket 16"):
        s.vol.set_page_bucket(pages[0], 16)
    # One read of the extlink answers both questions an insert asks: allocated to the store? its bucket?
    assert [s.vol.page_allocation(p) for p in pages] == [(True, 0), (True, 9), (True, 3)]
    assert s.vol.page_allocation(PageId(1, 3, 15)) == (False, 0)  # reserved in the extent, not allocated
    assert s.vol.page_allocation(PageId(1, 4, pages[1].page))[0] is False  # another store's number


# -- durability ---------------------------------------------------------------------------------
def test_a_clean_close_and_reopen_keeps_everything():
    s = new_volume(frames=4)
    stores, allocated, _ = random_workload(s.vol, random.Random(7), 80)
    dumps = (s.vol.dump_extents(), s.vol.dump_stores())
    again = s.reopen(frames=4)
    assert (again.vol.dump_extents(), again.vol.dump_stores()) == dumps


# -- golden text --------------------------------------------------------------------------------
def golden_volume():
    s = new_volume()
    a, b = s.vol.create_store(), s.vol.create_store(StoreFlags.TMP)
    for i in range(9):
        s.vol.alloc_page(a if i % 2 == 0 else b, APPEND)
    s.vol.free_page(PageId(1, 3, 13))
    s.vol.set_page_bucket(PageId(1, 3, 12), 5)
    c = s.vol.create_store()
    s.vol.alloc_page(c)
    s.vol.drop_store(c)
    return s


def test_extent_map_dump_golden():
    check_golden("pagestore_extent_map.txt", golden_volume().vol.dump_extents())


def test_store_dump_golden():
    check_golden("pagestore_stores.txt", golden_volume().vol.dump_stores())


def test_printlog_of_the_page_store_entries_golden(tmp_path, capsys):
    from minidb.cli import main
    from minidb.io import OSDisk

    disk = OSDisk(tmp_path / "db", create=True)
    log = LogManager(disk, clock=fixed_clock)
    bp = BufferPool(8, page_size=512, log=log)
    vol = Volume.format(disk, bp, log, num_pages=64, ext_sz=4)
    st = vol.create_store()
    for _ in range(5):
        vol.alloc_page(st, APPEND)
    vol.free_page(PageId(1, 3, 16))
    vol.drop_store(st)
    vol.close()
    log.close()
    assert main(["printlog", str(tmp_path / "db")]) == 0
    check_golden("printlog_pagestore.txt", capsys.readouterr().out)


def test_printlog_in_a_fresh_process_knows_the_page_store_entries(tmp_path):
    """minidb/cli/engines.py imports the page store's logdef, so a new process prints names, not codes."""
    import subprocess
    import sys

    from minidb.io import OSDisk

    disk = OSDisk(tmp_path / "db", create=True)
    log = LogManager(disk, clock=fixed_clock)
    vol = Volume.format(disk, BufferPool(8, page_size=512, log=log), log, num_pages=64, ext_sz=4)
    vol.alloc_page(vol.create_store())
    vol.close()
    log.close()
    done = subprocess.run([sys.executable, "-m", "minidb", "printlog", str(tmp_path / "db"), "-q",
                           "--type", "alloc_pages_in_ext"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count('type="alloc_pages_in_ext"') == 1 and "Unknown" not in done.stdout
