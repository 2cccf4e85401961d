"""The page store's crash test: transactions, a crash at every write and fsync, restart, a model.

The workload and its model are :mod:`minidb.crashtest.pagestore_workload`:
up to three interleaved transactions on a small volume (records small and
large, files LOAD and TMP, savepoints, checkpoints, two-phase commit, named
indexes, a bounded log in some seeds), the committed state after each
commit, and the allocation protocol checked while it runs.

Then, for every write, truncate and fsync of the workload (and each way a
crash can treat unsynced writes: none kept, all kept, a torn last write, a
random subset), the crashed disk is opened, which restarts, and:

1. the commits that survived (their commit point is in the log the crash
   left, read before restart, which may scavenge it) must be a prefix of the commit order, and include every commit whose
   durable ``commit()`` had returned before the crash;
2. the files and their records, and the named indexes, must be *exactly*
   the model's committed state after that prefix: committed data there, uncommitted and aborted
   data gone;
3. each prepared transaction must come back *in doubt* (``in_doubt()``,
   its record and store locks held again, its changes present) unless its
   commit survived, its prepare was not durable yet (then it is rolled
   back), or its abort had begun; a prepare or an abort that had returned
   must not be undone. The check then resolves the in-doubt ones (commits
   some, aborts others) and the files must be the committed state plus the
   changes of those it committed;
4. the volumes the workload mounted must be mounted again, every volume's
   maps must be consistent, the store directory and the root
   index sound (:func:`~minidb.pagestore.directory.check_directory`), no
   transaction active, no store in use but the files' two stores each and
   the named indexes' (so every TMP file is gone, and an uncommitted LOAD
   file too), each of them REGULAR (a committed LOAD file
   became regular, with all its records, by 2); on a bounded log, no log
   space left reserved, and the log files exactly those from restart's
   checkpoint's file on (restart scavenged the rest), or from the first
   file of a transaction that came back in doubt;
5. every page that the crash left torn on disk (read before restarting)
   and that a store holds after restart was repaired by redo from a full
   page image, and no repair read the log before the redo LSN (the log
   before it may be scavenged: :mod:`minidb.pagestore.wal.pageimage`);
6. at some crash points, a second image of the same crash is restarted
   with a crash *during restart* (after a random one of its disk
   operations), then restarted again: the result must be the same
   (restart is idempotent).

With ``volumes=2`` the workload runs on two volumes
(:mod:`minidb.crashtest.pagestore_workload`); the checks above cover the
stores, pages and torn pages of both.

Anything else, including an exception, is a violation.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from minidb.crashtest.pagestore_workload import (
    FILE_MAX,
    PAGE_SIZE,
    PARTITIONS,
    Commit,
    State,
    TxnModel,
    Workload,
    applied,
    clock,
    name_rid,
    observed,
    run_workload,
)
from minidb.crashtest.script_locking import ScriptLocking
from minidb.crashtest.sweep import Restarted, SweepResult, sweep_crash_points
from minidb.errors import MinidbError
from minidb.io import SimDisk
from minidb.log import LSN, LogManager
from minidb.log.files import all_log_file_numbers
from minidb.log.head import read_log_head
from minidb.pagestore import (
    BadPageError,
    NoLocking,
    Page,
    StorageManager,
    StoreFlags,
    check_directory,
    volume_file_name,
)
from minidb.pagestore.restart.master import read_master
from minidb.pagestore.volume.stores import ROOT_INDEX, STORE_DIRECTORY

RESTART_FRAMES = 12  # restart with a pool larger than the workload's: fewer evictions, a quicker sweep


def open_sm(workload: Workload, disk: SimDisk) -> StorageManager:
    return StorageManager.open(disk, frames=RESTART_FRAMES, clock=clock, file_max=FILE_MAX,
                               buffer_size=workload.buffer_size, restart_trace=False, log_size=workload.log_size,
                               partitions=PARTITIONS, locking=ScriptLocking() if workload.prepared else None)


def surviving(workload: Workload, image: SimDisk) -> tuple[list[bool], set[int]]:
    """Whether each commit point is in the log that the crash left, and the transactions whose prepare
    point is, read before restart (which may scavenge files and reuse their LSNs after a crash in it)."""
    log = LogManager(image, file_max=FILE_MAX, readonly=True)
    try:
        prepares = {t.xct.txn_id for t in workload.prepared
                    if t.prepared_lsn.file < log.head or _is(log, t.prepared_lsn, t.xct.txn_id, "xct_prepare_fi")}
        return [survived(log, c) for c in workload.commits], prepares
    finally:
        log.close()


def _is(log: LogManager, lsn: LSN, tid: int, type_name: str) -> bool:
    """Whether ``log`` holds, at ``lsn``, an entry of transaction ``tid`` of that type."""
    try:
        entry = log.read(lsn)
    except MinidbError:
        return False
    return entry.txn_id == tid and entry.type_name == type_name


def survived(log: LogManager, commit: Commit) -> bool:
    """Whether the commit point of ``commit`` is in ``log`` (a crashed image's, not yet restarted)."""
    if commit.lsn.file < log.head:
        return True  # scavenged: only files below a durable checkpoint are, so it was durable
    try:
        entry = log.read(commit.lsn)
    except MinidbError:
        return False
    if entry.txn_id != commit.tid:
        return False
    return entry.type_name == "xct_freeing_space" or (entry.type_name == "xct_end" and entry.values["committed"])


def check_restarted(workload: Workload, sm: StorageManager, crash_event: int,
                    present: tuple[list[bool], set[int]]) -> str | None:
    """None if ``sm`` (just restarted after a crash after ``crash_event``, which left the commits
    ``present``) holds exactly what it must.

    In-doubt transactions are resolved on the way (commit or abort, chosen by a generator seeded with
    ``crash_event``: a check of the same point chooses the same)."""
    present, prepares = present
    doubt_files: list[int] = []
    k = sum(present)
    if present != [True] * k + [False] * (len(present) - k):
        return f"the surviving commits are not a prefix of the commit order: {present}"
    for commit, ok in zip(workload.commits, present, strict=True):
        if not ok and commit.synced_at is not None and commit.synced_at <= crash_event:
            return f"T{commit.tid}'s durable commit (synced at event {commit.synced_at}) was lost"
    expected = workload.states[k]
    problem = check_volumes(workload, sm, crash_event)
    if problem is not None:
        return problem
    if workload.prepared:
        committed = {c.tid for c, ok in zip(workload.commits, present, strict=True) if ok}
        doubt = check_in_doubt(workload, sm, crash_event, committed, prepares)
        if isinstance(doubt, str):
            return doubt
        doubt_files = [d.first_lsn.file for d in sm.in_doubt()]
        sm.xcts.locks = NoLocking()  # the model's check reads everything, in-doubt changes included
        seen = expected
        for t in doubt:
            seen = applied(seen, t)
        got = observed(sm) if doubt else seen
        if got != seen:
            return f"in-doubt transactions {[t.gtid for t in doubt]}: " + _difference(seen, got, k)
        pick = random.Random(crash_event)
        for t in doubt:
            if pick.random() < 0.5:
                sm.commit_prepared(t.gtid)
                expected = applied(expected, t)
            else:
                sm.abort_prepared(t.gtid)
    got = observed(sm)
    if got != expected:
        return _difference(expected, got, k)
    problems = sm.check()
    if problems:
        return f"inconsistent maps after restart: {problems[:2]}"
    for mount in sm.mounts.mounts():
        problem = check_stores(mount, {fid: recs for fid, recs in expected.items() if fid.vol == mount.volume.vid})
        if problem is not None:
            return problem if workload.volumes == 1 else f"v({mount.volume.vid}): {problem}"
    if sm.xcts.active():
        return f"transactions still active after restart: {sm.xcts.active()}"
    return check_log_space(workload, sm, doubt_files)


def check_volumes(workload: Workload, sm: StorageManager, crash_event: int) -> str | None:
    """None if restart mounted the volumes the workload had (the last may be dismounted by a crash in the
    middle of a remount: it is mounted again here, so the checks read it)."""
    wanted = list(range(1, workload.volumes + 1))
    if sm.volumes() == wanted:
        return None
    if sm.volumes() == wanted[:-1] and any(before < crash_event < after for before, after in workload.remounts):
        sm.mount_volume(wanted[-1])
        return None
    return f"volumes {sm.volumes()} mounted after restart, but the workload mounted v(1)..v({workload.volumes})"


def check_stores(mount: Any, expected: State) -> str | None:
    """None if one volume's stores after restart are those the ``expected`` files and named indexes of it need:
    sound, REGULAR, their large records whole."""
    volume, files = mount.volume, mount.files
    problems = files.check_large_records()
    if problems:
        return f"damaged large records after restart: {problems[:2]}"
    nodes = {stid.store: node for stid, node in volume.store_nodes().items()}
    stores = set(nodes) - {STORE_DIRECTORY, ROOT_INDEX}
    wanted = set()
    for fid in expected:
        wanted |= {fid.store} if name_rid(fid) in expected[fid] else {fid.store, files.file_info(fid).large}
    if stores != wanted:
        return f"stores in use {sorted(stores)}, but the files and named indexes need {sorted(wanted)}"
    problems = check_directory(volume, mount.directory, mount.root_index)
    if problems:
        return f"store directory after restart: {problems[:2]}"
    unlogged = [s for s in sorted(stores) if nodes[s].flags != StoreFlags.REGULAR]
    if unlogged:
        return f"stores {unlogged} are not REGULAR after restart"
    return None


def check_log_space(workload: Workload, sm: StorageManager, doubt_files: list[int]) -> str | None:
    """On a bounded log after restart: nothing reserved, and the log scavenged down to the checkpoint
    restart ended with (every page was written, and no transaction was active but those that came back
    in doubt, whose first files ``doubt_files`` restart had to keep: nothing older is needed)."""
    if workload.log_size is None:
        return None
    if sm.log_space.total or sm.log_space.reserved or sm.log_space.ends:
        return f"log space still reserved after restart: {sm.log_space.summary()}"
    files = all_log_file_numbers(sm.disk)
    master = read_master(sm.disk)
    if master is None or files[0] != min([master.master.file, *doubt_files]) or read_log_head(sm.disk) != files[0]:
        return (f"log files {files} (head {read_log_head(sm.disk)}) after restart, but its checkpoint "
                f"{master.master if master else None} and the in-doubt transactions' first files {doubt_files} "
                "need only those from the first of them on")
    return None


def torn_pages(disk: SimDisk, volumes: int = 1) -> set[tuple[int, int]]:
    """The pages (volume, page number) of the volumes that fail their check on ``disk`` (read directly,
    before any restart)."""
    bad, never_written = set(), bytes(PAGE_SIZE)
    for vid in range(1, volumes + 1):
        with disk.open(volume_file_name(vid)) as f:
            data = f.read_all()
        for number in range(len(data) // PAGE_SIZE):
            raw = data[number * PAGE_SIZE:(number + 1) * PAGE_SIZE]
            if raw == never_written:
                continue
            try:
                Page(bytearray(raw)).check(f"page {number}")
            except BadPageError:
                bad.add((vid, number))
    return bad


def check_repairs(sm: StorageManager, torn: set[tuple[int, int]]) -> str | None:
    """None if restart repaired the ``torn`` pages, each from an image at or after the redo LSN.

    A torn page left as it is must be one no store holds after restart (a freed page is formatted
    afresh before it is used again, never read).
    """
    report = sm.restart_report
    repaired = {r.pid.key for r in report.redo.pages_repaired}
    left = torn - repaired  # torn pages restart did not repair: none may be a store's (read only if there are some)
    if repaired - torn or left and left & {pid.key for volume in sm.mounts.volumes() for stid in volume.stores()
                                          for pid in volume.store_pages(stid)}:
        return f"pages {sorted(torn)} were torn on disk, but restart repaired pages {sorted(repaired)}"
    redo_lsn = report.analysis.redo_lsn
    for repair in report.redo.pages_repaired:
        if repair.scanned_from < redo_lsn or repair.image_lsn < redo_lsn:
            return f"{repair}: the log before the redo LSN {redo_lsn} was read"
    return None


def check_in_doubt(workload: Workload, sm: StorageManager, crash_event: int, committed: set[int],
                   prepares: set[int]) -> list[TxnModel] | str:
    """The prepared transactions that must be (and are) in doubt after the restart, given those whose
    prepare point the crash left (``prepares``), or what is wrong."""
    found = {d.gtid: d for d in sm.in_doubt()}
    doubt = []
    for t in workload.prepared:
        durable = t.xct.txn_id in prepares
        if t.xct.txn_id in committed or not durable:
            must, may = False, False
        elif t.aborted_at is not None:
            must, may = False, t.aborted_at > crash_event
        else:
            must, may = True, True
        if t.prepared_at <= crash_event and not durable:
            return f"T{t.xct.txn_id}'s prepare (synced at event {t.prepared_at}) was lost"
        if (t.gtid in found and not may) or (t.gtid not in found and must):
            state = "in doubt" if t.gtid in found else "not in doubt"
            return f"T{t.xct.txn_id} ({t.gtid!r}, {t.resolution or 'unresolved'}) is {state} after the restart"
        if t.gtid in found:
            doubt.append(t)
            held = [target for target in [*t.writes, *t.created, *t.destroyed]
                    if sm.xcts.locks.try_lock(_Probe(), target, "SH")]
            if held:
                return f"T{t.xct.txn_id} is in doubt but its locks on {held[:2]} were not taken again"
    if set(found) != {t.gtid for t in doubt}:
        return f"unknown transactions in doubt: {sorted(set(found) - {t.gtid for t in doubt})}"
    return doubt


@dataclass
class _Probe:
    """A transaction that only asks for locks (is the in-doubt one's lock held again?)."""

    txn_id: int = 1 << 40


def _difference(expected: State, got: State, k: int) -> str:
    if set(expected) != set(got):
        return f"after {k} commits: files {sorted(got)}, expected {sorted(expected)}"
    for fid in sorted(expected):
        if expected[fid] != got[fid]:
            missing = sorted(set(expected[fid]) - set(got[fid]))
            extra = sorted(set(got[fid]) - set(expected[fid]))
            wrong = sorted(r for r in set(expected[fid]) & set(got[fid]) if expected[fid][r] != got[fid][r])
            return f"after {k} commits, {fid}: missing {missing[:3]}, extra {extra[:3]}, different {wrong[:3]}"
    return "contents differ"


def check_point(workload: Workload, image: SimDisk, crash_event: int) -> Restarted:
    """Restart the crashed ``image`` and check what it holds (:func:`check_restarted`, :func:`check_repairs`);
    with what a crash during that restart needs (:func:`~minidb.crashtest.sweep.crash_during_restart`)."""
    try:
        torn = torn_pages(image, workload.volumes)
        present = surviving(workload, image)
        before = len(image.events)
        sm = open_sm(workload, image)
        restart = image.events[before:]  # what restart did (checking it may write more: resolving the in-doubt)
        problem = check_restarted(workload, sm, crash_event, present) or check_repairs(sm, torn)
    except MinidbError as e:
        return Restarted(f"restart failed: {type(e).__name__}: {e}")

    def recheck(crashed: SimDisk) -> str | None:
        """Restart an image crashed during that restart, and check it the same way."""
        try:
            torn_again = torn_pages(crashed, workload.volumes)  # read before restart: what the crash during restart tore
            again = open_sm(workload, crashed)
            return check_restarted(workload, again, crash_event, present) or check_repairs(again, torn_again)
        except MinidbError as e:
            return f"restart failed: {type(e).__name__}: {e}"

    return Restarted(problem, restart, recheck)


def expectations(workload: Workload, crash_event: int) -> tuple:
    """Everything :func:`check_point` reads from the crash's event index besides the image: which durable
    commits had returned, whether a remount was under way, and with prepared transactions the event itself
    (which prepares and aborts had returned, and the random choices that resolve the in-doubt ones)."""
    synced = tuple(c.synced_at is not None and c.synced_at <= crash_event for c in workload.commits)
    remounting = tuple(before < crash_event < after for before, after in workload.remounts)
    return synced, remounting, crash_event if workload.prepared else None


def crash_sweep(seed: int, ops: int, torn_variants: int = 1, random_variants: int = 1,
                restart_crashes: float = 0.25, volumes: int = 1) -> SweepResult:
    workload = run_workload(seed, ops, volumes)
    return sweep_crash_points(workload.disk, workload.formatted_at + 1, seed,
                              lambda image, event: check_point(workload, image, event),
                              workload.problems, torn_variants, random_variants, restart_crashes,
                              memo_key=lambda event: expectations(workload, event))
