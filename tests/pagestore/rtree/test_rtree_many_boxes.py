"""2,000 random boxes: every search equals a brute-force scan, and a crash keeps every committed box."""

from random import Random

from minidb.pagestore import Box

from tests.pagestore.rtree.test_rtree_recovery import contents
from tests.pagestore.sm_helpers import new_sm, reopen

COUNT, WINDOWS, SIDE = 2000, 60, 1000


def random_box(rng: Random, most: int) -> Box:
    x, y = rng.randrange(SIDE), rng.randrange(SIDE)
    return Box(x, y, x + rng.randrange(1, most), y + rng.randrange(1, most))


def brute_force(boxes, window: Box, cond: str) -> list:
    keep = {
        "overlap": lambda b: b.xlo <= window.xhi and window.xlo <= b.xhi and b.ylo <= window.yhi and window.ylo <= b.yhi,
        "cover": lambda b: b.xlo <= window.xlo and b.ylo <= window.ylo and window.xhi <= b.xhi and window.yhi <= b.yhi,
        "inside": lambda b: window.xlo <= b.xlo and window.ylo <= b.ylo and b.xhi <= window.xhi and b.yhi <= window.yhi,
        "exact": lambda b: b == window,
    }[cond]
    return sorted((box, el) for box, el in boxes if keep(box))


def test_2000_random_boxes_search_as_a_scan_and_survive_a_crash():
    rng = Random(2000)
    sm = new_sm("many", num_pages=1024, frames=32)
    boxes = [(random_box(rng, 40), b"b%04d" % i) for i in range(COUNT)]
    with sm.transaction() as t:
        ix = sm.create_rtree(t)
    for start in range(0, COUNT, 250):  # eight committed transactions
        with sm.transaction() as t:
            for box, el in boxes[start:start + 250]:
                sm.rtree_insert(t, ix, box, el)
    with sm.transaction() as t:
        for window in [random_box(rng, 200) for _ in range(WINDOWS)] + [boxes[7][0]]:
            for cond in ("overlap", "cover", "inside", "exact"):
                assert sorted(sm.rtree_search(t, ix, window, cond)) == brute_force(boxes, window, cond), (window, cond)
    loser = sm.begin()  # its boxes reach the log but never commit
    for i in range(50):
        sm.rtree_insert(loser, ix, random_box(rng, 40), b"loser%d" % i)
    sm.log.flush()
    sm = reopen(sm, "crash")
    assert contents(sm, ix) == sorted(boxes)  # every committed box, no loser's
    t = sm.begin()
    for window in [random_box(rng, 200) for _ in range(WINDOWS)]:
        assert sorted(sm.rtree_search(t, ix, window, "overlap")) == brute_force(boxes, window, "overlap")
