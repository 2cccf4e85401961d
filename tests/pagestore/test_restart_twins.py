"""The accelerated restart (``--impl fast``, :mod:`minidb.fast.pagestore.restart`) does what it says.

Each test runs in fast mode; that the twins' results are the reference's is
``tests/agreement/scn_restart.py``'s job. Here:

- redo fixes a page once per run of entries on it;
- it takes what analysis read and reads only the log before the master
  checkpoint; analysis keeps at most ``KEEP_BYTES`` and redo reads the rest;
- restart decodes each entry once (:func:`scanned_entry`): the values a
  :class:`LogEntry` decodes;
- opening checks that the log reaches past the master checkpoint without
  finding the log's end twice (:func:`reaches_past`): whenever it says yes,
  :func:`find_end` finds the log ending after it (or raises);
- restart reads the last log file as opening checked it, and takes it before
  anything is written;
- analysis and redo run with the cyclic garbage collector paused, and leave
  it as they found it; opening keeps it paused from the log's opening scan to
  the end of restart.

Seeded: the same workloads and damage on every run.
"""

import gc
import random

import pytest

import minidb.log.manager as log_manager_module
import minidb.pagestore.restart.master as master_module
import minidb.pagestore.restart.restart as restart_module
from minidb import impl
from minidb.collector import collector_paused
from minidb.errors import LogCorruptionError, LogError
from minidb.fast.pagestore.restart.analysis import analysis_pass, scanned_entry
from minidb.fast.pagestore.restart.master import reaches_past
from minidb.fast.pagestore.restart.redo import redo_entries
from minidb.io import CrashMode, SimDisk
from minidb.log import LogManager, file_name
from minidb.log.end import find_end
from minidb.log.reader import LogReader
from minidb.pagestore.buffer.latch import EX, SH
from minidb.pagestore.errors import LogLostError
from minidb.pagestore.restart.master import read_master

from tests.pagestore.sm_helpers import new_sm, open_again


@pytest.fixture(autouse=True)
def fast():
    with impl.using("fast"):
        yield


def crashed(seed: int, frames: int = 6, trace: bool = True):
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
    return (open_again(sm.disk, frames=frames, restart=False, restart_trace=trace),
            open_again(copy, frames=frames, restart=False, restart_trace=trace))


@pytest.mark.parametrize("seed", range(4))
def test_redo_fixes_a_page_once_per_run(seed):
    sm, _ = crashed(seed, trace=False)
    sm.restart.analysis()
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
    assert all(a != b for a, b in zip(fixed, fixed[1:], strict=False))  # never the same page fixed twice in a row


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
    real = master_module.scan_end
    monkeypatch.setattr(master_module, "scan_end", lambda d, **env: calls.append(d) or real(d, **env))
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
            sm.restart.traces[name].listen(lambda _line, states=states: states.append(gc.isenabled()))
        (gc.enable if enabled else gc.disable)()
        try:
            sm.restart.run()
            assert gc.isenabled() == enabled
        finally:
            gc.enable()
        assert states and not any(states)
    with pytest.raises(ZeroDivisionError):
        with collector_paused():
            _ = 1 / 0
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


def crashed_with_pages_dirty_before_the_checkpoint():
    """A crash whose redo LSN lies before the master checkpoint: a page dirtied before it stays dirty."""
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rids = [sm.create_rec(t, fid, b"r%d" % i) for i in range(6)]
    master = sm.checkpoint().begin
    with sm.transaction() as t:
        for rid in rids:
            sm.update_rec(t, rid, 0, b"R")
    sm.disk.crash(CrashMode.nothing())
    return open_again(sm.disk, frames=8, restart=False, restart_trace=False), master


def crashed_after_commits(name: str) -> SimDisk:
    """A checkpoint, then 30 committed inserts in the same log file, and a crash that loses nothing synced."""
    sm = new_sm(name)
    with sm.transaction() as t:
        fid = sm.create_file(t)
    sm.checkpoint()
    for i in range(30):
        with sm.transaction() as t:
            sm.create_rec(t, fid, f"record {i:02d}".encode())
    sm.disk.crash(CrashMode.nothing())
    return sm.disk



def test_redo_takes_what_analysis_read_and_reads_only_the_log_before_it():
    sm, master = crashed_with_pages_dirty_before_the_checkpoint()
    scans = []
    real_scan = sm.restart.log.scan

    def counted_scan(start=None, stop=None, checked=None):
        for entry in real_scan(start, stop, checked):
            scans.append(entry.lsn)
            yield entry

    sm.restart.log.scan = counted_scan
    analysis = sm.restart.analysis()
    assert analysis.redo_lsn < master and len(scans) == analysis.entries_read
    del scans[:]
    redo = sm.restart.redo()
    assert scans and all(analysis.redo_lsn <= lsn < master for lsn in scans)  # only the log before the master
    assert redo.entries_read == len(list(real_scan(analysis.redo_lsn)))


def test_redo_entries_are_those_of_a_scan_wherever_redo_starts():
    """Whatever part of the log analysis kept (all from the master, or a prefix of it), redo_entries gives
    exactly the entries a scan from the redo LSN gives, in order."""
    sm, master = crashed_with_pages_dirty_before_the_checkpoint()
    log = sm.restart.log
    every = list(log.scan())
    at_master = next(i for i, e in enumerate(every) if e.lsn == master)
    for kept in (every[at_master:], every[at_master:at_master + 3], every[at_master + 2:-2], []):
        for start in (every[0].lsn, every[at_master - 1].lsn, master, every[at_master + 4].lsn, every[-1].lsn):
            want = [e.lsn for e in log.scan(start)]
            assert [e.lsn for e in redo_entries(log, start, kept)] == want, (start, len(kept))




def test_analysis_keeps_at_most_keep_bytes_and_redo_reads_the_rest(monkeypatch):
    import minidb.fast.pagestore.restart.analysis as analysis_module
    monkeypatch.setattr(analysis_module, "KEEP_BYTES", 100)
    sm, _ = crashed_with_pages_dirty_before_the_checkpoint()
    analysis = sm.restart.analysis()
    kept = list(sm.restart._kept)
    assert 0 < len(kept) < analysis.entries_read and sum(e.size for e in kept[:-1]) < 100
    redo = sm.restart.redo()
    assert redo.entries_read == len(list(sm.restart.log.scan(analysis.redo_lsn)))
    sm.restart.run()
    assert sm.restart.finish_result is not None




def test_restart_reads_the_last_log_file_as_opening_checked_it(monkeypatch):
    """Opening the log checks its last file entry by entry to find its end; analysis takes those entries
    instead of reading and checking the file's bytes again (the log since the checkpoint is all in it)."""
    disk = crashed_after_commits("read-once")
    reads = []
    real = LogReader.file_bytes
    monkeypatch.setattr(LogReader, "file_bytes", lambda self, number: reads.append(number) or real(self, number))
    sm = open_again(disk, restart_trace=False)
    assert reads == []
    assert sm.restart_report.analysis.entries_read > 60
    assert sm.log.take_opening_scan() is None  # taken by analysis
    monkeypatch.undo()
    assert sm.check() == []
    (records,) = [recs for recs in sm.contents().values() if recs]
    assert sorted(body for _, body in records.values()) == [f"record {i:02d}".encode() for i in range(30)]



def test_restart_takes_the_opening_scan_before_anything_is_written(monkeypatch):
    """The log keeps the last file's checked entries only when restart runs, and restart takes them first
    thing: one left untaken would make the first write to the log fail."""
    disk = crashed_after_commits("taken")
    sm = open_again(disk, restart=False)
    assert sm.log.take_opening_scan() is None  # not kept: nobody would take it
    sm.close()
    monkeypatch.setattr(LogManager, "take_opening_scan", lambda self: None)  # left with the log
    with pytest.raises(LogError, match="take_opening_scan"):
        open_again(crashed_after_commits("untaken"))
