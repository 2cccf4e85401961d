"""The passes of restart one by one, checkpoints, the master LSN, and the golden trace (analysis, redo, undo
and torn pages on their own: exercises/projects/aries_restart/tests/public, which run on minidb's restart too)."""

import random
from pathlib import Path

import pytest

from minidb import impl
from minidb.io import CrashMode, SimDisk
from minidb.log import LSN, NULL_LSN
from minidb.pagestore.restart.finish import freeing_space_entry
from minidb.pagestore.restart.master import MASTER_FILE, read_master, write_master
from minidb.pagestore.transactions.xct import XctState

from tests.cli.test_cli import check_golden
from tests.pagestore.sm_helpers import entries, new_sm, open_again


def test_master_lsn_ping_pong_survives_a_torn_write():
    disk = SimDisk("m")
    assert read_master(disk) is None
    first = write_master(disk, LSN(1, 0x3c0), LSN(1, 0x4a2))  # sequence 1, slot 1
    assert (first.sequence, read_master(disk).master) == (1, LSN(1, 0x3c0))
    write_master(disk, LSN(1, 0x800), LSN(1, 0x900))  # sequence 2, slot 0
    assert read_master(disk).master == LSN(1, 0x800)
    third = write_master(disk, LSN(2, 0x10), LSN(2, 0x80))  # sequence 3, slot 1 again
    assert third.sequence == 3 and read_master(disk).master == LSN(2, 0x10)
    torn = disk.crash_image(len(disk.events) - 2, CrashMode.torn(10))  # its write cut after 10 bytes
    assert read_master(torn).master == LSN(1, 0x800)
    with torn.open(MASTER_FILE) as f:
        f.write(5, b"\xff")  # a damaged checksum: that slot is ignored too
    assert read_master(torn) is None


def test_a_checkpoint_logs_its_tables_and_moves_the_master():
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        fid = sm.create_file(t)
    active = sm.begin()
    sm.create_rec(active, fid, b"x")
    dirty = sm.bp.dirty_page_table()
    result = sm.checkpoint()
    names = [e.type_name for e in entries(sm, start=result.begin)]
    assert names == ["chkpt_begin", "chkpt_bf_tab", "chkpt_xct_tab", "chkpt_end"]
    bf, xt, end = [sm.log.read(e.lsn) for e in entries(sm, start=result.begin)][1:]
    assert {(p["page"], p["rec_lsn"]) for p in bf.values["pages"]} == {(p.page, lsn) for p, lsn in dirty.items()}
    assert xt.values["xcts"] == [{"tid": active.txn_id, "state": int(XctState.ACTIVE),
                                  "last_lsn": active.last_lsn, "undo_nxt": active.undo_nxt}]
    assert end.values == {"master": result.begin, "min_rec_lsn": min(dirty.values())}
    assert read_master(sm.disk).master == result.begin and sm.log.is_durable(end.lsn)


def test_redo_skips_clean_pages_and_newer_page_lsns():
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rid = sm.create_rec(t, fid, b"one")
    sm.bp.force_all()  # on disk up to here
    with sm.transaction() as t:
        sm.update_rec(t, rid, 0, b"ONE")
    sm.disk.crash(CrashMode.nothing())
    sm = open_again(sm.disk, frames=8, restart=False)
    sm.restart.analysis()
    result = sm.restart.redo()
    assert result.redone >= 1 and result.skipped_page_newer >= 1
    trace = sm.restart.traces["redo"].lines
    assert any("rec_splice p(1.3.16): page LSN" in line and "redone" in line for line in trace)
    sm.restart.run()
    with sm.transaction() as t:
        assert sm.read_rec(t, rid).body == b"ONE"


def test_undo_list_always_gives_the_largest_lsn():
    from minidb.pagestore.restart.undo import UndoList  # undo's own (the aries_restart project's edition has none)

    todo = UndoList()
    for lsn, tid in ((LSN(1, 0x600), 2), (LSN(1, 0x640), 5), (LSN(1, 0x5a0), 7)):
        todo.push(lsn, tid)
    todo.push(NULL_LSN, 9)  # a transaction with nothing to undo is not listed
    assert [todo.pop() for _ in range(len(todo))] == [(LSN(1, 0x640), 5), (LSN(1, 0x600), 2), (LSN(1, 0x5a0), 7)]


def test_restart_finishes_a_transaction_left_in_freeing_space():
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        fid = sm.create_file(t)
    t = sm.begin()
    sm.destroy_file(t, fid)
    sm.commit(t)
    entry = freeing_space_entry(sm.log, sm.log.read(sm.log.last_lsn).values["txn_prev_lsn"])
    assert [s["snum"] for s in entry.values["stores"]] == [3, 4]
    sm.disk.crash(CrashMode.nothing())
    sm = open_again(sm.disk, frames=8)
    assert "finish: T2 is FREEING_SPACE" in sm.restart_report.trace_text()
    assert sm.volume.stores_marked_for_deletion() == []


def golden_workload():
    """A small scripted crash: a committed transaction, an aborted one, a checkpoint, two in flight."""
    sm = new_sm("golden", frames=4)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        a = sm.create_rec(t, fid, b"alpha")
        b = sm.create_rec(t, fid, b"beta")
    aborted = sm.begin()
    sm.update_rec(aborted, a, 0, b"ALPHA")
    sm.abort(aborted)
    t3 = sm.begin()
    sm.update_rec(t3, b, 0, b"BETA")
    sm.checkpoint()
    t4 = sm.begin()
    sm.create_rec(t4, fid, b"gamma")
    with sm.transaction() as t:
        sm.append_rec(t, a, b"+")
    sm.free_rec(t3, a)
    sm.log.sync()
    sm.disk.crash(CrashMode.nothing())
    return sm.disk, fid, a, b


def test_restart_trace_golden():
    disk, fid, a, b = golden_workload()
    sm = open_again(disk, frames=4)
    check_golden("pagestore_restart_trace.txt", sm.restart_report.trace_text())
    assert sm.contents() == {fid: {a: (b"", b"alpha+"), b: (b"", b"beta")}}


@pytest.mark.parametrize("frames", [3, 8])
def test_stepping_through_the_passes_gives_the_same_result_as_running_them(frames):
    disk, fid, a, b = golden_workload()
    stepped = open_again(disk.clone(), frames=frames, restart=False)
    seen = []
    while stepped.restart.next_pass is not None:
        seen.append(stepped.restart.next_pass)
        stepped.restart.step()
    assert seen == ["analysis", "redo", "undo", "finish"]
    ran = open_again(disk.clone(), frames=frames)
    assert stepped.restart.report().trace_text() == ran.restart_report.trace_text()
    assert stepped.contents() == ran.contents()


def test_checkpoints_are_taken_as_the_log_grows():
    sm = new_sm(chkpt_every=2000)
    with sm.transaction() as t:
        fid = sm.create_file(t)
    taken = sm.checkpointer.stats["nCheckpoints"]
    for i in range(20):
        with sm.transaction() as t:
            sm.create_rec(t, fid, bytes([i]) * 100)
    assert sm.checkpointer.stats["nCheckpoints"] - taken >= 2
    assert read_master(sm.disk).master == sm.checkpointer.last.begin


def test_opening_a_disk_without_a_volume_is_a_clear_error_and_changes_nothing():
    from minidb.pagestore import StorageManager, VolumeError

    disk = SimDisk("empty")
    with pytest.raises(VolumeError, match=r"sim:empty/v1.vol: no volume v\(1\) on this disk"):
        StorageManager.open(disk)
    assert disk.list() == []




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


def test_a_students_redo_test_sees_every_entry_without_a_trace(tmp_path):
    """Exercise 08c's function is asked about every entry, in log order, trace or not."""
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
    traced = open_again(disk.clone(), frames=12, restart=False)
    traced.restart.analysis()
    expected = traced.restart.redo()
    with impl.using("student", root, only=["08c"]):
        sm = open_again(disk.clone(), frames=12, restart=False, restart_trace=False)
        sm.restart.analysis()
        got = sm.restart.redo()
        calls = impl.load_student("08c_redo_test").calls
    assert len(calls) == got.entries_read == expected.entries_read
    assert calls == sorted(calls) and got.decisions == expected.decisions


def test_a_students_redo_test_that_raises_after_reading_the_page_leaves_it_unfixed(tmp_path):
    """Exercise 08c's function reads the page LSN (the page is fixed for it) and then raises: redo reports
    the student's error, not one of its own, and the page is unfixed."""
    (tmp_path / "08c_redo_test").mkdir()
    (tmp_path / "08c_redo_test" / "student.py").write_text(
        "def redo_test(lsn, kind, page, table, read_page_lsn):\n"
        "    if page is not None and page in table:\n"
        "        read_page_lsn()\n"
        "        raise ValueError('oops')\n"
        "    return 'not redoable' if page is None else 'not dirty'\n")
    disk = every_change(6, 12)
    with impl.using("student", tmp_path, only=["08c"]):
        sm = open_again(disk.clone(), frames=12, restart=False)
        sm.restart.analysis()
        with pytest.raises(impl.StudentCodeError, match="oops"):
            sm.restart.redo()
    assert all(frame.pin_count == 0 for frame in sm.bp.frames)


def map_reads_of_a_restart(monkeypatch, files: int) -> int:
    """The map-page reads of a restart after a crash, with ``files`` committed files (two stores each) and a
    checkpoint after them (so that redo has nothing of theirs to repeat)."""
    from minidb.pagestore.volume.volmaps import VolumeMaps

    sm = new_sm(frames=8)
    with sm.transaction() as t:
        for _ in range(files):
            sm.create_rec(t, sm.create_file(t), b"x")
    sm.checkpoint()
    sm.disk.crash(CrashMode.everything())
    reads = []
    read_map = VolumeMaps._read_map
    monkeypatch.setattr(VolumeMaps, "_read_map", lambda self, number, read: reads.append(number) or read_map(self, number, read))
    open_again(sm.disk, frames=8)
    return len(reads)


def test_a_restart_reads_the_maps_once_a_pass_over_the_stores_not_once_a_store(monkeypatch):
    """Restart's finish looks at every store (extent lists to repair, stores still marked for deletion, TMP
    files to drop): each such pass reads the store map's and extent map's pages once, however many stores."""
    assert map_reads_of_a_restart(monkeypatch, 2) == map_reads_of_a_restart(monkeypatch, 12)


def test_a_restart_finds_the_logs_end_once(monkeypatch):
    """Before the log is opened, restart checks that it reaches past the master checkpoint, which finds
    where it ends (every entry of the last file read and checked); opening the log then takes that end
    instead of reading the last file again."""
    import minidb.log.end as log_end
    import minidb.log.manager as log_manager
    import minidb.pagestore.restart.master as master

    sm = new_sm(frames=8)
    with sm.transaction() as t:
        sm.create_rec(t, sm.create_file(t), b"x" * 100)
    sm.checkpoint()
    sm.disk.crash(CrashMode.everything())
    searches = []
    for module in (log_end, log_manager, master):  # wherever the search is called from
        real = getattr(module, "scan_end", log_end.scan_end)
        monkeypatch.setattr(module, "scan_end", lambda *a, _real=real, **k: searches.append(1) or _real(*a, **k),
                            raising=False)
    open_again(sm.disk, frames=8)
    assert len(searches) == 1
