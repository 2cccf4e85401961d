"""The page store's crash test: transactions, a crash at every write and fsync, restart, a model.

A seeded workload runs up to three interleaved transactions on a small
volume (512-byte pages, a buffer pool of a few frames, so pages are evicted
and written at any moment): files created and destroyed, small and large
records created, updated, appended to, truncated, read (some in quarks, whose
read locks go when they close) and freed, savepoints and partial rollbacks,
commits (durable or not) and aborts, checkpoints, page cleaning, single page
writes (which a crash may tear), and (on a generator of their own) named
indexes created and destroyed, a name taken tried again (it must be
refused). Some
transactions also load a LOAD file (unlogged records, forced at commit) or
use TMP files (unlogged records that no abort undoes: the model keeps them
outside any transaction); in some seeds, two-phase commit: transactions
prepared, some of them resolved (``commit_prepared``, ``abort_prepared``)
before the crash. A *model* follows along: the records each transaction
sees, and the committed state after each commit. In every other seed
records are small only up to 8 bytes (one chunk fits a slot) and index pages
list 3 pages, so that records grown and cut by whole pages
(:meth:`Runner.reshape`) pass through the large shapes, LARGE_0, LARGE_1 and
LARGE_2, and back (the check after restart compares every record's bytes and
checks the large records' pages, :meth:`FileManager.check_large_records`).

A quarter of the workloads run on a *bounded log* (:data:`LOG_SIZE` in
:data:`PARTITIONS` preallocated partitions, small enough that log files flip,
checkpoints scavenge old files and transactions run out of log space), a
third of those on a disk too small for all its spare partitions (a full
disk). A transaction refused with ``OutOfLogSpaceError`` is aborted (the
abort must succeed: an exception is a violation) and a checkpoint is taken;
:meth:`Runner.fill` has a transaction write big records until the log
refuses it.

Transactions take their locks through :class:`ScriptLocking`, a lock table
that never waits: an operation whose lock another transaction holds is
simply not tried (the workload is single-threaded; conflicts and deadlocks
are the lock manager's tests). It answers the allocation protocol, and
while the workload runs every ``alloc_pages_in_ext`` is checked: a page
allocated by a transaction still in flight (even if rolled back since) must
never be allocated by another; a breach is reported as a violation.

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
4. the volume's maps must be consistent, the store directory and the root
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

Anything else, including an exception, is a violation.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from minidb.errors import MinidbError
from minidb.io import SimDisk
from minidb.io.sweep import SweepResult, crash_during_restart, sweep_crash_points
from minidb.log.files import all_log_file_numbers
from minidb.log.head import read_log_head
from minidb.log.lsn import LSN
from minidb.log.manager import LogManager
from minidb.pagestore.directory import check_directory
from minidb.pagestore.errors import BadPageError, BadRequestError, OutOfLogSpaceError, RecordWontFitError, VolumeFullError
from minidb.pagestore.restart.master import read_master
from minidb.pagestore.volume.volfile import volume_file_name
from minidb.pagestore.files.file import Policy
from minidb.pagestore.ids import ExtentId, RecordId, StoreId
from minidb.pagestore.lock import LockId
from minidb.pagestore.pages.page import Page, StoreFlags
from minidb.pagestore.pages.rectag import chunk_size
from minidb.pagestore.sm import StorageManager
from minidb.pagestore.transactions.locking import NoLocking
from minidb.pagestore.transactions.xct import XctState
from minidb.pagestore.transactions.xctmgr import XctError
from minidb.pagestore.volume.stores import STORE_DIRECTORY, ROOT_INDEX

PAGE_SIZE, NUM_PAGES, EXT_SZ = 512, 128, 4
DATA_PAGE = chunk_size(PAGE_SIZE)  # bytes of a large record's body on one data page
FILE_MAX = 6000
MAX_ACTIVE = 3
NAMING_RATE = 0.12  # of the steps: a named index created or destroyed first
LARGE_SHAPES = {"max_small_rec": 8, "index_fanout": 3}  # LARGE_1 holds 3 pages, LARGE_2 9: cheap to reach
RESTART_FRAMES = 12  # restart with a pool larger than the workload's: fewer evictions, a quicker sweep
PARTITIONS, PARTITION = 4, 2400
LOG_SIZE = PARTITIONS * PARTITION  # a bounded log: about one workload's worth


def _clock() -> float:
    return 1_700_000_000.0


VOLUME = volume_file_name(1)


class WouldBlock(Exception):
    """The workload's lock table refuses to wait: the operation is not tried."""


class ScriptLocking:
    """Record and store locks for a single-threaded workload: conflicts raise instead of waiting.

    A record lock implies an intention lock on its store (the hierarchy of
    Shore's lock manager, reduced to what the workload needs: IS, IX, SH, EX).

    Page and extent locks are recorded and never refused (the records keep the
    workload's transactions apart on them), so that the allocation protocol
    sees them: a page or free extent another transaction has locked is
    skipped (``held_by_other``), an extent is freed at commit only if nobody
    else holds it and its "has pages" bit is clear. Quarks release the record,
    store and page locks taken inside them; extent locks stay.
    """

    COMPATIBLE = {"IS": {"IS", "IX", "SH"}, "IX": {"IS", "IX"}, "SH": {"IS", "SH"}, "EX": set()}

    def __init__(self) -> None:
        self.records: dict[RecordId, tuple[int, str]] = {}
        self.stores: dict[StoreId, dict[int, set[str]]] = {}  # store -> tid -> modes held
        self.others: dict[LockId, dict[int, set[str]]] = {}  # pages and extents: lock id -> tid -> modes
        self.has_pages: dict[LockId, bool] = {}  # the extent locks' "has pages" bits
        self.quarks: dict[int, list[tuple]] = {}  # tid -> what it held when each open quark opened
        self.quarks_opened = 0

    def _store_ok(self, tid: int, stid: StoreId, mode: str) -> bool:
        return all(held in self.COMPATIBLE[mode] for other, modes in self.stores.get(stid, {}).items()
                   if other != tid for held in modes)

    def _grant(self, xct: Any, target: Any, mode: str) -> bool:
        tid = xct.txn_id
        if isinstance(target, RecordId):
            stid, intent = StoreId(target.vol, target.store), ("IX" if mode == "EX" else "IS")
            held = self.records.get(target)
            if not self._store_ok(tid, stid, intent):
                return False
            if held is not None and held[0] != tid and (mode == "EX" or held[1] == "EX"):
                return False
            if held is None or held[0] != tid or mode == "EX":
                self.records[target] = (tid, mode)
            self.stores.setdefault(stid, {}).setdefault(tid, set()).add(intent)
            return True
        if isinstance(target, StoreId):
            if not self._store_ok(tid, target, mode):
                return False
            self.stores.setdefault(target, {}).setdefault(tid, set()).add(mode)
            return True
        self.others.setdefault(LockId.of(target), {}).setdefault(tid, set()).add(mode)
        return True

    def lock(self, xct: Any, target: Any, mode: str, duration: str = "long", timeout: float | None = None) -> None:
        if not self._grant(xct, target, mode):
            raise WouldBlock(f"T{xct.txn_id}: {target} {mode}")

    def try_lock(self, xct: Any, target: Any, mode: str, duration: str = "long") -> bool:
        return self._grant(xct, target, mode)

    def release_all(self, xct: Any) -> None:
        tid = xct.txn_id
        self.records = {rid: held for rid, held in self.records.items() if held[0] != tid}
        for holders in self.stores.values():
            holders.pop(tid, None)
        for lock_id in list(self.others):
            self.others[lock_id].pop(tid, None)
            if not self.others[lock_id]:
                del self.others[lock_id]
                self.has_pages.pop(lock_id, None)
        self.quarks.pop(tid, None)

    def held_by_other(self, xct: Any, target: Any) -> bool:
        return any(tid != xct.txn_id for tid in self.others.get(LockId.of(target), {}))

    def mark_extent(self, xct: Any, xid: ExtentId, has_pages: bool) -> None:
        self.has_pages[LockId.of(xid)] = has_pages

    def upgrade_extent_to_free(self, xct: Any, xid: ExtentId) -> bool:
        lock_id = LockId.of(xid)
        if self.held_by_other(xct, xid) or self.has_pages.get(lock_id, False):
            return False
        self.others.setdefault(lock_id, {}).setdefault(xct.txn_id, set()).add("EX")
        return True

    def _holdings(self, tid: int) -> tuple:
        return ({rid for rid, held in self.records.items() if held[0] == tid},
                {k: set(v[tid]) for k, v in self.stores.items() if tid in v},
                {k: set(v[tid]) for k, v in self.others.items() if tid in v and k.code != "x"})

    def open_quark(self, xct: Any) -> int:
        stack = self.quarks.setdefault(xct.txn_id, [])
        stack.append(self._holdings(xct.txn_id))
        self.quarks_opened += 1
        return len(stack)

    def close_quark(self, xct: Any) -> int:
        tid = xct.txn_id
        records, stores, others = self.quarks[tid].pop()
        now = self._holdings(tid)
        for rid in now[0] - records:
            del self.records[rid]
        for table, before, held in ((self.stores, stores, now[1]), (self.others, others, now[2])):
            for key in held:
                if key in before:
                    table[key][tid] = before[key]
                else:
                    del table[key][tid]
        return len(now[0] - records) + sum(len(h - stores.get(k, set())) for k, h in now[1].items())

    # two-phase commit: a store held in SH and IX is logged as SIX
    STRENGTH = ["IS", "IX", "SH", "EX"]

    def held(self, xct: Any) -> dict[LockId, str]:
        tid = xct.txn_id
        held = {LockId.of(rid): mode for rid, (owner, mode) in self.records.items() if owner == tid}
        for stid, holders in self.stores.items():
            modes = holders.get(tid)
            if modes:
                held[LockId.of(stid)] = "SIX" if {"SH", "IX"} <= modes else max(modes, key=self.STRENGTH.index)
        for lock_id, holders in self.others.items():  # pages and extents (the allocation protocol)
            modes = holders.get(tid)
            if modes:
                held[lock_id] = max(modes, key=self.STRENGTH.index)
        return held

    def detach(self, xct: Any) -> None:
        return None

    def reacquire(self, xct: Any, locks: dict[LockId, str]) -> None:
        """Restart: the table as it was for ``xct`` (prepared transactions held these together)."""
        for lid, mode in locks.items():
            if lid.code == "r":
                self.records[RecordId(*lid.numbers)] = (xct.txn_id, mode)
            elif lid.code == "s":
                modes = {"SH", "IX"} if mode == "SIX" else {mode}
                self.stores.setdefault(StoreId(*lid.numbers), {}).setdefault(xct.txn_id, set()).update(modes)
            else:
                self.others.setdefault(lid, {}).setdefault(xct.txn_id, set()).add(mode)


State = dict[StoreId, dict[RecordId, tuple[bytes, bytes]]]


@dataclass
class TxnModel:
    """What one transaction has done, as the model sees it."""

    xct: Any
    writes: dict[RecordId, tuple[bytes, bytes] | None] = field(default_factory=dict)
    created: set[StoreId] = field(default_factory=set)
    destroyed: set[StoreId] = field(default_factory=set)
    savepoints: list[tuple[Any, tuple]] = field(default_factory=list)
    tmp_created: set[StoreId] = field(default_factory=set)  # TMP files it created (gone if it aborts)
    gtid: bytes = b""  # once prepared
    prepared_lsn: LSN | None = None  # its xct_prepare_fi
    prepared_at: int | None = None  # index of the last disk event when prepare returned (it forces)
    aborted_at: int | None = None  # ... when abort_prepared returned (it forces)
    resolution: str = ""  # "commit" or "abort", once resolved before the crash

    def snapshot(self) -> tuple:
        return dict(self.writes), set(self.created), set(self.destroyed), set(self.tmp_created)

    def restore(self, snap: tuple) -> None:
        self.writes, self.created, self.destroyed = dict(snap[0]), set(snap[1]), set(snap[2])
        self.tmp_created = set(snap[3])


@dataclass(frozen=True)
class Commit:
    tid: int
    lsn: LSN  # the commit point (xct_end or xct_freeing_space)
    synced_at: int | None  # index of the last disk event when a durable commit returned


@dataclass
class Workload:
    disk: SimDisk
    frames: int
    buffer_size: int
    formatted_at: int
    commits: list[Commit]
    states: list[State]  # states[k]: the committed state after the first k commits
    problems: list[str] = field(default_factory=list)  # broken while the workload ran (allocation protocol)
    prepared: list[TxnModel] = field(default_factory=list)  # every transaction prepared, in order
    log_size: int | None = None  # a bounded log (scavenged at checkpoints)
    refused: int = 0  # operations refused for log space
    files_removed: int = 0  # log files scavenged during the workload
    reshapes: set[tuple[str, str]] = field(default_factory=set)  # (shape before, shape after) of each reshape


class Runner:
    """Runs one seeded workload against a storage manager and its model."""

    def __init__(self, seed: int, ops: int):
        self.rng = random.Random(seed)
        self.ops = ops
        self.frames = self.rng.choice([3, 4, 6])
        self.buffer_size = self.rng.choice([512, 2048, 8192])
        space = random.Random(seed * 7 + 3)  # its own draws: the other workloads stay as they were
        self.log_size = LOG_SIZE if space.random() < 0.25 else None
        capacity = None
        if self.log_size is not None and space.random() < 0.33:  # a full disk: room for only some spares
            capacity = NUM_PAGES * PAGE_SIZE + 256 + LOG_SIZE - space.randint(1, PARTITIONS - 2) * PARTITION
        self.disk = SimDisk(f"crashtest-pagestore-{seed}")
        self.locking = ScriptLocking()
        self.refused = 0
        self.shapes = seed % 2 == 0  # not drawn from the RNG: the other seeds run the workloads they always ran
        self.sm = StorageManager.format(self.disk, num_pages=NUM_PAGES, ext_sz=EXT_SZ, page_size=PAGE_SIZE,
                                        frames=self.frames, locking=self.locking, clock=_clock, file_max=FILE_MAX,
                                        buffer_size=self.buffer_size, log_size=self.log_size, partitions=PARTITIONS,
                                        **(LARGE_SHAPES if self.shapes else {}))
        self.disk.capacity = capacity  # the disk fills up (with other data) once formatted
        self.reshapes: set[tuple[str, str]] = set()
        self.formatted_at = len(self.disk.events) - 1
        self.committed: State = {}
        self.states: list[State] = [{}]
        self.commits: list[Commit] = []
        self.active: list[TxnModel] = []
        self.allocated: dict[int, Any] = {}  # page number -> the transaction that last allocated it
        self.problems: list[str] = []
        self.sm.log.add_listener(self.check_allocation)
        self.tmp: dict[StoreId, dict[RecordId, tuple[bytes, bytes]]] = {}  # TMP files' records, untransacted
        self.tmp_committed: set[StoreId] = set()
        # Two-phase commit draws from its own generator: seeds without it run the workload they always ran.
        self.two_phase = random.Random((seed << 8) | 0x2C)
        self.prepare_rate = self.two_phase.choice([0.0, 0.0, 0.3, 0.6])  # of the transactions' ends
        self.prepared: list[TxnModel] = []
        self.in_doubt: list[TxnModel] = []
        self.naming = random.Random((seed << 8) | 0x1D)  # named indexes, on their own generator

    # -- the model's view ------------------------------------------------------------------------
    def files_seen(self, t: TxnModel) -> list[StoreId]:
        files = (set(self.committed) | t.created) - t.destroyed
        return sorted(files - set(self.names_seen(t).values()))

    def names_seen(self, t: TxnModel) -> dict[str, StoreId]:
        """The named indexes ``t`` sees: name -> index."""
        stores = (set(self.committed) | t.created) - t.destroyed
        return {value[0].decode(): fid for fid in stores
                for value in [self.records_seen(t, fid).get(name_rid(fid))] if value is not None}

    def name_step(self, t: TxnModel) -> None:
        """Create or destroy a named index (or try a name taken, which must be refused); a name another
        transaction in flight created or destroyed is left alone: the root index's key-value locks would
        make this single-threaded workload wait, and :class:`ScriptLocking` records them without refusing
        (tests/pagestore/test_directory.py covers those waits with threads)."""
        seen = self.names_seen(t)
        others = [o for o in self.active + self.in_doubt if o is not t]
        busy = {v[0].decode() for o in others for rid, v in o.writes.items() if rid.page == 0 and v is not None}
        busy |= {name for name, fid in self.names_seen(TxnModel(None)).items()
                 if any(fid in o.destroyed for o in others)}
        name = f"ix{self.naming.randrange(4)}"
        if name in busy:
            return
        if name not in seen:
            ix = self.sm.create_index(t.xct, "u4", name=name)
            t.created.add(ix)
            t.writes[name_rid(ix)] = (name.encode(), b"")
        elif self.naming.random() < 0.7:
            self.sm.destroy_index(t.xct, seen[name])
            t.destroyed.add(seen[name])
        else:
            try:
                self.sm.create_index(t.xct, "u4", name=name)
            except BadRequestError:
                return
            self.problems.append(f"T{t.xct.txn_id}: index name {name!r}, taken, was given again")

    def records_seen(self, t: TxnModel, fid: StoreId) -> dict[RecordId, tuple[bytes, bytes]]:
        seen = dict(self.committed.get(fid, {}))
        for rid, value in t.writes.items():
            if StoreId(rid.vol, rid.store) != fid:
                continue
            if value is None:
                seen.pop(rid, None)
            else:
                seen[rid] = value
        return seen

    # -- operations ----------------------------------------------------------------------------------
    def run(self) -> Workload:
        for _ in range(self.ops):
            roll = self.rng.random()
            if roll < 0.04:
                self.checkpoint()
            elif roll < 0.08:
                self.sm.bp.clean()
            elif roll < 0.10:
                self.sm.log.sync()
            elif roll < 0.13:
                self.write_page()
            elif roll < 0.20 and self.in_doubt:
                self.resolve(self.two_phase.choice(self.in_doubt))
            elif not self.active or (len(self.active) < MAX_ACTIVE and roll < 0.22):
                self.active.append(TxnModel(self.sm.begin()))
            else:
                self.step(self.rng.choice(self.active))
        self.sm.log.flush()
        return Workload(self.disk, self.frames, self.buffer_size, self.formatted_at, self.commits, self.states,
                        self.problems, self.prepared, self.log_size, self.refused,
                        self.sm.log.stats["nFilesRemoved"], self.reshapes)

    def check_allocation(self, lsn: LSN, entry_type: Any, vlsn: int | None) -> None:
        """The allocation protocol's guarantee: a page allocated by a transaction still in flight (even one
        that rolled the allocation back since) is never allocated by another."""
        if entry_type.name != "alloc_pages_in_ext":
            return
        entry = self.sm.log.read(lsn)
        xct = self.sm.xcts.get(entry.txn_id) if entry.txn_id else None
        for index in range(EXT_SZ):
            if not entry.values["pmap"] >> index & 1:
                continue
            page = entry.values["ext"] * EXT_SZ + index
            other = self.allocated.get(page)
            if other is not None and other is not xct and other.state != XctState.ENDED:
                self.problems.append(f"page {page} allocated by T{entry.txn_id} while T{other.txn_id}, which "
                                     f"allocated it, is still in flight")
            self.allocated[page] = xct

    def checkpoint(self) -> None:
        try:
            self.sm.checkpoint()  # scavenges on a bounded log
        except OutOfLogSpaceError:
            self.refused += 1  # it would eat into the reserve kept for restart's checkpoint

    def out_of_log_space(self, t: TxnModel) -> None:
        """``t`` was refused log space (its operation may be half done): abort it, then checkpoint."""
        self.refused += 1
        self.sm.abort(t.xct)  # must succeed: its rollback has its space reserved
        self.active.remove(t)
        self.checkpoint()

    def fill(self, t: TxnModel, fid: StoreId) -> None:
        """Write big records in ``t`` until the log refuses one (on a bounded log) or four were written."""
        for _ in range(4):
            body = bytes(self.rng.randrange(256) for _ in range(200))
            t.writes[self.sm.create_rec(t.xct, fid, body)] = (b"", body)

    def write_page(self) -> None:
        """Write one dirty page alone (a write the crash may tear): one the dirty page table lists, or a page
        of a loading store (outside the table, but written all the same); its next change logs a new image."""
        bp = self.sm.bp
        dirty = sorted(set(bp.dirty_page_table()) | set(bp.dirty_pages()))
        if dirty:
            chosen = self.rng.choice(dirty)
            self.sm.bp.clean(lambda frame: frame.pid == chosen)

    def step(self, t: TxnModel) -> None:
        if self.naming.random() < NAMING_RATE:  # its own generator: the other draws stay as they were
            self.guarded(t, self.name_step)
            if t not in self.active:
                return  # aborted for log space
        files = self.files_seen(t)
        roll = self.rng.random()
        special = roll < 0.04  # store properties; the other operations keep their shares of the rest
        if not special:
            roll = (roll - 0.04) / 0.96
        self.guarded(t, lambda t: self.operation(t, files, roll, special))

    def guarded(self, t: TxnModel, op: Any) -> None:
        """Run ``op(t)``; an operation refused (a lock, log space, a full page or volume) changed nothing."""
        try:
            op(t)
        except WouldBlock:
            pass
        except OutOfLogSpaceError:
            self.out_of_log_space(t)
        except (RecordWontFitError, VolumeFullError):
            pass  # the operation changed nothing (it rolls back what it did)

    def operation(self, t: TxnModel, files: list[StoreId], roll: float, special: bool) -> None:
        if special and roll < 0.02:
            self.tmp_step(t)
        elif special:
            self.load(t)
        elif roll < 0.08 or not files:
            fid = self.sm.create_file(t.xct)
            t.created.add(fid)
        elif roll < 0.40:
            self.create(t, self.rng.choice(files))
        elif roll < 0.62 and self.shapes and self.rng.random() < 0.7:
            self.reshape(t, self.rng.choice(files))
        elif roll < 0.62:
            self.change(t, self.rng.choice(files))
        elif roll < 0.68:
            self.read(t, files)
        elif roll < 0.72:
            self.destroy(t, self.rng.choice(files))
        elif roll < 0.77:
            t.savepoints.append((self.sm.save_point(t.xct), t.snapshot()))
        elif roll < 0.81 and t.savepoints:
            index = self.rng.randrange(len(t.savepoints))
            point, snap = t.savepoints[index]
            try:
                self.sm.rollback_to(t.xct, point)
            except XctError:
                return  # unlogged changes to its LOAD file since: refused, nothing changed
            dropped = t.tmp_created - snap[3]
            t.restore(snap)
            self.forget_tmp(dropped)
            del t.savepoints[index + 1:]  # later savepoints are gone; this one stays
        elif roll < 0.93 and self.preparable(t) and self.two_phase.random() < self.prepare_rate:
            self.prepare(t)
        elif roll < 0.93:
            self.commit(t, durable=self.rng.random() < 0.85)
        elif roll < 0.96 and self.log_size is not None:
            self.fill(t, self.rng.choice(files))
        else:
            self.sm.abort(t.xct)
            self.active.remove(t)
            self.forget_tmp(t.tmp_created)

    def read(self, t: TxnModel, files: list[StoreId]) -> None:
        """Read a record; or, in a quark, a few (their locks go when it closes: others may then write them)."""
        if self.rng.random() < 0.5:
            rid = self.pick(t, self.rng.choice(files))
            if rid is not None:
                self.sm.read_rec(t.xct, rid)
            return
        with self.sm.quark(t.xct):
            for _ in range(self.rng.randint(1, 3)):
                rid = self.pick(t, self.rng.choice(files))
                if rid is not None:
                    self.sm.read_rec(t.xct, rid)

    def pick(self, t: TxnModel, fid: StoreId) -> RecordId | None:
        seen = self.records_seen(t, fid)
        if not seen:
            return None
        return self.rng.choice(sorted(seen))

    def body(self) -> bytes:
        if self.rng.random() < 0.2:
            size = self.rng.randint(150, 700)
        else:
            size = self.rng.randint(0, 8 if self.shapes else 50)
        return bytes(self.rng.randrange(256) for _ in range(size))

    def create(self, t: TxnModel, fid: StoreId) -> None:
        hdr = bytes(self.rng.randrange(256) for _ in range(self.rng.randint(0, 4)))
        body = self.body()
        policy = self.rng.choice([Policy.DEFAULT, Policy.APPEND, Policy.CACHE | Policy.COMPACT])
        rid = self.sm.create_rec(t.xct, fid, body, hdr, policy)
        t.writes[rid] = (hdr, body)

    def change(self, t: TxnModel, fid: StoreId) -> None:
        rid = self.pick(t, fid)
        if rid is None:
            return
        hdr, body = self.records_seen(t, fid)[rid]
        roll = self.rng.random()
        if roll < 0.3 and body:
            start = self.rng.randrange(len(body))
            data = bytes(self.rng.randrange(256) for _ in range(self.rng.randint(1, len(body) - start)))
            self.sm.update_rec(t.xct, rid, start, data)
            body = body[:start] + data + body[start + len(data):]
        elif roll < 0.55:
            data = self.body()[:self.rng.choice([10, 60, 400])]
            self.sm.append_rec(t.xct, rid, data)
            body = body + data
        elif roll < 0.7 and body:
            amount = self.rng.randint(1, len(body))
            self.sm.truncate_rec(t.xct, rid, amount)
            body = body[:len(body) - amount]
        else:
            self.sm.free_rec(t.xct, rid)
            t.writes[rid] = None
            return
        t.writes[rid] = (hdr, body)

    def reshape(self, t: TxnModel, fid: StoreId) -> None:
        """Grow a record by pages or cut it, one to three times: it changes shape (small, LARGE_0, 1, 2)."""
        rid = self.pick(t, fid)
        if rid is None:
            return
        hdr, body = self.records_seen(t, fid)[rid]
        for _ in range(self.rng.randint(1, 3)):
            before = self.sm.read_rec(t.xct, rid).flags.name  # locks the record first, as the change will
            if self.rng.random() < 0.6 or not body:
                size = self.rng.choice([1, 2, 3]) * DATA_PAGE + self.rng.randint(-40, 40)
                data = bytes(self.rng.randrange(256) for _ in range(size))
                self.sm.append_rec(t.xct, rid, data)
                body = body + data
            else:
                keep = self.rng.randint(0, len(body))
                if self.rng.random() < 0.3:
                    keep = min(keep, self.rng.randint(0, 8))  # small again
                self.sm.truncate_rec(t.xct, rid, len(body) - keep)
                body = body[:keep]
            t.writes[rid] = (hdr, body)
            self.reshapes.add((before, self.sm.read_rec(t.xct, rid).flags.name))

    def load(self, t: TxnModel) -> None:
        """A LOAD file filled at once (its records unlogged), often committed at once: the model sees an
        ordinary new file."""
        fid = self.sm.create_file(t.xct, "load")
        t.created.add(fid)
        for _ in range(self.rng.randint(1, 4)):
            self.create(t, fid)
        if self.rng.random() < 0.6:
            self.commit(t, durable=self.rng.random() < 0.85)

    def tmp_step(self, t: TxnModel) -> None:
        """Create a TMP file, or create, update or free one of a TMP file's records (no abort undoes them)."""
        files = sorted(self.tmp_committed | t.tmp_created)
        if not files or self.rng.random() < 0.2:
            fid = self.sm.create_file(t.xct, "tmp")
            t.tmp_created.add(fid)
            self.tmp[fid] = {}
            return
        fid = self.rng.choice(files)
        records = self.tmp[fid]
        roll = self.rng.random()
        if roll < 0.6 or not records:
            hdr, body = b"", self.body()
            records[self.sm.create_rec(t.xct, fid, body, hdr)] = (hdr, body)
            return
        rid = self.rng.choice(sorted(records))
        hdr, body = records[rid]
        if roll < 0.8 and body:
            data = bytes(self.rng.randrange(256) for _ in range(self.rng.randint(1, len(body))))
            self.sm.update_rec(t.xct, rid, 0, data)
            records[rid] = (hdr, data + body[len(data):])
        else:
            self.sm.free_rec(t.xct, rid)
            del records[rid]

    def forget_tmp(self, fids: set[StoreId]) -> None:
        """TMP files whose creation was rolled back are gone."""
        for fid in fids:
            self.tmp.pop(fid, None)

    def destroy(self, t: TxnModel, fid: StoreId) -> None:
        self.sm.destroy_file(t.xct, fid)
        t.destroyed.add(fid)

    def commit(self, t: TxnModel, durable: bool) -> None:
        if t.gtid:
            lsn = self.sm.commit_prepared(t.gtid, durable=durable)
            self.in_doubt.remove(t)
            t.resolution = "commit"
        else:
            lsn = self.sm.commit(t.xct, durable=durable)
            self.active.remove(t)
        self.tmp_committed |= t.tmp_created
        if lsn.is_null:
            return  # read-only: nothing logged, nothing to survive
        self.committed = applied(self.committed, t)
        self.states.append(self.committed)
        self.commits.append(Commit(t.xct.txn_id, lsn, len(self.disk.events) - 1 if durable else None))

    # -- two-phase commit ----------------------------------------------------------------------------
    @staticmethod
    def preparable(t: TxnModel) -> bool:
        """Whether ``t`` may be prepared: not when it loaded a LOAD file or created a TMP file (refused)."""
        return not (t.xct.load_stores or t.xct.created_tmp)

    def prepare(self, t: TxnModel) -> None:
        gtid = b"gtid-%d" % t.xct.txn_id
        t.prepared_lsn = self.sm.prepare(t.xct, gtid)
        t.gtid, t.prepared_at = gtid, len(self.disk.events) - 1
        self.active.remove(t)
        self.prepared.append(t)
        self.in_doubt.append(t)

    def resolve(self, t: TxnModel) -> None:
        if self.two_phase.random() < 0.5:
            self.commit(t, durable=self.two_phase.random() < 0.85)
        else:
            self.sm.abort_prepared(t.gtid)
            self.in_doubt.remove(t)
            self.forget_tmp(t.tmp_created)
            t.resolution, t.aborted_at = "abort", len(self.disk.events) - 1


def name_rid(ix: StoreId) -> RecordId:
    """Where the model keeps a named index's name: a record id no file has (page 0 is the volume header)."""
    return RecordId(ix.vol, ix.store, 0, 0)


def observed(sm: StorageManager) -> State:
    """The files' records and the named indexes, as the model holds them."""
    state = sm.contents()
    for name, ix in sm.index_names().items():
        state[ix] = {name_rid(ix): (name.encode(), b"")}
    return state


def applied(committed: State, t: TxnModel) -> State:
    """The committed state once ``t`` commits."""
    state = {fid: dict(recs) for fid, recs in committed.items()}
    for fid in t.created:
        state.setdefault(fid, {})
    for rid, value in t.writes.items():
        fid = StoreId(rid.vol, rid.store)
        if fid in t.destroyed:
            continue
        if value is None:
            state.get(fid, {}).pop(rid, None)
        else:
            state.setdefault(fid, {})[rid] = value
    for fid in t.destroyed:
        state.pop(fid, None)
    return state


def run_workload(seed: int, ops: int) -> Workload:
    return Runner(seed, ops).run()


def open_sm(workload: Workload, disk: SimDisk) -> StorageManager:
    return StorageManager.open(disk, frames=RESTART_FRAMES, clock=_clock, file_max=FILE_MAX,
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
                    present: tuple[list[bool], set[int]], resolve: random.Random | None = None) -> str | None:
    """None if ``sm`` (just restarted after a crash after ``crash_event``, which left the commits
    ``present``) holds exactly what it must.

    In-doubt transactions are resolved on the way (commit or abort, chosen by ``resolve``)."""
    present, prepares = present
    doubt_files: list[int] = []
    k = sum(present)
    if present != [True] * k + [False] * (len(present) - k):
        return f"the surviving commits are not a prefix of the commit order: {present}"
    for commit, ok in zip(workload.commits, present):
        if not ok and commit.synced_at is not None and commit.synced_at <= crash_event:
            return f"T{commit.tid}'s durable commit (synced at event {commit.synced_at}) was lost"
    expected = workload.states[k]
    if workload.prepared:
        committed = {c.tid for c, ok in zip(workload.commits, present) if ok}
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
        pick = resolve or random.Random(crash_event)
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
    problems = sm.files.check_large_records()
    if problems:
        return f"damaged large records after restart: {problems[:2]}"
    if sm.xcts.active():
        return f"transactions still active after restart: {sm.xcts.active()}"
    stores = {s.store for s in sm.volume.stores()} - {STORE_DIRECTORY, ROOT_INDEX}
    wanted = set()
    for fid in expected:
        wanted |= {fid.store} if name_rid(fid) in expected[fid] else {fid.store, sm.files.file_info(fid).large}
    if stores != wanted:
        return f"stores in use {sorted(stores)}, but the files and named indexes need {sorted(wanted)}"
    problems = check_directory(sm.volume, sm.directory, sm.root_index)
    if problems:
        return f"store directory after restart: {problems[:2]}"
    unlogged = [s for s in sorted(stores) if sm.volume.store_node(s).flags != StoreFlags.REGULAR]
    if unlogged:
        return f"stores {unlogged} are not REGULAR after restart"
    return check_log_space(workload, sm, doubt_files)


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


def torn_pages(disk: SimDisk) -> set[int]:
    """The pages of the volume that fail their check on ``disk`` (read directly, before any restart)."""
    with disk.open(VOLUME) as f:
        data = f.read_all()
    bad, never_written = set(), bytes(PAGE_SIZE)
    for number in range(len(data) // PAGE_SIZE):
        raw = data[number * PAGE_SIZE:(number + 1) * PAGE_SIZE]
        if raw == never_written:
            continue
        try:
            Page(bytearray(raw)).check(f"page {number}")
        except BadPageError:
            bad.add(number)
    return bad


def check_repairs(sm: StorageManager, torn: set[int]) -> str | None:
    """None if restart repaired the ``torn`` pages, each from an image at or after the redo LSN.

    A torn page left as it is must be one no store holds after restart (a freed page is formatted
    afresh before it is used again, never read).
    """
    report = sm.restart_report
    repaired = {r.pid.page for r in report.redo.pages_repaired}
    in_use = {pid.page for stid in sm.volume.stores() for pid in sm.volume.store_pages(stid)}
    if repaired - torn or (torn - repaired) & in_use:
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


def check_point(workload: Workload, image: SimDisk, crash_event: int, restart_crash: random.Random | None = None
                ) -> str | None:
    twin = image.clone() if restart_crash is not None else None
    try:
        torn = torn_pages(image)
        present = surviving(workload, image)
        before = len(image.events)
        sm = open_sm(workload, image)
        restart_ops = sum(1 for e in image.events[before:] if e.kind in ("write", "truncate", "fsync"))
        problem = check_restarted(workload, sm, crash_event, present, restart_crash) or check_repairs(sm, torn)
        if problem is not None or twin is None:
            return problem
        if restart_ops:
            torn_again: set[int] = set()

            def reopen(disk: SimDisk) -> StorageManager:
                torn_again.clear()
                torn_again.update(torn_pages(disk))  # read before each restart: what the crash during restart tore
                return open_sm(workload, disk)

            return crash_during_restart(twin, restart_ops, restart_crash, reopen,
                                        lambda sm: check_restarted(workload, sm, crash_event, present)
                                        or check_repairs(sm, torn_again))
    except MinidbError as e:
        return f"restart failed: {type(e).__name__}: {e}"
    return None


def crash_sweep(seed: int, ops: int, torn_variants: int = 1, random_variants: int = 1,
                restart_crashes: float = 0.25) -> SweepResult:
    workload = run_workload(seed, ops)
    return sweep_crash_points(workload.disk, workload.formatted_at + 1, seed,
                              lambda image, event, nested: check_point(workload, image, event, nested),
                              workload.problems, torn_variants, random_variants, restart_crashes)
