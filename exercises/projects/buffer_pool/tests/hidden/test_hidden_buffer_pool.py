"""Instructor tests of the buffer pool project (not in the student edition): more seeds, threads, scale."""

import threading
from random import Random

from minidb.crashtest import pagestore, volume
from minidb.log import TRACE
from minidb.pagestore import EX, SH


def test_threads_fixing_and_changing_pages_leave_every_frame_unpinned_and_every_change_on_its_page(kit):
    s = kit.new_volume(frames=4)
    for n in range(8, 20):
        kit.update(s, n, "start", virgin=True)
    start = threading.Barrier(3)
    counts: dict[int, int] = {}
    lock = threading.Lock()
    errors: list = []

    def worker(seed: int) -> None:
        rng = Random(seed)
        start.wait()
        try:
            for _ in range(60):
                n = rng.randrange(8, 20)
                if rng.random() < 0.5:
                    page = s.bp.fix(kit.pid(n), EX)
                    page.insert(b"t%d" % seed)
                    page.lsn = s.log.append(TRACE, {"message": f"thread {seed} page {n}"})
                    s.bp.unfix(page, dirty=True)
                    with lock:
                        counts[n] = counts.get(n, 0) + 1
                else:
                    s.bp.unfix(s.bp.fix(kit.pid(n), SH))
        except Exception as e:  # reported below, with the thread's seed
            errors.append((seed, e))

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert all(v.pin_count == 0 and v.latch == "NL" for v in s.bp.frame_views())
    s.bp.force_all()
    for n, changes in counts.items():
        page = s.bp.fix(kit.pid(n))
        assert len(page.records()) == 1 + changes, n
        s.bp.unfix(page)


def test_the_volume_crash_sweep_over_more_seeds(kit):
    for seed in range(6, 26):
        result = volume.crash_sweep(seed, ops=40)
        assert not result.violations, result.violations[:3]


def test_the_page_store_crash_sweep_over_more_seeds(kit):
    for seed in (3, 4, 16):
        result = pagestore.crash_sweep(seed, ops=16)
        assert not result.violations, result.violations[:3]
