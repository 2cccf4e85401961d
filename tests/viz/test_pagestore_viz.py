"""Pictures and widgets of the page store: layouts, demo scripts, pure callbacks."""

import pytest

from minidb.viz.bufferpool_demo import SCRIPT as POOL_SCRIPT, STEPS as POOL_STEPS, pool_step
from minidb.viz.extents import draw_extent_map, extent_map_layout
from minidb.viz.page_demo import SCRIPT as PAGE_SCRIPT, page_step
from minidb.viz.pagestore_widgets import buffer_pool_explorer, page_explorer, volume_explorer
from minidb.viz.script import ScriptError
from minidb.viz.style import WIDTH
from minidb.viz.volume_demo import SCRIPT as VOLUME_SCRIPT, new_demo_volume, run_script, volume_step


# -- slotted pages ------------------------------------------------------------------------
@pytest.mark.parametrize("step", range(len(PAGE_SCRIPT) + 1))
def test_page_regions_cover_every_byte_once(step):
    layout = page_step(step).layout
    position = 0
    for region in sorted(layout.regions, key=lambda r: r.start):
        assert region.start == position and region.length > 0
        position += region.length
    assert position == layout.size == 512
    assert layout.nfree == layout.contiguous + layout.count("hole")


def test_the_page_script_outcomes():
    assert page_step(4).outcome == "committed" and page_step(4).layout.nfree == 310
    assert page_step(5).layout.slots[1][1] == "reserved" and page_step(5).layout.nrsvd == 60
    assert page_step(5).layout.count("hole") == 60
    assert page_step(6).outcome.startswith("refused: p(1.3.12): a record of 330 bytes needs 334 bytes, 310 are usable")
    assert page_step(7).outcome == "slot 3 at offset 178"
    assert page_step(9).outcome == "slot 1 at offset 228"  # the reservation of T2 is void: slot 1 reused
    assert page_step(10).layout.count("hole") == 90 and page_step(10).layout.contiguous == 236
    assert page_step(11).outcome.endswith("after coalescing the holes")
    assert page_step(11).layout.count("hole") == 0
    with pytest.raises(ValueError, match="step must be between 0 and 11"):
        page_step(12)


def test_a_reserved_slot_whose_bytes_its_transaction_used_does_not_claim_them():
    # T4 freed carol (slot 2, 30 B) and then used its own 30 reserved bytes for frank: the slot stays
    # reserved (a rollback of T4 puts carol back there) but nrsvd is 0, and the picture says so.
    last = page_step(11)
    assert last.layout.slots[2][1] == "reserved" and last.layout.nrsvd == 0
    text = "\n".join(t.get_text() for t in last.figure.texts)
    assert "2: reserved (was 30 B)" in text and "B reserved" not in text
    assert "nrsvd        0" in text


def test_an_edited_page_script_rolls_back_and_reuses_slots():
    aborted = page_step(len(PAGE_SCRIPT) + 1, PAGE_SCRIPT + [("abort", "T4")])
    assert aborted.outcome == "rolled back: frank removed from slot 4, carol back in slot 2, erin removed from slot 1"
    assert [slot for slot, _ in aborted.page.records()] == [0, 2, 3]
    assert aborted.page.read(2) == b"carol" + b"." * 25 and aborted.layout.nrsvd == 0
    aborted.page.check_space()
    t2_aborts = [("abort", "T2") if op == ("commit", "T2") else op for op in PAGE_SCRIPT]
    assert page_step(8, t2_aborts).outcome == "rolled back: dave removed from slot 3, bob back in slot 1"
    assert page_step(9, t2_aborts).outcome == "slot 3 at offset 288"  # erin takes dave's old slot


@pytest.mark.parametrize("script, message", [
    ([("insert", "T1", "a", 10), ("commit", "T9")], r"step 2 \('commit', 'T9'\): no transaction T9 has begun"),
    ([("insert", "T1", "a", 10), ("commit", "T1"), ("commit", "T1")], r"step 3 .*T1 has already committed"),
    ([("insert", "T2", "a", 10), ("insert", "T1", "b", 10)], r"step 2 .*T1 begins after T2"),
    ([("remove", "T1", 0)], r"step 1 \('remove', 'T1', 0\): slot 0 holds no record"),
    ([("insert", "T1", "a", 10), ("remove", "T1", "0")], r"step 2 .*slot '0' holds no record"),
    ([("insert", "t1", "a", 10)], r"step 1 .*a transaction is named 'T1'"),
    ([("insert", "T1", "alice", 3)], r"step 1 .*at least the name's length"),
    ([("insert", "T1", "alice")], r"step 1 .*insert takes txn, name, size"),
])
def test_a_bad_page_script_names_the_step(script, message):
    with pytest.raises(ScriptError, match=message):
        page_step(len(script), script)


# -- the extent map ---------------------------------------------------------------------------
def test_extent_map_layout_reads_the_volume():
    _, _, _, volume = new_demo_volume()
    st = volume.create_store()
    volume.alloc_page(st)
    layout = extent_map_layout(volume)
    assert len(layout.extents) == 16 and layout.ext_sz == 4
    assert layout.owned_by(3) == [3] and layout.extents[3].pmap == 1
    assert [c.free for c in layout.extents[:4]] == [False] * 4 and layout.extents[4].free
    assert [s[0] for s in layout.stores] == [1, 2, 3]
    fig = draw_extent_map(layout, highlight=(3,))
    assert tuple(fig.get_size_inches()) == (WIDTH, 0.15 + 0.25 * 2 + 0.6 + 0.95 * 2)  # six legend entries in two rows


def test_the_volume_script_steps():
    first = volume_step(1)
    assert first.result == "s(1.3)" and [line.split()[1] for line in first.entries] == \
        ["page_image", "store_operation", "page_image", "create_ext_list", "store_operation"]  # map pages were clean
    grow = volume_step(7)
    assert grow.result == "p(1.3.20)" and "create_ext_list" in grow.entries[0] and "exts=[5]" in grow.entries[0]
    assert volume_step(10).result == "p(1.3.21)" and volume_step(11).result == "p(1.3.13)"
    freed = volume_step(13)
    assert "free_ext_list" in freed.entries[-1] and freed.extent_map.extents[5].free
    removed = volume_step(16)
    assert removed.result == "4" and removed.extent_map.extents[4].free
    assert [s[0] for s in removed.extent_map.stores] == [1, 2, 3, 5]
    assert "x(1.4)" not in removed.extent_dump
    with pytest.raises(ValueError):
        volume_step(len(VOLUME_SCRIPT) + 1)


def test_an_edited_volume_script_changes_what_append_and_compact_take():
    compact = [("alloc", "s(1.3)", "compact") if k == 10 else op for k, op in enumerate(VOLUME_SCRIPT, 1)]
    assert volume_step(10, compact).result == "p(1.3.13)"  # the hole, not the page after the last
    assert volume_step(11, compact).result == "p(1.3.21)"
    _, _, _, volume = new_demo_volume()
    results = run_script(volume, VOLUME_SCRIPT[:7])
    assert [str(r) for r in results] == ["s(1.3)", "s(1.4)"] + [f"p(1.3.{n})" for n in (12, 13, 14, 15, 20)]


@pytest.mark.parametrize("script, message", [
    ([("alloc", "s(1.9)", "append")], r"step 1 \('alloc', 's\(1.9\)', 'append'\): s\(1.9\): no such store"),
    ([("create_store",), ("alloc", "s(1.3)", "sideways")], r"step 2 .*the mode is 'append' or 'compact'"),
    ([("create_store",), ("alloc", "s(1.3)", ["append"])], r"step 2 .*the mode is 'append' or 'compact'"),
    ([("free", "s(1.3)")], r"step 1 .*'s\(1.3\)' is a StoreId, not a PageId"),
    ([("free", "p(1.3.99)")], r"step 1 .*page 99 is outside the volume"),
    ([("create_store", "s(1.3)")], r"step 1 .*create_store takes no arguments"),
])
def test_a_bad_volume_script_names_the_step(script, message):
    with pytest.raises(ScriptError, match=message):
        volume_step(len(script), script)


# -- the buffer pool ----------------------------------------------------------------------------
def test_the_pool_script_chooses_victims_by_the_clock():
    assert pool_step(4).choice is None and [v.pin_count for v in pool_step(4).frames] == [0, 0, 0, 1]
    five = pool_step(5)
    assert (five.choice.victim, five.choice.passes, five.choice.cleared) == (0, 2, (0, 1, 2))
    assert five.description == "fix p(1.2.9) and unfix: victim frame 0 (clean) in pass 2"
    six = pool_step(6)
    assert (six.choice.victim, six.choice.passes) == (2, 1)


def test_pass_two_takes_the_first_unreferenced_frame_from_the_hand_even_if_dirty():
    before = pool_step(8)
    assert before.hand == 3 and not before.frames[0].dirty and before.frames[3].dirty  # clean frame 0, dirty 3
    nine = pool_step(9)
    assert (nine.choice.victim, nine.choice.passes, nine.choice.cleared) == (3, 2, (3, 0, 2))
    assert nine.description == "fix p(1.2.10) and unfix: victim frame 3 (dirty) in pass 2"
    assert nine.frames[3].pid.page == 10 and nine.frames[0].pid.page == 9


def test_the_pool_script_shows_the_write_ahead_rule_and_the_cleaner():
    nine = pool_step(9)
    assert nine.events == ("write 00000001.jdb @0 +168", "fsync 00000001.jdb", "write v1.vol @3584 +512")
    assert any(line.startswith("WAL: log synced up to") for line in nine.trace)
    assert {pid.page for pid in nine.dirty_page_table} == {5, 6, 7}  # 7 is written, not yet fsynced
    ten = pool_step(POOL_STEPS)
    assert ten.events == ("write v1.vol @2560 +1024", "fsync v1.vol")
    assert ten.dirty_page_table == {}
    assert tuple(ten.figure.get_size_inches()) == (WIDTH, 5.6)


def test_an_edited_pool_script_changes_the_victim_and_the_disk_writes():
    script = list(POOL_SCRIPT)
    script[7] = ("fix", "p(1.1.7)")  # step 8 reads p(1.1.7) instead of updating it: frame 3 stays clean
    nine = pool_step(9, script)
    assert (nine.choice.victim, nine.choice.passes) == (3, 2)
    assert nine.events == () and {pid.page for pid in nine.dirty_page_table} == {5, 6}
    assert nine.description.endswith("victim frame 3 (clean) in pass 2")


@pytest.mark.parametrize("script, message", [
    ([("fix", "1.1.4")], r"step 1 \('fix', '1.1.4'\): bad id '1.1.4'"),
    ([("fix", "p(1.1.4)"), ("fix", "p(1.1.99)")], r"step 2 .*not a page of the demo's volume"),
    ([("unfix", "p(1.1.4)")], r"step 1 .*is not held"),
    ([("hold", "p(1.1.4)"), ("update", "p(1.1.4)", "x")], r"step 2 .*held already: unfix it first"),
    ([("update", "p(1.1.4)", 3)], r"step 1 .*the text must be a string"),
    ([("fix", "p(1.1.4)"), ("evict", "p(1.1.4)")], r"step 2 .*unknown operation 'evict'"),
    ([("hold", f"p(1.1.{n})") for n in range(1, 5)] + [("fix", "p(1.1.5)")], r"step 5 .*pinned"),
])
def test_a_bad_pool_script_names_the_step(script, message):
    with pytest.raises(ScriptError, match=message):
        pool_step(len(script), script)


# -- widgets --------------------------------------------------------------------------------------
def test_page_explorer_drives_the_callback():
    explorer = page_explorer()
    assert explorer.result.step == len(PAGE_SCRIPT) == explorer.controls["step"].max
    explorer.controls["step"].value = 5
    assert explorer.result.layout.nrsvd == 60
    edited = page_explorer(PAGE_SCRIPT + [("abort", "T4")])
    assert edited.controls["step"].max == len(PAGE_SCRIPT) + 1
    assert edited.result.outcome.startswith("rolled back") and edited.result.page.is_in_use(2)


def test_volume_explorer_drives_the_callback():
    explorer = volume_explorer()
    assert explorer.result.step == 1 and explorer.controls["step"].max == len(VOLUME_SCRIPT)
    explorer.controls["step"].value = 7
    assert explorer.result.result == "p(1.3.20)"
    explorer.controls["step"].value = 0
    assert explorer.result.entries == ()
    edited = volume_explorer([("create_store",), ("alloc", "s(1.3)", "compact")])
    edited.controls["step"].value = 2
    assert edited.result.result == "p(1.3.12)"


def test_buffer_pool_explorer_drives_the_callback():
    explorer = buffer_pool_explorer()
    explorer.controls["step"].value = 5
    assert explorer.result.choice.victim == 0
    explorer.controls["step"].value = 0
    assert all(v.pid is None for v in explorer.result.frames)


def test_buffer_pool_explorer_runs_an_edited_script():
    script = [("hold", "p(1.1.4)"), ("fix", "p(1.1.5)"), ("fix", "p(1.1.6)"), ("fix", "p(1.1.7)"), ("fix", "p(1.2.8)")]
    explorer = buffer_pool_explorer(script)
    assert explorer.controls["step"].max == len(script) and explorer.result.step == len(script)
    assert explorer.result.choice.victim == 1  # frame 0 is pinned
    explorer.controls["step"].value = 2
    assert [v.pid.page if v.pid else None for v in explorer.result.frames] == [4, 5, None, None]
    with pytest.raises(ScriptError, match="step 1"):
        buffer_pool_explorer([("fix",)])


@pytest.mark.parametrize("step", range(1, len(VOLUME_SCRIPT) + 1))
def test_extent_links_run_around_the_blocks(step):
    from tests.viz.helpers import arrows_through_boxes

    assert arrows_through_boxes(volume_step(step).figure) == []


def test_an_extent_link_to_another_row_runs_around_the_blocks_too():
    from minidb.viz.extents import ExtentCell, ExtentMap

    from tests.viz.helpers import arrows_through_boxes

    # Store 3's list: x(1.2) -> x(1.13) -> x(1.5), across the rows and back.
    nexts = {2: 13, 13: 5}
    cells = tuple(ExtentCell(ext, 3 if ext in (2, 5, 13) else 0, 0b1111, nexts.get(ext, 0), ext not in (0, 1, 2, 5, 13))
                  for ext in range(16))
    fig = draw_extent_map(ExtentMap(1, 4, cells, ((3, 2, "NOT_DELETING"),)), per_row=8)
    assert arrows_through_boxes(fig) == []
