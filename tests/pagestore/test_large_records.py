"""Large records: each shape (LARGE_0, LARGE_1, LARGE_2), every change of shape up and down, undone by
rollback and by restart, redone by restart; pages freed and reused; the limits; bad calls; damage found."""

import struct

import pytest

from minidb.io import CrashMode
from minidb.pagestore.buffer.latch import EX, SH
from minidb.pagestore.errors import (
    BadRequestError,
    OutOfLogSpaceError,
    PageStoreCorruptionError,
    RecordWontFitError,
    VolumeFullError,
)
from minidb.pagestore.ids import PageId, StoreId
from minidb.pagestore.pages.page import StoreFlags, stamp_checksum
from minidb.pagestore.pages.rectag import RecFlags, limits
from minidb.pagestore.verify import verify_pagestore

from tests.pagestore.sm_helpers import entries, new_sm, open_again, reopen
from tests.pagestore.test_store_properties import RECORD_ENTRIES

CS = 448  # the bytes of body a 512-byte data page holds
SMALL, L0, L1, L2 = RecFlags.SMALL, RecFlags.LARGE_0, RecFlags.LARGE_1, RecFlags.LARGE_2
# max_small_rec 8: one chunk fits the slot's body area; index pages list 4 pages: LARGE_2 holds 16 pages
OPTIONS = {"max_small_rec": 8, "index_fanout": 4}


def checked(sm) -> list[str]:
    """Problems of the volume's maps and of the large records."""
    return sm.check() + sm.files.check_large_records()


def body(n: int, seed: int = 0) -> bytes:
    return bytes((i * 7 + seed) % 251 for i in range(n))


class World:
    """A page store with one file, a record ``rid`` being followed and its expected body."""

    def __init__(self, **options):
        self.sm = new_sm(**{**OPTIONS, **options})
        with self.sm.transaction() as t:
            self.fid = self.sm.create_file(t)
        self.body = b""
        self.rid = None

    def do(self, op, *args, spacer: bool = False):
        """One committed step on the record (create, append, truncate), then an optional spacer page."""
        with self.sm.transaction() as t:
            if op == "create":
                self.rid = self.sm.create_rec(t, self.fid, args[0], b"hd")
                self.body = args[0]
            elif op == "append":
                self.sm.append_rec(t, self.rid, args[0])
                self.body += args[0]
            else:
                self.sm.truncate_rec(t, self.rid, args[0])
                self.body = self.body[:len(self.body) - args[0]]
            if spacer:  # another record's page: this record's next page is not contiguous
                self.sm.create_rec(t, self.fid, body(CS, seed=9))
        return self

    def flags(self):
        return self.sm.files.large_layout(self.rid).flags

    def slot(self):
        page = self.sm.bp.fix(self.rid.pid, SH)
        try:
            return page.read(self.rid.slot)
        finally:
            self.sm.bp.unfix(page)

    def state(self):
        """Everything that says how the record is stored: its slot bytes and its layout."""
        return self.slot(), self.sm.files.large_layout(self.rid)

    def read(self):
        with self.sm.transaction() as t:
            return self.sm.read_rec(t, self.rid)


def build(shape: str) -> World:
    """A record of the given shape, committed ("fragmented": its pages are not one run)."""
    w = World()
    if shape == "small":
        return w.do("create", body(5))
    if shape == "large_0":
        return w.do("create", body(2 * CS), spacer=True)
    w.do("create", body(CS), spacer=True).do("append", body(CS, 1), spacer=True)  # two runs: LARGE_1
    if shape == "large_2":
        w.do("append", body(3 * CS, 2))  # five pages
    if shape == "large_2_one_extent":
        w = World().do("create", body(5 * CS))
    return w


# from shape, operation, amount, to shape
TRANSITIONS = [
    ("small", "append", 2 * CS, L0),
    ("small", "append", 8 * CS, L2),
    ("large_0", "append", CS, L1),  # a third page after the spacer: two runs
    ("large_1", "append", 3 * CS, L2),
    ("large_2", "truncate", CS, L1),  # four pages in three runs
    ("large_1", "truncate", CS, L0),  # one page
    ("large_2_one_extent", "truncate", 3 * CS, L0),  # two pages, one run
    ("large_0", "truncate", 2 * CS - 5, SMALL),
    ("large_1", "truncate", 2 * CS - 3, SMALL),
    ("large_2", "truncate", 5 * CS - 1, SMALL),
]
IDS = [f"{a}-{op}-{n}-{to.name}" for a, op, n, to in TRANSITIONS]


def apply(w: World, t, op: str, amount: int) -> bytes:
    if op == "append":
        data = body(amount, seed=5)
        w.sm.append_rec(t, w.rid, data)
        return w.body + data
    w.sm.truncate_rec(t, w.rid, amount)
    return w.body[:len(w.body) - amount]


@pytest.mark.parametrize("start,op,amount,to", TRANSITIONS, ids=IDS)
def test_each_transition_gives_the_new_shape_and_exact_bytes(start, op, amount, to):
    w = build(start)
    before = w.flags()
    with w.sm.transaction() as t:
        expected = apply(w, t, op, amount)
        assert w.sm.files.large_layout(w.rid).flags == to != before
        assert w.sm.read_rec(t, w.rid).body == expected
        assert checked(w.sm) == []
    rec = w.read()
    assert (rec.hdr, rec.body, rec.flags) == (b"hd", expected, to)
    assert [b for _, b in w.sm.contents()[w.fid].values()].count(expected) == 1


def in_flight(start: str, op: str, amount: int, to: RecFlags):
    """A record of shape ``start``, its state, and a transaction that has just changed it to ``to``."""
    w = build(start)
    old = w.state()
    t = w.sm.begin()
    apply(w, t, op, amount)
    assert w.flags() == to
    return w, old, t


@pytest.mark.parametrize("start,op,amount,to", TRANSITIONS, ids=IDS)
def test_a_rollback_of_each_transition_restores_the_old_shape_exactly(start, op, amount, to):
    w, old, t = in_flight(start, op, amount, to)
    w.sm.abort(t)
    assert w.state() == old and w.read().body == w.body
    assert checked(w.sm) == []


@pytest.mark.parametrize("start,op,amount,to", TRANSITIONS, ids=IDS)
def test_restart_undoes_each_transition_in_flight_and_redoes_it_committed(start, op, amount, to):
    w, old, _ = in_flight(start, op, amount, to)
    w.sm.log.sync()  # the transition's entries are durable, its commit is not: restart undoes them
    w.sm.disk.crash(CrashMode.nothing())
    w.sm = open_again(w.sm.disk, **OPTIONS)
    assert w.state() == old and w.read().body == w.body and checked(w.sm) == []
    with w.sm.transaction() as t:
        expected = apply(w, t, op, amount)
    new = w.state()
    w.sm.disk.crash(CrashMode.nothing())  # committed, its pages never written: redo rebuilds them
    w.sm = open_again(w.sm.disk, **OPTIONS)
    assert w.state() == new and w.flags() == to
    assert w.read().body == expected and checked(w.sm) == []


def test_each_shape_reads_back_its_bytes_and_lists_its_pages():
    w = build("large_2")
    layout = w.sm.files.large_layout(w.rid)
    assert layout.flags == L2 and len(layout.pages) == 5
    assert len(layout.leaves) == 2 and layout.root is not None  # 4 + 1 data pages under a root
    assert w.read().body == w.body
    with w.sm.transaction() as t:
        w.sm.update_rec(t, w.rid, CS * 4 - 3, b"across")  # the last two data pages
    assert w.read().body == w.body[:CS * 4 - 3] + b"across" + w.body[CS * 4 + 3:]
    one = build("large_1")
    index = one.sm.files.large_layout(one.rid)
    assert len(index.leaves) == 1 and index.root is None
    assert one.slot()[10:] == struct.pack("<I", index.leaves[0])
    zero = build("large_0")
    assert zero.slot()[10:] == struct.pack("<II", zero.sm.files.large_layout(zero.rid).pages[0], 2)


def test_growing_large_1_keeps_its_index_page_as_the_first_leaf_and_shrinking_gives_it_back():
    w = build("large_1")
    index = w.sm.files.large_layout(w.rid).leaves[0]
    w.do("append", body(3 * CS))
    layout = w.sm.files.large_layout(w.rid)
    assert layout.flags == L2 and layout.leaves[0] == index
    w.do("truncate", CS)
    assert w.sm.files.large_layout(w.rid).leaves == [index]
    assert w.sm.files.large_layout(w.rid).root is None


def test_a_large_0_chunk_is_a_run_of_pages_of_one_extent():
    w = World(max_small_rec=128).do("create", body(6 * CS))  # ext_sz 4: two chunks
    layout = w.sm.files.large_layout(w.rid)
    first = layout.pages[0]
    assert layout.flags == L0 and layout.pages == list(range(first, first + 6))
    assert w.slot()[10:] == struct.pack("<IIII", first, 4 - first % 4, first + 4 - first % 4, 2 + first % 4)


def test_pages_freed_on_shrink_go_at_commit_and_are_reused():
    w = build("large_2")
    large = w.sm.files._large_store(w.rid)
    pages = {p.page for p in w.sm.volume.store_pages(large)}
    held = w.sm.files.large_layout(w.rid)
    mine = set(held.pages + held.index_pages)
    w.do("truncate", len(w.body) - 3)  # small: every page of the record freed
    assert w.flags() == SMALL
    left = {p.page for p in w.sm.volume.store_pages(large)}
    assert left == pages - mine
    w.do("append", body(5 * CS))  # large again: takes freed pages
    again = w.sm.files.large_layout(w.rid)
    assert set(again.pages + again.index_pages) & mine
    assert w.read().body == w.body and checked(w.sm) == []


def test_a_page_freed_by_an_active_transaction_is_not_reused_before_it_ends():
    w = build("large_0")
    t = w.sm.begin()
    freed = w.sm.files.large_layout(w.rid).pages
    w.sm.truncate_rec(t, w.rid, len(w.body) - 1)
    w.sm.append_rec(t, w.rid, body(2 * CS))
    assert not set(w.sm.files.large_layout(w.rid).pages) & set(freed)
    w.sm.abort(t)
    assert w.sm.files.large_layout(w.rid).pages == freed


@pytest.mark.parametrize("size,flags", [(8, SMALL), (9, L0), (CS, L0), (4 * CS, L0)])
def test_boundaries_of_small_and_a_full_chunk(size, flags):
    w = World().do("create", body(size))
    assert w.flags() == flags and w.read().body == w.body
    assert len(w.sm.files.large_layout(w.rid).pages) == (0 if flags == SMALL else -(-size // CS))


def test_boundaries_of_a_full_index_page_and_a_full_two_level_index():
    w = build("large_1")  # two pages, two runs
    w.do("append", body(2 * CS))  # four pages: exactly a full index page
    assert w.flags() == L1 and len(w.sm.files.large_layout(w.rid).pages) == 4
    w.do("append", b"x")  # one byte more: a fifth page, two levels
    assert w.flags() == L2
    w.do("append", body(16 * CS - len(w.body)))  # exactly 4 x 4 data pages
    assert w.flags() == L2 and len(w.sm.files.large_layout(w.rid).leaves) == 4
    end = w.sm.log.last_lsn
    with pytest.raises(RecordWontFitError, match=r"needs 17 data pages, more than a two-level index lists "
                                                 r"\(4 x 4 = 16\)"):
        with w.sm.transaction() as t:
            w.sm.append_rec(t, w.rid, b"y")
    assert w.read().body == w.body and checked(w.sm) == []
    assert [e.type_name for e in w.sm.log.scan(end)][1:] in ([], ["xct_end"])


def test_the_limits_of_the_worked_example():
    assert limits(512, 128, 8) == {"small": 128, "chunks": 16, "fanout": 112, "large_0": 57_344,
                                   "large_0_scattered": 7_168, "large_1": 50_176, "large_2": 5_619_712}


def test_bad_calls_get_clear_errors_and_change_nothing():
    w = build("large_1")
    end = w.sm.log.last_lsn
    t = w.sm.begin()
    with pytest.raises(BadRequestError, match=rf"cannot cut {len(w.body) + 1} bytes off a {len(w.body)}-byte body"):
        w.sm.truncate_rec(t, w.rid, len(w.body) + 1)
    with pytest.raises(BadRequestError, match="cannot cut -1 bytes"):
        w.sm.truncate_rec(t, w.rid, -1)
    with pytest.raises(BadRequestError, match="the data must be bytes, not str"):
        w.sm.append_rec(t, w.rid, "text")
    with pytest.raises(BadRequestError, match=rf"cannot write 2 bytes at {len(w.body) - 1}"):
        w.sm.update_rec(t, w.rid, len(w.body) - 1, b"ab")
    assert w.sm.log.last_lsn == end
    w.sm.commit(t)
    with pytest.raises(BadRequestError, match="index_fanout 1: an index page of 512-byte pages lists 2 to 112"):
        new_sm(index_fanout=1)


def test_a_full_volume_while_growing_rolls_the_append_back():
    w = World(index_fanout=112)
    w.do("create", body(CS))
    before = w.state()
    with pytest.raises(VolumeFullError, match="is full"):
        with w.sm.transaction() as t:
            w.sm.append_rec(t, w.rid, body(120 * CS))  # more pages than the 128-page volume has free
    assert w.state() == before and checked(w.sm) == []


def put_page(disk, number: int, data: bytes) -> None:
    with disk.open("v1.vol") as f:
        f.write(number * 512, stamp_checksum(bytes(data[:500]) + bytes(4) + bytes(data[504:])))
        f.fsync()


def test_damage_to_an_index_page_is_found_and_named():
    w = build("large_2")
    layout = w.sm.files.large_layout(w.rid)
    w.sm.close()
    disk = w.sm.disk
    with disk.open("v1.vol") as f:
        data = bytearray(f.read(layout.leaves[1] * 512, 512))
    at = bytes(data).index(struct.pack("<I", layout.pages[4]))
    struct.pack_into("<I", data, at, layout.pages[0])  # the second leaf lists the first data page again
    put_page(disk, layout.leaves[1], data)
    again = open_again(disk, **OPTIONS)
    problems = checked(again)
    large = f"p(1.{again.files._large_store(w.rid).store}"
    assert f"{w.rid}: {large}.{layout.pages[0]}) is referred to twice" in problems
    assert f"{large}.{layout.pages[4]}): a page of s(1.{again.files._large_store(w.rid).store}), the large records " \
           f"of {w.fid}, that no record refers to" in problems
    with pytest.raises(PageStoreCorruptionError, match=r"large records: .* is referred to twice"):
        verify_pagestore(disk)


def test_a_data_page_shorter_than_the_body_says_is_found():
    w = build("large_0")
    w.sm.close()
    again = open_again(w.sm.disk, **OPTIONS)
    page_number = again.files.large_layout(w.rid).pages[0]
    large = again.files._large_store(w.rid)
    page = again.bp.fix(PageId(1, large.store, page_number), EX)
    page.splice(0, CS - 1, 1, b"")  # a damaged page in the pool: one byte gone, nothing logged
    again.bp.unfix(page)
    assert checked(again) == [f"{w.rid}: data page p(1.{large.store}.{page_number}) holds {CS - 1} bytes, "
                             f"the body's length says {CS}"]


def test_a_large_record_gets_its_pages_a_list_of_extents_at_a_time():
    w = World(max_small_rec=128)  # 16 chunks fit; the large-record store has one extent of 4 reserved pages
    start = w.sm.log.last_lsn
    w.do("create", body(13 * CS))
    logged = [e.type_name for e in w.sm.log.scan(start)]
    grown = [e for e in w.sm.log.scan(start) if e.type_name == "create_ext_list"]
    assert len(grown) == 1 and len(grown[0].values["exts"]) == 3  # three new extents linked as one list
    assert logged.index("create_ext_list") < logged.index("alloc_pages_in_ext")
    assert logged.count("alloc_pages_in_ext") == 13
    pages = w.sm.files.large_layout(w.rid).pages
    assert w.flags() == L0 and len(pages) == 13 and pages == list(range(pages[0], pages[0] + 13))
    assert w.slot()[10:] == struct.pack("<8I", pages[0], 4, pages[4], 4, pages[8], 4, pages[12], 1)


# -- store properties and a bounded log ------------------------------------------------------------------
def large_pages(sm, fid) -> list:
    return sm.volume.store_pages(StoreId(fid.vol, sm.files.file_info(fid).large))


def page_flags(sm, pid):
    page = sm.bp.fix(pid, SH)
    try:
        return page.store_flags
    finally:
        sm.bp.unfix(page)


def logged_on(sm, store: int, count: int) -> list[str]:
    """The entry types logged after the ``count``-th entry that change a page of ``store``."""
    return [e.type_name for e in entries(sm)[count:] if e.values.get("store") == store]


def grow_through_the_shapes(sm, t, fid):
    """A record in ``fid`` grown from small to LARGE_2 (and one page cut back); its body."""
    rid = sm.create_rec(t, fid, body(5), b"hd")
    data = body(5)
    for n in (2 * CS, 3 * CS, 5 * CS):
        sm.append_rec(t, rid, body(n, seed=n))
        data += body(n, seed=n)
    sm.truncate_rec(t, rid, CS)
    return rid, data[:-CS]


def test_a_load_files_large_records_are_unlogged_and_an_abort_takes_the_whole_file_away():
    sm = new_sm(frames=8, **OPTIONS)
    with sm.transaction() as t:
        kept = sm.create_file(t)
    t = sm.begin()
    load = sm.create_file(t, "load")
    count = len(entries(sm))
    rid, data = grow_through_the_shapes(sm, t, load)
    assert sm.files.large_layout(rid).flags == L2 and sm.read_rec(t, rid).body == data
    pages = large_pages(sm, load)
    assert {page_flags(sm, pid) for pid in pages} == {StoreFlags.LOAD_FILE}  # formatted with the store's flags
    logged = logged_on(sm, sm.files.file_info(load).large, count)
    assert logged and not RECORD_ENTRIES & set(logged)  # pages allocated and formatted, their records unlogged
    sm.abort(t)
    assert sm.files.files() == [kept] and checked(sm) == []
    assert all(not sm.volume.is_allocated(pid) for pid in pages)


def test_a_committed_load_files_large_record_survives_a_crash():
    sm = new_sm(frames=8, **OPTIONS)
    with sm.transaction() as t:
        load = sm.create_file(t, "load")
        rid, data = grow_through_the_shapes(sm, t, load)
    sm = reopen(sm, max_small_rec=8, index_fanout=4)
    with sm.transaction() as t:
        assert sm.read_rec(t, rid).body == data
    made_regular = StoreFlags.REGULAR | StoreFlags.LOAD_FILE  # forced at commit, their images not logged yet
    assert {page_flags(sm, pid) for pid in large_pages(sm, load)} == {made_regular} and checked(sm) == []


def test_an_abort_keeps_a_tmp_files_large_records_as_they_were_grown_and_cut():
    sm = new_sm(frames=8, **OPTIONS)
    with sm.transaction() as t:
        tmp = sm.create_file(t, "tmp")
    t = sm.begin()
    count = len(entries(sm))
    rid, data = grow_through_the_shapes(sm, t, tmp)
    assert not RECORD_ENTRIES & set(logged_on(sm, sm.files.file_info(tmp).large, count))
    sm.abort(t)  # undoes nothing of a TMP file: its pages stay, the record as it was left
    assert {page_flags(sm, pid) for pid in large_pages(sm, tmp)} == {StoreFlags.TMP}
    with sm.transaction() as t:
        assert sm.read_rec(t, rid).body == data
    assert sm.files.large_layout(rid).flags == L2 and checked(sm) == []


def test_a_large_record_growing_on_a_bounded_log_is_refused_cleanly_and_aborts():
    sm = new_sm(log_size=4 * 4800, partitions=4, max_small_rec=8)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rid = sm.create_rec(t, fid, body(2 * CS), b"hd")
    t = sm.begin()
    grown = body(2 * CS)
    with pytest.raises(OutOfLogSpaceError, match=f"T{t.txn_id} cannot log"):
        for n in range(40):
            sm.append_rec(t, rid, body(CS, seed=n))
            grown += body(CS, seed=n)
    assert sm.read_rec(t, rid).body == grown and checked(sm) == []  # the refused append rolled back whole
    sm.abort(t)
    assert sm.contents() == {fid: {rid: (b"hd", body(2 * CS))}} and checked(sm) == []
    assert sm.log_space.total == 0
