"""The checkpoint thread and the page cleaner (minidb.pagestore.restart.background), and what keeps a
fuzzy checkpoint right while another thread works: entries noted under the log latch, a commit point
and its state together. No test sleeps: the threads are kicked, and tests wait for their done events."""

from __future__ import annotations

import threading

import pytest

from minidb.errors import DiskError, SimulatedCrash
from minidb.io import SimDisk
from minidb.log.groupcommit import ManualClock
from minidb.pagestore import EX, Background, StorageManager
from minidb.pagestore.buffer.latch import Latch

from tests.pagestore.helpers import new_volume
from tests.pagestore.sm_helpers import OPTIONS, new_sm, open_again
from tests.pagestore.test_bufferpool import pid, update


def background_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("minidb-")]


def manual() -> Background:
    """Threads that run only when kicked (the clock never moves)."""
    return Background(clock=ManualClock(), chkpt_interval=None, clean_interval=None)


def fill(sm: StorageManager, commits: int, body: bytes = b"r" * 40):
    with sm.transaction() as t:
        fid = sm.create_file(t)
    rids = []
    for i in range(commits):
        with sm.transaction() as t:
            rids.append(sm.create_rec(t, fid, body + i.to_bytes(4, "little")))
    return fid, rids


def test_a_400_commit_workload_is_checkpointed_and_cleaned_by_the_threads():
    sm = new_sm("bg400", num_pages=256, frames=16, background=True, chkpt_every=16384)
    fid, rids = fill(sm, 400)
    stats = sm.background_stats
    assert stats["nCheckpointKicks"] >= 1 and stats["nCleanerKicks"] >= 1  # kicked by commits alone
    sm.background.checkpoint_done.wait()  # the kicked rounds end (no timeout: they were kicked)
    sm.background.cleaner_done.wait()
    stats = sm.background_stats
    assert stats["nThreadCheckpoints"] >= 1 and sm.checkpointer.stats["nCheckpoints"] >= 1
    assert stats["nThreadPagesWritten"] >= 1 and stats["nRunsWritten"] >= 1
    assert stats["pagesPerRun"] == pytest.approx(stats["nThreadPagesWritten"] / stats["nRunsWritten"], abs=0.01)
    sm.close()
    assert background_threads() == []
    sm = open_again(sm.disk)
    assert len(sm.contents()[fid]) == 400


def test_no_thread_is_left_after_close():
    sm = new_sm("bgclose", background=manual())
    assert len(background_threads()) == 2
    sm.close()
    assert background_threads() == []
    assert not sm.background.alive


def test_a_kick_runs_one_round_and_sets_done():
    sm = new_sm("bgkick", background=manual())
    fill(sm, 5)
    bg = sm.background
    bg.checkpoint_done.clear()
    bg.cleaner_done.clear()
    bg.kick_checkpoint("test")
    bg.checkpoint_done.wait()
    bg.cleaner_done.wait()  # the checkpoint thread kicks the cleaner
    assert sm.background_stats["nThreadCheckpoints"] == 1
    assert sm.background_stats["nThreadPagesWritten"] >= 1
    assert sm.bp.dirty_page_table() == {}
    sm.close()


def test_a_new_log_partition_kicks_the_checkpoint_thread():
    sm = new_sm("bgflip", background=manual(), file_max=4096)
    first = sm.log.end_lsn.file
    fill(sm, 60)
    assert sm.log.end_lsn.file > first
    assert sm.background_stats["nCheckpointKicks"] >= 1
    sm.background.checkpoint_done.wait()
    assert sm.background_stats["nThreadCheckpoints"] >= 1
    sm.close()


def test_the_interval_passing_on_the_clock_checkpoints_what_was_logged():
    clock = ManualClock()
    sm = new_sm("bgclock", background=Background(clock=clock, chkpt_interval=10.0, clean_interval=None))
    fill(sm, 3)
    bg = sm.background
    clock.waiting.wait()
    bg.checkpoint_done.clear()
    clock.advance(11.0)  # the thread wakes, finds its interval passed and something logged
    bg.checkpoint_done.wait()
    assert sm.background_stats["nThreadCheckpoints"] == 1
    assert sm.background_stats["nCheckpointKicks"] == 0
    sm.close()


def test_a_crash_while_the_threads_run_stops_them_and_the_disk_restarts():
    disk = SimDisk("bgcrash")
    sm = StorageManager.format(disk, num_pages=256, page_size=512, frames=8, background=True, chkpt_every=8192,
                               **OPTIONS)
    with sm.transaction() as t:
        fid = sm.create_file(t)
    committed = []
    disk.schedule_crash(after_ops=120)
    with pytest.raises((SimulatedCrash, DiskError)):  # the crash may meet a thread first
        for i in range(10_000):
            with sm.transaction() as t:
                rid = sm.create_rec(t, fid, b"c" * 40 + i.to_bytes(4, "little"))
            committed.append(rid)
    crash_at = next(e.index for e in disk.events if e.kind == "crash")
    sm.background.join()  # both threads leave
    assert background_threads() == []
    assert [str(e) for e in disk.events[crash_at + 1:]] == []  # nothing touched the disk after the crash
    sm = open_again(disk, frames=8)
    records = sm.contents()[fid]
    assert set(committed) <= set(records)  # every durable commit survived
    assert sm.check() == []
    sm.close()


def test_a_thread_tied_to_the_disk_touches_nothing_after_its_crash():
    disk = SimDisk("bound")
    handle = disk.open("f", create=True)
    failures = []
    ready, go = threading.Event(), threading.Event()

    def worker():
        disk.bind_thread()
        ready.set()
        go.wait()
        for attempt in (lambda: disk.open("g", create=True), lambda: disk.delete("f"),
                        lambda: handle.write(0, b"x")):
            try:
                attempt()
            except DiskError as e:
                failures.append(str(e))

    thread = threading.Thread(target=worker)
    thread.start()
    ready.wait()
    disk.crash()
    go.set()
    thread.join()
    assert len(failures) == 3 and "before its crash" in failures[0]
    assert disk.list() == ["f"] and [e.kind for e in disk.events] == ["create", "crash"]


def test_the_disk_tells_its_crash_listeners():
    disk = SimDisk("told")
    told = []
    disk.on_crash(lambda: told.append(len(disk.events)))
    disk.open("f", create=True).write(0, b"x")
    disk.schedule_crash(after_ops=1)
    with pytest.raises(SimulatedCrash):
        disk.open("f").write(1, b"y")
    assert told == [4]  # told once the crash was recorded (create, write, write, crash)


def checkpoint_at(sm: StorageManager, wanted) -> list:
    """Take a checkpoint right after the first entry ``wanted(entry)`` is appended, as a thread could (the
    log's listeners run after the append, where the other thread may get the log latch next)."""
    taken = []

    def listener(lsn, entry_type, vlsn):
        if not taken and not entry_type.name.startswith(("chkpt", "page_image")):
            entry = sm.log.read(lsn)
            if wanted(entry):
                taken.append(sm.checkpoint())
    sm.log.add_listener(listener)
    return taken


def test_a_checkpoint_right_after_an_entry_sees_it_in_the_transaction_table():
    sm = new_sm("noted")
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rid = sm.create_rec(t, fid, b"before")
    loser = sm.begin()
    taken = checkpoint_at(sm, lambda e: e.txn_id == loser.txn_id)
    sm.update_rec(loser, rid, 0, b"AFTER!")
    assert taken, "no checkpoint was taken"
    tables = [e for e in sm.log.scan(taken[0].begin) if e.type_name == "chkpt_xct_tab"]
    row = next(x for x in tables[0].values["xcts"] if x["tid"] == loser.txn_id)
    assert row["last_lsn"] == loser.last_lsn  # noted with the append: before chkpt_begin was
    sm.disk.crash()
    sm = open_again(sm.disk)
    assert sm.contents()[fid][rid] == (b"", b"before")  # the loser's update undone


def test_a_checkpoint_right_after_a_commit_point_sees_the_transaction_committed():
    sm = new_sm("committed")
    with sm.transaction() as t:
        keep = sm.create_file(t)
        gone = sm.create_file(t)
        sm.create_rec(t, keep, b"kept")
    t = sm.begin()
    sm.destroy_file(t, gone)
    taken = checkpoint_at(sm, lambda e: e.type_name == "xct_freeing_space")
    sm.commit(t)
    assert taken, "no checkpoint was taken"
    tables = [e for e in sm.log.scan(taken[0].begin) if e.type_name == "chkpt_xct_tab"]
    row = next(x for x in tables[0].values["xcts"] if x["tid"] == t.txn_id)
    assert row["undo_nxt"].is_null  # committed: nothing of it is ever undone
    sm.log.sync()
    sm.disk.crash()
    sm = open_again(sm.disk)
    assert gone not in sm.contents()  # the commit stands: its destroy is not rolled back


class PausedCleaner:
    """The cleaner in a thread of its own, stopped in its copy of page 8 with its pins held; ``settled`` is set
    when another thread waits for the pins to go (or ``failed`` says it did not wait)."""

    def __init__(self, setup):
        self.bp = bp = setup.bp
        self.in_copy, self.go, self.settled = threading.Event(), threading.Event(), threading.Event()
        self.failed: list[Exception] = []
        me = self

        class Pausing(Latch):
            def acquire(self, mode, conditional=False):
                if threading.current_thread() is me.thread:
                    me.in_copy.set()
                    me.go.wait()
                return super().acquire(mode, conditional)

        class Watched(threading.Condition):
            def wait(self, timeout=None):
                me.settled.set()
                return super().wait(timeout)

        next(f for f in bp.frames if f.pid == pid(8)).latch = Pausing()
        bp._unpinned = Watched(bp._mutex)
        self.thread = threading.Thread(target=bp.clean, daemon=True)
        self.thread.start()
        self.in_copy.wait()

    def meanwhile(self, action) -> threading.Thread:
        """Run ``action`` in another thread; return once it waits for the pins (or failed)."""
        def run():
            try:
                action()
            except Exception as e:
                self.failed.append(e)
            self.settled.set()  # (done at once: it did not wait)
        other = threading.Thread(target=run, daemon=True)
        other.start()
        self.settled.wait()
        return other

    def finish(self, other: threading.Thread) -> None:
        self.go.set()
        self.thread.join()
        other.join()


def test_a_miss_waits_for_the_cleaners_pins_rather_than_call_the_pool_full():
    setup = new_volume(frames=2)
    update(setup, 8)
    update(setup, 9)  # both frames dirty: the cleaner pins both
    cleaner = PausedCleaner(setup)
    got = []
    other = cleaner.meanwhile(lambda: got.append(setup.bp.fix(pid(10), EX, virgin=True)))
    assert cleaner.failed == [] and got == []  # it waits for the cleaner, which lets go of its pins soon
    cleaner.finish(other)
    assert cleaner.failed == [] and got and got[0].frame.pid == pid(10)
    setup.bp.unfix(got[0])


def test_a_discard_waits_for_the_cleaners_pins_rather_than_refuse():
    setup = new_volume(frames=4)
    update(setup, 8)
    store = next(f for f in setup.bp.frames if f.pid == pid(8)).page.pid.stid  # the store its header names
    cleaner = PausedCleaner(setup)
    dropped = []
    other = cleaner.meanwhile(lambda: dropped.append(setup.bp.discard_store(store)))
    assert cleaner.failed == [] and dropped == []  # it waits for the cleaner, which lets go of its pins soon
    cleaner.finish(other)
    assert cleaner.failed == [] and dropped == [1] and not setup.bp.is_cached(pid(8))


def test_a_live_crash_while_the_threads_run_violates_nothing():
    from minidb.crashtest.pagestore_background import crash_sweep

    for seed in range(1, 5):
        result = crash_sweep(seed, 40)
        assert result.points == 1 and result.violations == []


def test_crashtest_background_is_for_the_page_store_only(capsys):
    from minidb.cli import main

    assert main(["crashtest", "pagestore", "--background", "--seed", "3", "--ops", "20"]) == 0
    assert capsys.readouterr().out.strip().endswith("crash points: 1, violations: 0")
    assert main(["crashtest", "log", "--background"]) == 2
    assert "--background is for pagestore" in capsys.readouterr().err
