"""Restart's shortcuts agree with the careful paths they stand for.

- redo fixes a page once per run of entries on it: the pages and the
  decisions are those of one fix per entry (the reference below);
- without a trace, redo applies the entries page by page, with the slotted
  page's shortcuts for plain inserts and same-length updates: the decisions,
  counts, pages and volume are those of the careful redo in log order, and a
  student's redo test (exercise 08c) still sees every entry;
- restart decodes each entry once (:func:`scanned_entry`): the values a
  :class:`LogEntry` decodes;
- opening checks that the log reaches past the master checkpoint without
  finding the log's end twice (:func:`reaches_past`): whenever it says yes,
  the careful :func:`find_end` finds the log ending after it (or raises);
- analysis and redo run with the cyclic garbage collector paused, and leave
  it as they found it; opening keeps it paused from the log's opening scan to
  the end of restart.

Seeded: the same workloads and damage on every run.
"""

import gc
import random
from pathlib import Path

import pytest

from minidb import impl
from minidb.errors import LogCorruptionError
from minidb.io import CrashMode
from minidb.log import file_name
from minidb.log.end import find_end
from minidb.pagestore.buffer.latch import EX, SH
from minidb.pagestore.errors import LogLostError
from minidb.pagestore.ids import PageId
from minidb.pagestore.restart import collector_paused
from minidb.pagestore.restart.redo import WINDOW
import minidb.pagestore.restart.redo as redo_module
from minidb.pagestore.restart.analysis import analysis_pass, scanned_entry
from minidb.pagestore.restart.master import read_master, reaches_past
from minidb.pagestore.volume.volfile import volume_file_name
from minidb.pagestore.wal.logrec import REDO
import minidb.pagestore.restart.master as master_module
import minidb.pagestore.restart as restart_module
import minidb.log.manager as log_manager_module

from tests.pagestore.sm_helpers import new_sm, open_again


def crashed(seed: int, frames: int = 6):
    """A seeded workload of inserts and updates over two files, a checkpoint in the middle, a crash that
    loses nothing synced; returned opened again without restart, with a clone of the crashed disk."""
    rng = random.Random(seed)
    sm = new_sm(frames=frames)
    with sm.transaction() as t:
        fids = [sm.create_file(t), sm.create_file(t)]
    rids = []
    for i in range(40):
        with sm.transaction(durable=False) as t:
            for _ in range(rng.randrange(1, 6)):
                if rids and rng.random() < 0.4:
                    sm.update_rec(t, rng.choice(rids), 0, bytes([65 + i % 26]) * rng.randrange(1, 5))
                else:
                    rids.append(sm.create_rec(t, rng.choice(fids), bytes([97 + i % 26]) * rng.randrange(5, 60)))
        if i == 15:
            sm.checkpoint()
    loser = sm.begin()
    sm.create_rec(loser, fids[0], b"in flight")
    sm.log.sync()
    sm.disk.crash(CrashMode.nothing())
    copy = sm.disk.clone()
    return open_again(sm.disk, frames=frames, restart=False), open_again(copy, frames=frames, restart=False)


def redo_one_fix_per_entry(sm, analysis):
    """The reference redo: each entry's page fixed on its own, applied if its page LSN is older."""
    bp, dirty, decisions = sm.bp, analysis.dirty_pages, []
    for entry in sm.log.scan(analysis.redo_lsn):
        entry_type = entry.entry_type
        if entry_type is None or not entry_type.redoable:
            continue
        v = entry.values
        known = dirty.get((v["vol"], v["page"]))
        if known is None or entry.lsn < known.rec_lsn:
            decisions.append((entry.lsn, "skipped"))
            continue
        page = bp.fix(PageId(v["vol"], v["store"], v["page"]), EX)
        applied = page.lsn < entry.lsn
        if applied:
            REDO[entry_type.name](page, v)
            page.lsn = entry.lsn
            bp.lower_rec_lsn(page, entry.lsn)
        bp.unfix(page, dirty=applied)
        decisions.append((entry.lsn, "redone" if applied else "skipped"))
    return decisions


def page_images(sm, pids):
    images = {}
    for pid in pids:
        page = sm.bp.fix(pid, SH)
        images[pid] = bytes(page.buf)
        sm.bp.unfix(page)
    return images


@pytest.mark.parametrize("seed", range(4))
def test_redo_fixes_a_page_once_per_run_and_agrees_with_one_fix_per_entry(seed):
    sm, reference = crashed(seed)
    analysis = sm.restart.analysis()
    fixed = []
    real_fix = sm.bp.fix

    def counted_fix(pid, mode=SH, **kw):
        if mode == EX:  # the scan's fixes (after it, the pages no entry read are checked, SH)
            fixed.append(pid.key)
        return real_fix(pid, mode, **kw)

    sm.bp.fix = counted_fix
    redo = sm.restart.redo()
    sm.bp.fix = real_fix
    assert redo.redone > len(fixed) > 0  # several entries redone on a page fixed once
    assert all(a != b for a, b in zip(fixed, fixed[1:]))  # never the same page fixed twice in a row

    expected = redo_one_fix_per_entry(reference, reference.restart.analysis())
    assert [d for d in redo.decisions] == expected
    pids = [row.pid for row in analysis.dirty_pages.values()]
    assert page_images(sm, pids) == page_images(reference, pids)
    assert sm.bp.dirty_page_table() == reference.bp.dirty_page_table()


def test_scanned_entries_carry_the_values_sizes_and_ends_of_the_log_entries():
    sm, _ = crashed(7)
    scanned = list(sm.log.scan())
    assert len(scanned) > 100
    for entry in scanned:
        record = scanned_entry(entry)
        assert (record.lsn, record.entry_type, record.values, record.size, record.end) == (
            entry.lsn, entry.entry_type, entry.values, entry.size, entry.end)


def test_analysis_keeps_for_redo_what_scanned_entry_makes_of_each_entry():
    sm, _ = crashed(7)
    master, kept = sm.restart.master, []
    analysis_pass(sm.log, master, keep=kept)
    expected = [scanned_entry(e) for e in sm.log.scan(None if master.is_null else master)]
    assert len(kept) == len(expected) > 100 and kept == expected


@pytest.mark.parametrize("seed", range(3))
def test_reaches_past_says_yes_only_where_the_log_ends_later(seed):
    rng = random.Random(seed)
    sm, _ = crashed(seed)
    lsns = [e.lsn for e in sm.log.scan()]
    end = sm.log.end_lsn
    sm.log.close(sync=False)
    disk = sm.disk
    assert all(reaches_past(disk, end.file, lsn) for lsn in lsns)  # an intact log: every entry
    for _ in range(12):
        damaged = disk.clone()
        with damaged.open(file_name(end.file)) as f:
            where = rng.randrange(64, end.offset)
            kind = rng.choice(["cut", "zeros", "flip"])
            if kind == "cut":
                f.truncate(where)
            elif kind == "zeros":
                f.write(where, bytes(rng.randrange(1, 200)))
            else:
                f.write(where, bytes([f.read(where, 1)[0] ^ 0x10]))
        try:
            careful = find_end(damaged).end_lsn
        except LogCorruptionError:
            careful = None
        said = [lsn for lsn in lsns if reaches_past(damaged, end.file, lsn)]
        assert said and len(said) < len(lsns)  # the entries before the damage, not those after it
        assert careful is None or all(lsn < careful for lsn in said)


def test_opening_finds_the_log_end_once_and_a_log_cut_before_the_checkpoint_still_fails(monkeypatch):
    sm, _ = crashed(3)
    disk, record = sm.disk, read_master(sm.disk)
    sm.log.close(sync=False)
    calls = []
    real = master_module.find_end
    monkeypatch.setattr(master_module, "find_end", lambda d, *env: calls.append(d) or real(d, *env))
    open_again(disk.clone())
    assert calls == []  # the log's opening finds the end; the check before it did not scan again
    with disk.open(file_name(record.end.file)) as f:
        f.truncate(record.end.offset + 3)  # the checkpoint's chkpt_end torn
    with pytest.raises(LogLostError, match="lies past the end of the log"):
        open_again(disk)
    assert len(calls) == 1  # the careful path decided


def test_analysis_and_redo_pause_the_collector_and_leave_it_as_it_was():
    for enabled in (True, False):
        sm, _ = crashed(1)
        states = []
        for name in ("analysis", "redo"):
            sm.restart.traces[name].listen(lambda line: states.append(gc.isenabled()))
        (gc.enable if enabled else gc.disable)()
        try:
            sm.restart.run()
            assert gc.isenabled() == enabled
        finally:
            gc.enable()
        assert states and not any(states)
    with pytest.raises(ZeroDivisionError):
        with collector_paused():
            1 / 0
    assert gc.isenabled()


def test_opening_pauses_the_collector_from_the_log_scan_to_the_end_of_restart(monkeypatch):
    """StorageManager.open keeps the collector paused throughout: while the log's last file is checked
    (the entries restart takes), in every pass, in the checkpoint that ends restart; and back after."""
    sm, clone = crashed(2)
    states = {}

    def noting(name, real):
        def step(*args, **kwargs):
            states.setdefault(name, gc.isenabled())
            return real(*args, **kwargs)
        return step

    monkeypatch.setattr(log_manager_module, "scan_end", noting("scan", log_manager_module.scan_end))
    monkeypatch.setattr(restart_module, "finish_pass", noting("finish", restart_module.finish_pass))
    for enabled in (True, False):
        states.clear()
        (gc.enable if enabled else gc.disable)()
        try:
            opened = open_again(clone.disk.clone(f"collector-{enabled}"))
            assert gc.isenabled() == enabled
        finally:
            gc.enable()
        assert states == {"scan": False, "finish": False}
        assert opened.restart_report.redo.redone > 0


def every_change(seed: int, frames: int):
    """A seeded workload of every record change (inserts, same-length updates, records that grow and
    shrink, removals), an aborted transaction, a checkpoint in the middle and three losers; crashed with
    nothing unsynced lost. Returns the crashed disk."""
    rng = random.Random(seed)
    sm = new_sm(frames=frames, num_pages=256)
    with sm.transaction() as t:
        fids = [sm.create_file(t), sm.create_file(t)]
    rids = []
    for i in range(60):
        t, before = sm.begin(), list(rids)
        for _ in range(rng.randrange(1, 7)):
            pick = rng.random()
            if not rids or pick < 0.45:
                rids.append(sm.create_rec(t, rng.choice(fids), bytes([97 + i % 26]) * rng.randrange(3, 70)))
            elif pick < 0.7:
                sm.update_rec(t, rng.choice(rids), 0, bytes([65 + i % 26]) * rng.randrange(1, 3))
            elif pick < 0.8:
                sm.append_rec(t, rng.choice(rids), b"+" * rng.randrange(1, 40))
            elif pick < 0.9:
                sm.truncate_rec(t, rng.choice(rids), 1)
            else:
                sm.free_rec(t, rids.pop(rng.randrange(len(rids))))
        if rng.random() < 0.15:
            sm.abort(t)
            rids = before
        else:
            sm.commit(t, durable=False)
        if i == 20:
            sm.checkpoint()
    for _ in range(3):
        loser = sm.begin()
        sm.create_rec(loser, fids[0], b"in flight")
        if rids:
            sm.update_rec(loser, rng.choice(rids), 0, b"!")
    sm.log.sync()
    sm.disk.crash(CrashMode.nothing())
    return sm.disk


def counted_fixes(sm):
    """The pages the scan of redo fixes EX, in order (a list filled as redo runs)."""
    fixed, real_fix = [], sm.bp.fix

    def fix(pid, mode=SH, **kw):
        if mode == EX:
            fixed.append(pid.key)
        return real_fix(pid, mode, **kw)

    sm.bp.fix = fix
    return fixed


@pytest.mark.parametrize("seed,frames", [(0, 6), (1, 6), (2, 40), (3, 40), (4, 12)])
def test_redo_page_by_page_agrees_with_the_careful_redo_in_log_order(seed, frames):
    disk = every_change(seed, frames)
    careful = open_again(disk.clone(), frames=frames, restart=False)  # traced: entry by entry, in log order
    fast = open_again(disk.clone(), frames=frames, restart=False, restart_trace=False)
    (careful.restart.analysis(), fast.restart.analysis())
    fixed = counted_fixes(fast)
    expected, got = careful.restart.redo(), fast.restart.redo()
    assert fixed and len(fixed) == len(set(fixed))  # the fast path ran: every page fixed once
    assert got.redone == expected.redone > 100 and got.decisions == expected.decisions
    assert (got.entries_read, got.skipped_not_dirty, got.skipped_page_newer, got.pages_repaired) == (
        expected.entries_read, expected.skipped_not_dirty, expected.skipped_page_newer, expected.pages_repaired)
    pids = [row.pid for row in careful.restart.analysis_result.dirty_pages.values()]
    assert page_images(fast, pids) == page_images(careful, pids)
    for sm in (careful, fast):
        sm.restart.run()
    assert records(fast) == records(careful)
    for sm in (careful, fast):
        sm.close()
    if frames >= 40:  # a pool that holds every page: no page written during redo, so undo logs the same
        # images, and the volume and the log come out the same, byte for byte
        for name in (volume_file_name(careful.volume.vid), *(file_name(n) for n in range(1, 4))):
            if careful.disk.exists(name):
                with careful.disk.open(name) as a, fast.disk.open(name) as b:
                    assert a.read_all() == b.read_all(), name


def records(sm):
    """Every file's records after restart, by record id."""
    with sm.transaction() as t:
        return {fid: [(r.rid, bytes(r.body)) for r in sm.scan(t, fid)] for fid in sm.files.files()}


def test_redo_page_by_page_goes_window_by_window(monkeypatch):
    """Entries beyond one window (more than analysis keeps from a few MB of log) are grouped window by
    window: a page's entries in two windows are applied in order, the page fixed once in each."""
    disk = every_change(5, 12)
    careful = open_again(disk.clone(), frames=12, restart=False)
    fast = open_again(disk.clone(), frames=12, restart=False, restart_trace=False)
    monkeypatch.setattr(redo_module, "WINDOW", 37)
    assert WINDOW > 37
    (careful.restart.analysis(), fast.restart.analysis())
    fixed = counted_fixes(fast)
    expected, got = careful.restart.redo(), fast.restart.redo()
    assert len(fixed) > len(set(fixed))
    assert got.decisions == expected.decisions and got.redone == expected.redone
    pids = [row.pid for row in careful.restart.analysis_result.dirty_pages.values()]
    assert page_images(fast, pids) == page_images(careful, pids)


def test_a_students_redo_test_sees_every_entry_without_a_trace(tmp_path):
    """Exercise 08c's function is asked about every entry, in log order, trace or not: the page-by-page
    shortcut stands for the engine's own test only."""
    root = Path(tmp_path)
    (root / "08c_redo_test").mkdir()
    reference = Path(impl.DEFAULT_DIR) / "08c_redo_test" / "reference.py"
    (root / "08c_redo_test" / "student.py").write_text(
        f"import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('spy_reference', {str(reference)!r})\n"
        f"reference = importlib.util.module_from_spec(spec)\n"
        f"spec.loader.exec_module(reference)\n"
        f"calls = []\n"
        f"def redo_test(lsn, *args):\n"
        f"    calls.append(lsn)\n"
        f"    return reference.redo_test(lsn, *args)\n")
    disk = every_change(6, 12)
    careful = open_again(disk.clone(), frames=12, restart=False)
    careful.restart.analysis()
    expected = careful.restart.redo()
    with impl.using("student", root, only=["08c"]):
        sm = open_again(disk.clone(), frames=12, restart=False, restart_trace=False)
        sm.restart.analysis()
        got = sm.restart.redo()
        calls = impl.load_student("08c_redo_test").calls
    assert len(calls) == got.entries_read == expected.entries_read
    assert calls == sorted(calls) and got.decisions == expected.decisions
