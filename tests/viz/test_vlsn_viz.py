"""Pictures of the VLSN index and notebook 12's control: plain data, fixed-size figures, a pure callback."""

import pytest
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from minidb.io import SimDisk
from minidb.replication import ReplicatedEnvironment, VLSNIndex, VLSNIndexConfig
from minidb.replication.cases import worked_recovery_case
from minidb.viz.gallery import FIGURES
from minidb.viz.script import ScriptError
from minidb.viz.style import WIDTH
from minidb.viz.vlsn import BucketView, IndexPicture, draw_buckets, draw_index, draw_recovery_case, index_picture
from minidb.viz.vlsn_demo import (
    SCRIPT,
    bucket_example,
    holes_example,
    index_step,
    one_file_mappings,
    tradeoff_log,
    tradeoff_point,
    truncation_demo,
    wait_demo,
)
from minidb.viz.vlsn_widgets import index_explorer, tradeoff_explorer


def test_draw_buckets_has_a_box_per_vlsn_and_marks_the_lookup():
    buckets, truth = bucket_example()
    fig = draw_buckets(buckets, truth, lookup=11, title="example")
    assert isinstance(fig, Figure) and tuple(fig.get_size_inches()) == (WIDTH, 4.2)
    ax = fig.axes[0]
    boxes = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(boxes) == 7 + 1  # VLSNs 9..15, and the frame around the VLSN looked up
    texts = [t.get_text() for t in ax.texts]
    assert "get_lte_lsn(11): 9, scan forward" in texts and "get_gte_lsn(11): 13, scan backward" in texts
    assert texts.count("not kept") == 3  # 10, 11, 12


def test_holes_are_drawn_hatched():
    bucket = holes_example((9, 15, 11), stride=2)
    assert bucket.holes() == [13]
    fig = draw_buckets([bucket], one_file_mappings())
    hatched = [p for p in fig.axes[0].patches if isinstance(p, Rectangle) and p.get_hatch()]
    assert len(hatched) == 1
    assert holes_example((9, 15), stride=4).file_offsets == [100]  # the JE documentation: an offset array of size 1


def test_the_default_script_closes_at_a_file_boundary_and_flushes_at_the_checkpoint():
    created = index_step(0).picture.range.last  # the creation of 'accounts' is VLSN 1; the script's records follow
    assert created == 1 and "'accounts' created (VLSN 1)" in index_step(0).operation
    first, boundary, full, txn, matchpoint, flushed = (index_step(k) for k in range(1, len(SCRIPT) + 1))
    assert len(first.picture.buckets) == 1 and not first.picture.buckets[0].flushed
    assert first.picture.range.last == created + 5
    a, b = boundary.picture.buckets
    assert a.closed and not b.closed and a.file_number < b.file_number
    assert f"new bucket {created + 6}" in boundary.lines[0]  # the sixth record, in log file 2
    same_file = [v for v in full.picture.buckets if v.file_number == full.picture.buckets[-1].file_number]
    assert len(same_file) == 2 and len([m for m in same_file[0].mappings if (m[0] - same_file[0].first) % 3 == 0]) == 4
    assert f"new bucket {created + 18}" in full.lines[0]
    assert txn.picture.range.last_txn_end == txn.picture.range.last == created + 21
    assert matchpoint.picture.range.last_sync == created + 22 > matchpoint.picture.range.last_txn_end
    assert all(v.flushed for v in flushed.picture.buckets)
    assert any(line.startswith("step 6: VLSN index: flushed buckets") for line in flushed.lines)
    fig = draw_index(flushed.picture, title="t")
    assert tuple(fig.get_size_inches()) == (WIDTH, 3.8)
    bars = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    assert len(bars) == len(flushed.picture.buckets) and not any(p.get_hatch() for p in bars)


def test_an_edited_index_script():
    early = [("records", 5), ("records", 1), ("checkpoint",), ("records", 12), ("txn", 2), ("matchpoint",)]
    last = index_step(len(early), early)
    # the buckets the checkpoint flushed stay clean: it closed them, so later records start new buckets
    assert [v.flushed for v in last.picture.buckets] == [True, True, False, False]
    # stride 1 keeps every VLSN: the creation of 'accounts' and six records
    assert index_step(2, SCRIPT, stride=1, max_mappings=1000).picture.mappings == 1 + 6


@pytest.mark.parametrize("script, where", [
    ([("records", 5), ("txn", 0)], "step 2 ('txn', 0): count must be a whole number from 1 to 500"),
    ([("records", "5")], "step 1 ('records', '5'): count must be"),
    ([("flush",)], "step 1 .*unknown operation 'flush'"),
])
def test_a_bad_index_script_names_the_step(script, where):
    with pytest.raises(ScriptError, match=where.replace("(", r"\(").replace(")", r"\)")):
        index_step(len(script), script)
    with pytest.raises(ScriptError):
        index_explorer(script)


def test_the_index_legend_lists_only_what_is_drawn():
    def labels(picture):
        legends = draw_index(picture).legends
        return [t.get_text() for legend in legends for t in legend.get_texts()]

    assert labels(index_step(1).picture) == ["not flushed yet"]
    assert labels(index_step(6).picture) == ["flushed to _vlsn_index"]
    assert "ghost bucket" not in labels(truncation_demo()[1])
    ghost = BucketView(3, 17, 17, 3, (), (), True, True, True)
    with_ghost = IndexPicture(index_step(6).picture.range, (ghost,) + index_step(6).picture.buckets)
    assert labels(with_ghost) == ["flushed to _vlsn_index", "ghost bucket"]
    buckets, truth = bucket_example()
    drawn = [t.get_text() for t in draw_buckets(buckets, truth).legends[0].get_texts()]
    assert "hole (out-of-order put)" not in drawn and "not kept (scan the log)" in drawn
    holes = [t.get_text() for t in draw_buckets([holes_example((9, 15, 11))], one_file_mappings()).legends[0].get_texts()]
    assert "hole (out-of-order put)" in holes


def test_the_index_explorer_over_an_edited_script():
    explorer = index_explorer([("records", 3), ("checkpoint",)])
    assert explorer.controls["step"].max == 2 and all(v.flushed for v in explorer.result.picture.buckets)
    explorer.controls["step"].value = 1
    # the creation of 'accounts' (VLSN 1) and three records
    assert explorer.result.picture.range.last == 1 + 3 and not explorer.result.picture.buckets[0].flushed
    explorer.controls["stride"].value = 1
    assert explorer.result.picture.mappings == 1 + 3


def test_index_picture_reads_without_changing():
    env = ReplicatedEnvironment.open(SimDisk("picture"), index_config=VLSNIndexConfig(stride=2))
    db = env.database("t")
    for i in range(9):
        db.put(f"k{i}", "v")
    before = env.vlsn_index.dump()
    picture = index_picture(env.vlsn_index)
    assert env.vlsn_index.dump() == before
    assert picture.mappings == env.vlsn_index.mapping_count() and picture.range == env.range


def test_recovery_case_figure():
    case = worked_recovery_case()
    fig = draw_recovery_case(case)
    assert tuple(fig.get_size_inches()) == (WIDTH, 3.6)
    labels = " ".join(t.get_text() for t in fig.axes[1].texts)
    assert "VLSNs 1..78" in labels and "VLSNs 78..79" in labels and "VLSNs 1..79" in labels


def test_tradeoff_counts_what_the_scanner_reads():
    """The callback's entries-scanned count is exactly what a ForwardVLSNScanner reads in the real log."""
    log = tradeoff_log()
    point = tradeoff_point(7, 16)
    index = VLSNIndex(VLSNIndexConfig(stride=7, max_mappings=16, trace=False), log=log.log)
    for vlsn, lsn, type_name in log.mappings:
        index.put(vlsn, lsn, type_name)
    total = 0
    for vlsn, lsn, _ in log.mappings:
        scanner = index.forward_scanner()
        assert scanner.find(vlsn).lsn == lsn
        total += scanner.entries_scanned
    assert abs(total / len(log.mappings) - point.mean_scanned) < 1e-9
    assert point.mappings == index.mapping_count() and point.buckets == index.tracker.bucket_count


def test_the_tradeoff_explorer_callback():
    explorer = tradeoff_explorer()
    assert explorer.result.point.stride == 10 and explorer.result.point.max_mappings == 1000
    explorer.controls["stride"].value = 1
    every = explorer.result.point
    assert every.mappings == explorer.result.vlsns and every.mean_scanned == 1.0 and every.max_scanned == 1
    explorer.controls["stride"].value = 50
    sparse = explorer.result.point
    assert sparse.mappings < every.mappings / 10 and sparse.mean_scanned > 10
    explorer.controls["max_mappings"].value = 2
    small = explorer.result.point
    assert small.buckets > sparse.buckets and small.stored_bytes > sparse.stored_bytes
    assert "stride 50, max 2 offsets a bucket" in explorer.result.summary()
    curve = explorer.result.curve
    assert [c.mappings for c in curve] == sorted((c.mappings for c in curve), reverse=True)
    assert isinstance(explorer.result.figure, Figure)


def test_the_gallery_has_the_vlsn_figures():
    for name in ("vlsn_buckets.png", "vlsn_index.png", "vlsn_recovery.png", "vlsn_tradeoff.png"):
        assert isinstance(FIGURES[name](), Figure)


def test_wait_demo_tells_a_wait_woken_by_a_put():
    lines = wait_demo()  # the creation of 'accounts' is VLSN 1, alice=100 VLSN 2: the feeder waits for 3
    assert lines[0].startswith("the range ends at VLSN 2 ")
    assert "VLSN 3 was not logged within 0.01 s" in lines[1]
    assert lines[2] == "a feeder thread waits on the latch for VLSN 3"
    assert lines[4].startswith("the feeder gets the log item from the latch: VLSN 3 at ")
    assert lines[5].startswith("a later wait for VLSN 3 finds it in the log item cache: VLSN 3 at ")
    assert "nWaitLatchHits=1" in lines[-1] and "nWaitTimeouts=1" in lines[-1]


def test_truncation_demo():
    lines, picture = truncation_demo()
    assert sum("fewer than min_vlsn_index_size 1000" in line for line in lines) == 2
    assert sum(line.strip().startswith("truncate_head_for_file") and ": truncated the head" in line
               for line in lines) == 2
    # the creation of 'accounts' (VLSN 1) and 60 records: VLSNs 1..61; files 2 and 3 hold VLSNs 1..17, the
    # rollback cuts the last 5
    assert picture.range.first == 18 and picture.range.last == 56
    assert all(view.flushed for view in picture.buckets)  # truncations are made durable at once
