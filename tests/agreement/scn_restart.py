"""Page-store restart: the accelerated restart (``minidb/fast/pagestore/restart/``) against the reference.

A seeded transaction workload (inserts, same-length updates, truncations,
removals, large records, B+tree inserts and removes, aborted transactions,
a checkpoint in the middle, losers in flight) on a small buffer pool, so
that redo's fixes evict and write pages. Its disk is crashed at several
seeded points (what was not fsynced lost, kept or torn), and each crash
image is restarted, without a trace (the twins' own paths) and, once, with
one. What must be equal: the disk after restart (volume, log and master
file byte for byte, and every write and fsync in order: the crash points),
restart's report (tables, decisions, counts, repaired pages, trace), the
records read back and the consistency check (B+trees included).

The workload itself always runs on the reference, whatever the choice
under test: the forward path's twins skip page fixes (a file's descriptor
read once, an allocation remembered), so on a pool this small they change
which pages are evicted when, and so the crash points. They have their own
scenario (``scn_forward``); here the same crash images go to every restart.
"""

from __future__ import annotations

import random

from minidb import impl
from minidb.io import CrashMode, SimDisk
from minidb.pagestore import StorageManager

from tests.agreement.scenarios import disk_state, scenario
from tests.pagestore.sm_helpers import OPTIONS

SPOTS = ("pagestore.restart.restart.Restart", "pagestore.restart.analysis.analysis_pass",
         "pagestore.restart.redo.redo_pass", "pagestore.restart.master.check_volume_and_log")
FRAMES = 8


def workload(seed: int) -> SimDisk:
    """The seeded workload, run on the reference; returns its disk, not crashed (the history of every write
    and fsync)."""
    with impl.using(impl.ENGINE):
        return _workload(seed)


def _workload(seed: int) -> SimDisk:
    rng = random.Random(seed)
    sm = StorageManager.format(SimDisk(f"restart-{seed}"), num_pages=256, ext_sz=4, page_size=512, frames=FRAMES,
                               **OPTIONS)
    with sm.transaction() as t:
        fids = [sm.create_file(t), sm.create_file(t)]
        index = sm.create_index(t, "i4")
    rids: list = []
    keys: list[int] = []
    for i in range(36):
        t, before, keys_before = sm.begin(), list(rids), list(keys)
        for _ in range(rng.randrange(1, 6)):
            pick = rng.random()
            if not rids or pick < 0.35:
                size = 700 if rng.random() < 0.08 else rng.randrange(3, 60)  # now and then a large record
                rids.append(sm.create_rec(t, rng.choice(fids), bytes([97 + i % 26]) * size))
            elif pick < 0.55:
                sm.update_rec(t, rng.choice(rids), 0, bytes([65 + i % 26]) * rng.randrange(1, 3))
            elif pick < 0.68:
                sm.truncate_rec(t, rng.choice(rids), 1)
            elif pick < 0.75:
                sm.free_rec(t, rids.pop(rng.randrange(len(rids))))
            elif pick < 0.92 or not keys:
                key = rng.randrange(10_000)
                if key not in keys:
                    sm.index_insert(t, index, key, b"e%d" % key)
                    keys.append(key)
            else:
                sm.index_remove(t, index, keys.pop(rng.randrange(len(keys))))
        if rng.random() < 0.15:
            sm.abort(t)
            rids, keys = before, keys_before
        else:
            sm.commit(t, durable=rng.random() < 0.3)
        if i == 14:
            sm.checkpoint()
    for _ in range(2):  # losers in flight at the crash
        loser = sm.begin()
        sm.create_rec(loser, fids[0], b"in flight")
        if rids:
            sm.update_rec(loser, rng.choice(rids), 0, b"!")
    sm.log.sync()
    return sm.disk


def restarted(disk: SimDisk, trace: bool) -> dict:
    """Open ``disk`` (restart runs), read everything back, close; what restart did and what it left (or the
    error opening raised)."""
    try:
        sm = StorageManager.open(disk, frames=FRAMES, restart_trace=trace, **OPTIONS)
    except Exception as e:  # noqa: BLE001 - both must refuse the same image the same way
        return {"error": f"{type(e).__name__}: {e}", "disk": disk_state(disk)}
    report = sm.restart_report
    analysis, redo = report.analysis, report.redo
    answers = {
        "summary": report.summary(),
        "trace": report.trace_text(),
        "analysis": (analysis.start, analysis.end, analysis.entries_read, analysis.redo_lsn, analysis.youngest,
                     sorted(analysis.ended), [str(x) for _, x in sorted(analysis.xct_table.items())],
                     [str(d) for _, d in sorted(analysis.dirty_pages.items())]),
        "redo": (redo.entries_read, redo.redone, redo.skipped_not_dirty, redo.skipped_page_newer,
                 [str(r) for r in redo.pages_repaired], redo.decisions),
        "undo": report.undo.summary(),
        "contents": sm.contents(),
        "check": sm.check(),
    }
    sm.close()
    return {"answers": answers, "disk": disk_state(disk)}


@scenario(*SPOTS)
def crashed_and_restarted(seed: int) -> list:
    """The workload crashed at four seeded points (and at its end), each image restarted."""
    rng = random.Random(seed)
    disk = workload(seed)
    last = len(disk.events) - 1
    points = sorted(rng.sample(range(last // 3, last), 4)) + [last]
    modes = [CrashMode.nothing(), CrashMode.torn(seed=seed), CrashMode.random(seed), CrashMode.everything(),
             CrashMode.nothing()]
    results = []
    for point, mode in zip(points, modes, strict=True):
        results.append((point, str(mode), restarted(disk.crash_image(point, mode), trace=False)))
    results.append(("traced", restarted(disk.crash_image(last, CrashMode.nothing()), trace=True)))
    return results


@scenario("pagestore.restart.master.check_volume_and_log", "pagestore.restart.restart.Restart")
def log_cut_around_the_checkpoint(seed: int) -> list:
    """The workload's log cut (or zeroed) at seeded offsets of its last file, some before the master
    checkpoint's ``chkpt_end``: the same refusals, or the same restarts."""
    rng = random.Random(seed)
    crashed = workload(seed)
    crashed = crashed.crash_image(len(crashed.events) - 1, CrashMode.nothing())
    last = max(name for name in crashed.list() if name.endswith(".jdb"))
    size = crashed.size(last)
    results = []
    for cut in sorted(rng.sample(range(64, size), 4)):
        disk = crashed.clone(f"cut-{seed}-{cut}")
        with disk.open(last) as f:
            if rng.random() < 0.5:
                f.truncate(cut)
            else:
                f.write(cut, bytes(min(40, size - cut)))
            f.fsync()
        results.append((cut, restarted(disk, trace=False)))
    return results
