"""The page store's crash-test workload: up to three transactions on a small volume, and a model of them.

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

Besides the checkpoints the steps draw, the workload takes one once
:data:`CHKPT_BYTES` of log were written since the last (after the step that
passed it; drawn from no generator, so the steps stay as they were), first
writing the pages dirty since before the previous checkpoint. So a restart's
analysis reads at most an interval, the largest step and a checkpoint of
log, and its redo about two intervals, however long the workload ran. And
once :data:`TXN_BYTES` (four intervals) of log were written since a
transaction began, the workload ends it after that step (commits it,
durably or not, or resolves it if prepared, drawn on a generator of its
own): restart's undo walks each loser back to its first entry, and the
check resolves each in-doubt one, so they too read at most that and a
step. A crash point costs what its recovery interval costs, not the
history. The limit is far enough that the suite's short workloads run
almost as they did (transactions still live through several checkpoints;
the same shapes, commits, aborts and prepared transactions are reached).

Transactions take their locks through
:class:`~minidb.crashtest.script_locking.ScriptLocking`, a lock table
that never waits: an operation whose lock another transaction holds is
simply not tried (the workload is single-threaded; conflicts and deadlocks
are the lock manager's tests). It answers the allocation protocol, and
while the workload runs every ``alloc_pages_in_ext`` is checked: a page
allocated by a transaction still in flight (even if rolled back since) must
never be allocated by another; a breach is reported as a violation.

With ``volumes=2`` (``minidb crashtest pagestore --volumes 2``) the page
store gets a second volume before the workload starts
(:meth:`~minidb.pagestore.sm.StorageManager.add_volume`), and each new file
(and LOAD file) goes to a volume drawn on a generator of its own (so the
one-volume seeds run the workloads they always ran): transactions change
both volumes, free space on both at commit, roll back on both. Now and then
the second volume is dismounted and mounted again at once (refused while it
has active work, which is then simply not done). The model keeps the
records of the files of both volumes.

:mod:`minidb.crashtest.pagestore` crashes the workload at every write and
fsync and checks each restart against the model.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from minidb.crashtest.script_locking import ScriptLocking, WouldBlock
from minidb.io import SimDisk
from minidb.log import LSN
from minidb.pagestore import (
    BadRequestError,
    OutOfLogSpaceError,
    Policy,
    RecordId,
    RecordWontFitError,
    StorageManager,
    StoreId,
    VolumeFullError,
    XctState,
)
from minidb.pagestore.pages.rectag import chunk_size
from minidb.pagestore.transactions.xctmgr import XctError

PAGE_SIZE, NUM_PAGES, EXT_SZ = 512, 128, 4
DATA_PAGE = chunk_size(PAGE_SIZE)  # bytes of a large record's body on one data page
FILE_MAX = 6000
MAX_ACTIVE = 3
NAMING_RATE = 0.12  # of the steps: a named index created or destroyed first
LARGE_SHAPES = {"max_small_rec": 8, "index_fanout": 3}  # LARGE_1 holds 3 pages, LARGE_2 9: cheap to reach
PARTITIONS, PARTITION = 4, 2400
LOG_SIZE = PARTITIONS * PARTITION  # a bounded log: about one workload's worth
CHKPT_BYTES = 3000  # a checkpoint once this much log was written since the last: restart's interval
TXN_BYTES = 4 * CHKPT_BYTES  # a transaction in flight for this much log (written since it began) is ended


def clock() -> float:
    """The time the workload's transactions see: fixed, so that a seed writes the same bytes every run."""
    return 1_700_000_000.0


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
    began: int = 0  # the log's byte count (its stats' nBytes) when it began

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
    volumes: int = 1  # the volumes the page store has mounted (v(1) .. v(volumes))
    remounts: list[tuple[int, int]] = field(default_factory=list)  # disk events (before, after) of each remount
    largest_step: int = 0  # the most log bytes one step of the workload wrote


class Runner:
    """Runs one seeded workload against a storage manager and its model."""

    def __init__(self, seed: int, ops: int, background: Any = None, volumes: int = 1):
        self.rng = random.Random(seed)
        self.ops = ops
        self.frames = self.rng.choice([3, 4, 6])
        self.buffer_size = self.rng.choice([512, 2048, 8192])
        space = random.Random(seed * 7 + 3)  # its own draws: the other workloads stay as they were
        self.log_size = LOG_SIZE if space.random() < 0.25 else None
        capacity = None
        if self.log_size is not None and space.random() < 0.33:  # a full disk: room for only some spares
            capacity = NUM_PAGES * PAGE_SIZE + 256 + LOG_SIZE - space.randint(1, PARTITIONS - 2) * PARTITION
            capacity += (volumes - 1) * (NUM_PAGES * PAGE_SIZE + 48)  # the other volumes' files, stamps included
        self.disk = SimDisk(f"crashtest-pagestore-{seed}")
        self.locking = ScriptLocking()
        self.refused = 0
        self.shapes = seed % 2 == 0  # not drawn from the RNG: the other seeds run the workloads they always ran
        self.sm = StorageManager.format(self.disk, num_pages=NUM_PAGES, ext_sz=EXT_SZ, page_size=PAGE_SIZE,
                                        frames=self.frames, locking=self.locking, clock=clock, file_max=FILE_MAX,
                                        buffer_size=self.buffer_size, log_size=self.log_size, partitions=PARTITIONS,
                                        background=background or False, **(LARGE_SHAPES if self.shapes else {}))
        self.volumes = volumes
        self.placing = random.Random((seed << 8) | 0x5E)  # where new files go (volumes > 1), on its own generator
        self.remounts: list[tuple[int, int]] = []
        for _ in range(volumes - 1):
            self.sm.add_volume(num_pages=NUM_PAGES, ext_sz=EXT_SZ)
        self.disk.capacity = capacity  # the disk fills up (with other data) once formatted
        self.reshapes: set[tuple[str, str]] = set()
        self.formatted_at = len(self.disk.events) - 1
        self.logged_at_chkpt = self.sm.log.stats["nBytes"]
        self.largest_step = 0  # the most log bytes one step wrote (a checkpoint is due after a step)
        self.committed: State = {}
        self.states: list[State] = [{}]
        self.commits: list[Commit] = []
        self.active: list[TxnModel] = []
        self.allocated: dict[tuple[int, int], Any] = {}  # (volume, page) -> the transaction that last allocated it
        self.problems: list[str] = []
        self.sm.log.add_listener(self.check_allocation)
        self.tmp: dict[StoreId, dict[RecordId, tuple[bytes, bytes]]] = {}  # TMP files' records, untransacted
        self.tmp_committed: set[StoreId] = set()
        # Two-phase commit draws from its own generator: seeds without it run the workload they always ran.
        self.two_phase = random.Random((seed << 8) | 0x2C)
        self.prepare_rate = self.two_phase.choice([0.0, 0.0, 0.3, 0.6])  # of the transactions' ends
        if background:
            self.prepare_rate = 0.0  # a live crash may cut a prepare short: the model knows only those that returned
        self.committing: TxnModel | None = None  # the transaction whose commit is under way
        self.prepared: list[TxnModel] = []
        self.in_doubt: list[TxnModel] = []
        self.naming = random.Random((seed << 8) | 0x1D)  # named indexes, on their own generator
        self.ageing = random.Random((seed << 8) | 0xA9)  # how old transactions end, on their own generator

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
        self.steps()
        return self.workload()

    def workload(self) -> Workload:
        """What ran, and the model of it."""
        return Workload(self.disk, self.frames, self.buffer_size, self.formatted_at, self.commits, self.states,
                        self.problems, self.prepared, self.log_size, self.refused,
                        self.sm.log.stats["nFilesRemoved"], self.reshapes, self.volumes, self.remounts,
                        self.largest_step)

    def steps(self) -> None:
        for _ in range(self.ops):
            logged = self.sm.log.stats["nBytes"]
            if self.volumes > 1 and self.placing.random() < 0.08:
                self.remount()
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
                self.resolve(self.two_phase.choice(self.in_doubt), self.two_phase)
            elif not self.active or (len(self.active) < MAX_ACTIVE and roll < 0.22):
                self.active.append(TxnModel(self.sm.begin(), began=self.sm.log.stats["nBytes"]))
            else:
                self.step(self.rng.choice(self.active))
            self.end_old_transactions()
            self.largest_step = max(self.largest_step, self.sm.log.stats["nBytes"] - logged)
            if self.sm.log.stats["nBytes"] - self.logged_at_chkpt >= CHKPT_BYTES:
                self.interval_checkpoint()
        self.sm.log.flush()

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
            page = (entry.values["vol"], entry.values["ext"] * EXT_SZ + index)
            other = self.allocated.get(page)
            if other is not None and other is not xct and other.state != XctState.ENDED:
                self.problems.append(f"page {page[1]} of v({page[0]}) allocated by T{entry.txn_id} while T{other.txn_id}, which "
                                     f"allocated it, is still in flight")
            self.allocated[page] = xct

    def place(self) -> int | None:
        """The volume a new file goes to (None: the first, drawing nothing, with one volume)."""
        return self.placing.randint(1, self.volumes) if self.volumes > 1 else None

    def remount(self) -> None:
        """Dismount the last volume and mount it again at once (refused while it has active work); a crash
        between the two disk events recorded may leave it dismounted."""
        before = len(self.disk.events) - 1
        try:
            self.sm.dismount_volume(self.volumes)
        except BadRequestError:
            return
        self.sm.mount_volume(self.volumes)
        self.remounts.append((before, len(self.disk.events) - 1))

    def checkpoint(self) -> None:
        self.logged_at_chkpt = self.sm.log.stats["nBytes"]  # a refused one is not tried again at once
        try:
            self.sm.checkpoint()  # scavenges on a bounded log
        except OutOfLogSpaceError:
            self.refused += 1  # it would eat into the reserve kept for restart's checkpoint

    def end_old_transactions(self) -> None:
        """End the transactions in flight (prepared or not) for :data:`TXN_BYTES` of log or more: commit an
        active one (durable or not; an abort would log as much again in CLRs, the steps' own aborts cover
        those), commit or abort a prepared one, as drawn on a generator of their own. A restart undoes the
        transactions the crash left in flight, and the check resolves those in doubt, each back to its first
        entry: so that work too stays within a few intervals of log, however long the workload ran. A
        transaction still lives through several checkpoints (restart's losers and in-doubt ones still reach
        back before its checkpoint)."""
        for t in [*self.active, *self.in_doubt]:
            if self.sm.log.stats["nBytes"] - t.began < TXN_BYTES:
                continue
            if t.gtid:
                self.resolve(t, self.ageing)
            else:
                self.guarded(t, lambda t: self.commit(t, durable=self.ageing.random() < 0.85))

    def interval_checkpoint(self) -> None:
        """The checkpoint taken every :data:`CHKPT_BYTES` of log: first the pages dirty since before the last
        checkpoint are written, so the redo LSN is at most two intervals back, then the checkpoint (a
        restart's analysis starts at it)."""
        last = self.sm.checkpointer.last
        if last is not None:
            self.sm.bp.clean(lambda frame: frame.rec_lsn is not None and frame.rec_lsn < last.begin)
        self.checkpoint()

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
            fid = self.sm.create_file(t.xct, volume=self.place())
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
        fid = self.sm.create_file(t.xct, "load", volume=self.place())
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
        self.committing = t
        if t.gtid:
            lsn = self.sm.commit_prepared(t.gtid, durable=durable)
            self.in_doubt.remove(t)
            t.resolution = "commit"
        else:
            lsn = self.sm.commit(t.xct, durable=durable)
            self.active.remove(t)
        self.committing = None
        self.tmp_committed |= t.tmp_created
        if lsn.is_null:
            return  # read-only: nothing logged, nothing to survive
        self.committed = applied(self.committed, t)
        self.states.append(self.committed)
        self.commits.append(Commit(t.xct.txn_id, lsn, len(self.disk.events) - 1 if durable else None))

    # -- two-phase commit ----------------------------------------------------------------------------
    @staticmethod
    def preparable(t: TxnModel) -> bool:
        """Whether ``t`` may be prepared: not when it loaded a LOAD file or created a TMP file, nor when it frees
        space on a volume but the first (refused)."""
        elsewhere = {s.vol for s in t.xct.stores_to_free} | {vol for vol, _, _ in t.xct.extents_to_free}
        return not (t.xct.load_stores or t.xct.created_tmp or elsewhere - {1})

    def prepare(self, t: TxnModel) -> None:
        gtid = b"gtid-%d" % t.xct.txn_id
        t.prepared_lsn = self.sm.prepare(t.xct, gtid)
        t.gtid, t.prepared_at = gtid, len(self.disk.events) - 1
        self.active.remove(t)
        self.prepared.append(t)
        self.in_doubt.append(t)

    def resolve(self, t: TxnModel, rng: random.Random) -> None:
        """Commit or abort the prepared ``t``, as drawn on ``rng``."""
        if rng.random() < 0.5:
            self.commit(t, durable=rng.random() < 0.85)
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


def run_workload(seed: int, ops: int, volumes: int = 1) -> Workload:
    return Runner(seed, ops, volumes=volumes).run()
