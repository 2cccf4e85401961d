"""Pictures of the VLSN index and notebook 12's control: plain data, fixed-size figures, a pure callback."""

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from minidb.io import SimDisk
from minidb.replication import ReplicatedEnvironment, VLSNIndex, VLSNIndexConfig
from minidb.replication.cases import worked_recovery_case
from minidb.viz.gallery import FIGURES
from minidb.viz.style import WIDTH
from minidb.viz.vlsn import draw_buckets, draw_index, draw_recovery_case, index_picture
from minidb.viz.vlsn_demo import (fill_demo, holes_example, one_file_mappings, bucket_example, tradeoff_log,
                                  tradeoff_point, truncation_demo, wait_demo)
from minidb.viz.vlsn_widgets import tradeoff_explorer


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


def test_fill_demo_closes_at_a_file_boundary_and_flushes_at_the_checkpoint():
    steps = fill_demo()
    first, boundary, full, txn, flushed = steps
    assert len(first.picture.buckets) == 1 and not first.picture.buckets[0].flushed
    a, b = boundary.picture.buckets
    assert a.closed and not b.closed and a.file_number < b.file_number
    same_file = [v for v in full.picture.buckets if v.file_number == full.picture.buckets[-1].file_number]
    assert len(same_file) == 2 and len([m for m in same_file[0].mappings if (m[0] - same_file[0].first) % 3 == 0]) == 4
    assert txn.picture.range.last_sync > txn.picture.range.last_txn_end > 0
    assert all(v.flushed for v in flushed.picture.buckets)
    assert any(line.startswith("step 6: VLSN index: flushed buckets") for line in flushed.lines)
    fig = draw_index(flushed.picture, title="t")
    assert tuple(fig.get_size_inches()) == (WIDTH, 3.8)
    bars = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    assert len(bars) == len(flushed.picture.buckets) and not any(p.get_hatch() for p in bars)


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
    lines = wait_demo()
    assert "VLSN 2 was not logged within 0.01 s" in lines[1]
    assert lines[2] == "a feeder thread waits on the latch for VLSN 2"
    assert lines[4].startswith("the feeder gets the log item from the latch: VLSN 2 at ")
    assert "nWaitLatchHits=1" in lines[-1] and "nWaitTimeouts=1" in lines[-1]


def test_truncation_demo():
    lines, picture = truncation_demo()
    assert sum("fewer than min_vlsn_index_size 1000" in line for line in lines) == 2
    assert sum(line.strip().startswith("truncate_head_for_file") and ": truncated the head" in line
               for line in lines) == 2
    assert picture.range.first == 17 and picture.range.last == 55
    assert all(view.flushed for view in picture.buckets)  # truncations are made durable at once
