"""The log store's crash test: every crash point of a random workload, recovered and checked.

A seeded workload runs on a simulated disk with tiny nodes (4 slots), a
tiny node budget (so the evictor logs nodes all the time), small log files
and a small log buffer: puts and deletes without a transaction, short
transactions that commit or abort, a long transaction that stays open
across checkpoints (so firstActiveLSN lies before CkptStart) and may still
be open at the end (a loser), lock conflicts (which must change nothing),
full checkpoints, and checkpoints stepped pause by pause with other
operations (and evictions) in between, in every checkpoint state (two of
them forced, at operations 4 and 8 of a workload of 12 or more, with a
cleaning between them). The log
cleaner runs too (its thresholds drawn so that it does clean): files
cleaned, live LNs migrated, live INs made dirty, and the cleaned files
deleted at the next checkpoint's step 9 (the log head recorded, then the
files removed: both are crash points too). Half of the cleaner's runs (a
second seeded stream, so the rest of the workload stays as it was) use lazy
migration: live LNs only marked, logged before their BIN by the next
checkpoint or eviction, the file kept until then.

Each operation is recorded with the LSN of its LN, each commit with the LSN
of its Commit entry, and each fsync that returned (a synced commit, a
checkpoint's CkptEnd, an explicit sync) as a promise.

Then, for every write, truncate and fsync of the disk's history and every
way a crash can treat the unsynced writes (keep none, keep all, a torn last
write, random subsets), the environment is opened on the crashed image
(which runs recovery) and checked:

1. recovery succeeds;
2. the records are *exactly the committed state* of the log that survived:
   with ``end`` the end of the surviving log, every write without a
   transaction before ``end``, and every write of a transaction whose Commit
   lies before ``end``, applied in LSN order; nothing else (the state at
   each end is built from the nearest one before it, :class:`CommittedStates`,
   so a crash point costs the writes since the last, not the history);
3. every promise holds: an fsync that returned before the crash point left
   its entries in the surviving log;
4. the trees are well formed, no entry in use is counted obsolete, and the
   utilization totals match the log (each file's scan kept for the sweep,
   by the file's bytes);
5. the cleaner's guarantee: no entry the trees use lies in a deleted file
   (below the log head), so reading every record above never met a
   missing file.
6. every erasure the data eraser (:mod:`minidb.logstore.eraser`) finished
   before the crash point (its last fsync returned) holds: the entries are
   in their erased form (``LOG_ERASED``, the original type and zeros, a
   checksum that verifies). Some operations of the workload run the
   eraser over up to :data:`ERASE_FILES` of the files outside the recovery
   interval (drawn from a third seeded stream), so its writes and fsyncs
   are crash points too.

What a sweep costs. Recovery starts at the last checkpoint's CkptStart (or the
first entry of a transaction then active), and the workload checkpoints often
(its own steps, and the environment's ``checkpoint_bytes_interval`` in two
seeds of three), so a crash point does not re-read the history; the committed
state at a point is built from the one before it (check 2), and check 4 scans
a file only for a content it has not had at an earlier point (the images share
most of their files). So a point costs its recovery interval and the state.
The number of points follows the log written, which grew faster than the
operations: each checkpoint logs the dirty nodes up to the roots and a
FileSummaryLN per changed file, and with files this small the utilization
profile, a new record per file and checkpoint, was most of the log (the
workload sets ``cleaner_whole_summary_offsets``: a file with a short list
keeps one record, rewritten whole, :mod:`minidb.logstore.cleaner.utilization`,
"Small files: one record"; the default, a new record per file and
checkpoint, stays swept by the replication sweeps, whose environments keep
it); and an erasure went over every file outside the
recovery interval, so its cost followed the whole log (163 disk events per
erasure at operations 48 to 95, 14 in the first 12): it now takes at most
:data:`ERASE_FILES`. The forced checkpoints come at fixed operations, so the
sweep of a seed at 2N operations covers the one at N, then N operations more.

Measured (CPU seconds on a busy machine, ``python -m bench scaling`` part
(e), seeds 0 to 2): 274 crash points in 0.37 to 0.43 s at 12 operations
and 796 in 1.92 to 2.13 s at 24 (4.96 and 5.20x in two runs) with a record
per file and checkpoint and erasures of every file; 262 in 0.31 to 0.59 s
and 545 in 0.75 to 1.23 s now (2.1 to 2.7x over seven runs, the median
2.4x, the target 2.5x): twice the points, each 1.1 to 1.3 times dearer, as
the state grows (the trees fill with keys, and the log holds more files:
over seeds 0 to 19, 4.4 on average after 12 operations, 7.3 after 24).
Over those seeds, the disk events (so the points) at 12, 24, 48 and 96
operations were 953, 1,911, 5,251 and 22,701, and are 887, 1,699, 3,727
and 10,032. Beyond some 48 operations the log still grows faster than the
operations: the workload cleans in 2% of them, which does not keep up with
what it writes (16 files on average at 48 operations, 49 at 96), and each
file adds a record to the profile and to what checkpoints write.
"""

from __future__ import annotations

import bisect
import random
from dataclasses import dataclass, field

from minidb.crashtest.sweep import SweepResult
from minidb.errors import MinidbError
from minidb.io import SimDisk, crash_points
from minidb.log import LSN, file_name
from minidb.log.header import check_entry
from minidb.logstore import (
    DataEraser,
    Durability,
    Environment,
    EnvironmentConfig,
    EraserConfig,
    LockConflictError,
    ManualClock,
)
from minidb.logstore.eraser import erase_file, locate
from minidb.logstore.tools.inspect import live_lsns
from minidb.logstore.tools.verify import live_but_obsolete, records, utilization_totals_problems, verify_tree

DATABASES = ("a", "b")
ERASE_FILES = 2  # files one erasure of the workload erases, at most
WHOLE_SUMMARY_OFFSETS = 64  # a file's FileSummaryLN rewritten whole while its list is this short
FORCED_BY = 12  # the forced checkpoints come by this operation (see _Runner.run)


def fixed_clock() -> float:
    return 1_700_000_000.0


@dataclass
class Workload:
    seed: int
    disk: SimDisk
    config: EnvironmentConfig
    writes: list[tuple[LSN, str, bytes, bytes | None, int | None]] = field(default_factory=list)
    commits: dict[int, LSN] = field(default_factory=dict)
    promises: list[tuple[int, LSN]] = field(default_factory=list)  # (event index of the fsync, LSN made durable)
    checkpoints: int = 0
    stepped_checkpoints: int = 0
    files_cleaned: int = 0
    lns_marked: int = 0  # live LNs the cleaner marked for lazy migration
    files_deleted: int = 0
    conflicts: int = 0
    erasures: list[tuple[int, int, list[tuple[int, int, int]]]] = field(default_factory=list)  # (event, file, entries)

    states: "CommittedStates | None" = field(default=None, repr=False)  # built from the finished workload
    scanned: dict[tuple[int, bytes], tuple[int, int]] = field(default_factory=dict, repr=False)  # check 4's scans

    def expected(self, end: LSN) -> dict[str, dict[bytes, bytes]]:
        """The committed state of a log that ends at ``end`` (see :class:`CommittedStates`, built at the first
        call: the writes and commits recorded after it are not seen, so ask once the workload has run)."""
        if self.states is None:
            self.states = CommittedStates(self.writes, self.commits)
        return self.states.at(end)

    def promised(self, event_index: int) -> list[LSN]:
        return [lsn for index, lsn in self.promises if index <= event_index]


class CommittedStates:
    """The committed state of the log at each end a crash left, each computed from the one before it.

    By definition (the module's check 2) the state at ``end`` applies, in LSN order, every write
    without a transaction whose LN lies before ``end`` and every write of a transaction whose Commit
    does. A write thus *counts* from a point of the log on: its LN's LSN, or its transaction's Commit
    (never, for a transaction that did not commit). Applied in LSN order, a record ends with the value
    of its counted write of greatest LSN (none if that one is a delete); so the state can be kept as
    (LSN, value) by record, and a write added in any order replaces a record's pair only if its LSN
    is greater: the same result as the replay in LSN order.

    The writes are sorted once by the point they count from; the state at ``end`` is that of the first
    ``n`` of them, those that count before ``end``. It is computed from the nearest state already
    known for fewer writes, the writes between the two added. A sweep checks its crash points in the
    order of the disk's events, whose log ends mostly grow: each point adds the writes since the
    point before, not the workload's history. ``applied`` counts the writes added, over every state.
    """

    def __init__(self, writes: list[tuple[LSN, str, bytes, bytes | None, int | None]], commits: dict[int, LSN]):
        counted = []
        for lsn, db, key, value, txn_id in writes:
            if txn_id is None:
                counted.append((lsn, lsn, db, key, value))
            elif txn_id in commits:
                counted.append((max(lsn, commits[txn_id]), lsn, db, key, value))
        counted.sort(key=lambda write: write[0])
        self.counted = counted
        self.counts_from = [write[0] for write in counted]
        self.known: dict[int, dict[tuple[str, bytes], tuple[LSN, bytes | None]]] = {0: {}}
        self.known_sizes = [0]  # the keys of ``known``, sorted
        self.applied = 0

    def at(self, end: LSN) -> dict[str, dict[bytes, bytes]]:
        n = bisect.bisect_left(self.counts_from, end)  # the writes that count before ``end``
        if n not in self.known:
            nearest = self.known_sizes[bisect.bisect_right(self.known_sizes, n) - 1]
            records = dict(self.known[nearest])
            for _, lsn, db, key, value in self.counted[nearest:n]:
                held = records.get((db, key))
                if held is None or held[0] < lsn:
                    records[db, key] = (lsn, value)
                self.applied += 1
            self.known[n] = records
            bisect.insort(self.known_sizes, n)
        state: dict[str, dict[bytes, bytes]] = {name: {} for name in DATABASES}
        for (db, key), (_, value) in self.known[n].items():
            if value is not None:
                state[db][key] = value
        return state


def workload_config(rng: random.Random) -> EnvironmentConfig:
    return EnvironmentConfig(
        file_max=rng.choice([1500, 3000, 6000]),
        buffer_size=rng.choice([300, 1000, 4000]),
        node_max_entries=4,
        node_budget=rng.choice([5, 8, 12, None]),
        checkpoint_bytes_interval=rng.choice([None, 2500, 5000]),
        durability=rng.choice([Durability.SYNC, Durability.SYNC, Durability.WRITE_NO_SYNC]),
        clock=fixed_clock,
        trace=False,
        cleaner_min_utilization=rng.choice([50, 100]),  # 100: clean the least used file whatever the total
        cleaner_whole_summary_offsets=WHOLE_SUMMARY_OFFSETS,
    )


class Recorder:
    """Runs operations on a workload's environment and records what recovery must reproduce."""

    def __init__(self, workload: Workload, env: Environment):
        self.workload = workload
        self.env = env

    def promise(self, lsn: LSN) -> None:
        """An fsync just returned: the entry at ``lsn`` must survive any later crash."""
        self.workload.promises.append((len(self.workload.disk.events) - 1, lsn))

    def write(self, db_name: str, key: bytes, value: bytes | None, txn=None) -> LSN | None:
        db = self.env.database(db_name)
        lsn = db.delete(key, txn=txn) if value is None else db.put(key, value, txn=txn)
        if lsn is not None:
            self.workload.writes.append((lsn, db_name, key, value, txn.id if txn else None))
        return lsn

    def commit(self, txn) -> None:
        lsn = txn.commit()
        if not lsn.is_null:
            self.workload.commits[txn.id] = lsn
            if txn.durability is Durability.SYNC:
                self.promise(lsn)

    def checkpoint(self, minimize: bool = False) -> None:
        result = self.env.checkpoint(minimize_recovery_time=minimize)
        self.promise(result.ckpt_end_lsn)
        self.workload.checkpoints += 1

    def stepped_checkpoint(self, between) -> None:
        """A checkpoint advanced pause by pause; ``between(pause)`` may run operations after each pause."""
        run = self.env.checkpointer.start("stepped")
        while not run.done:
            pause = run.advance()
            if not run.done and pause is not None:
                between(pause)
        self.promise(run.result.ckpt_end_lsn)
        self.workload.checkpoints += 1
        self.workload.stepped_checkpoints += 1

    def sync(self) -> None:
        self.env.sync()
        self.promise(self.env.log.last_lsn)

    def clean(self, max_files: int, lazy: bool = False) -> None:
        """Clean up to ``max_files`` files (the next checkpoint's step 9 deletes them), live LNs marked if ``lazy``."""
        self.env.config.cleaner_lazy_migration = lazy
        marked = self.env.cleaner.stats["nLNsMarked"]
        self.workload.files_cleaned += sum(c.cleaned for c in self.env.clean_log(max_files))
        self.workload.lns_marked += self.env.cleaner.stats["nLNsMarked"] - marked


class _Runner:
    def __init__(self, seed: int, ops: int):
        self.rng = random.Random(seed)
        self.lazy_rng = random.Random(f"lazy migration {seed}")  # its own stream: the workload stays the same
        self.erase_rng = random.Random(f"erasure {seed}")  # the files an erasure takes: likewise
        config = workload_config(self.rng)
        self.workload = Workload(seed, SimDisk(f"crashtest-logstore-{seed}"), config)
        self.env = Environment.open(self.workload.disk, config)
        for name in DATABASES:
            self.env.database(name)
        self.record = Recorder(self.workload, self.env)
        self.eraser = DataEraser(self.env, EraserConfig(run_eraser=True, erase_period_ms=1000), ManualClock())
        self.long_txn = None
        self.ops = ops
        self.keys = [f"k{i:02d}".encode() for i in range(rng_keys(self.rng))]

    def value(self) -> bytes:
        return f"v{self.rng.randrange(1000)}".encode() * self.rng.choice([1, 1, 3])

    def clean(self) -> None:
        self.record.clean(self.rng.choice([1, 3]), lazy=self.lazy_rng.random() < 0.5)

    def write(self, txn=None) -> None:
        rng = self.rng
        value = None if rng.random() < 0.25 else self.value()
        self.record.write(rng.choice(DATABASES), rng.choice(self.keys), value, txn)

    def short_txn(self) -> None:
        txn = self.env.begin()
        try:
            for _ in range(self.rng.randint(1, 4)):
                self.write(txn)
        except LockConflictError:
            self.workload.conflicts += 1
            txn.abort()
            return
        if self.rng.random() < 0.75:
            self.record.commit(txn)
        else:
            txn.abort()

    def small_op(self, pause=None) -> None:
        """Something to do between two pauses of a stepped checkpoint."""
        if self.rng.random() >= 0.3:
            return
        roll = self.rng.random()
        try:
            if roll < 0.6:
                self.write()
            elif roll < 0.8:
                self.short_txn()
            elif roll < 0.9 and self.long_txn is not None:
                self.write(self.long_txn)
            else:
                self.env.database(self.rng.choice(DATABASES)).get(self.rng.choice(self.keys))
        except LockConflictError:
            self.workload.conflicts += 1

    def erase(self) -> None:
        """A checkpoint, then the data eraser over up to :data:`ERASE_FILES` of the files outside the
        recovery interval that hold something to erase (drawn from its own stream).

        Each file's erasure is a promise (:func:`erasure_problem`)."""
        disk, eraser = self.workload.disk, self.eraser
        self.record.checkpoint()
        to_erase = []
        for number in eraser.eligible_files()[0]:
            with disk.open(file_name(number)) as handle:
                buf = handle.read_all()
            entries = locate(buf, eraser.entries_to_erase(number, buf))
            if entries:
                to_erase.append((number, entries))
        for number, entries in sorted(self.erase_rng.sample(to_erase, min(ERASE_FILES, len(to_erase)))):
            self.env.log.sync()
            erase_file(disk, number, entries, eraser.stats, erasing=self.env.log.erasing)
            self.workload.erasures.append((len(disk.events) - 1, number,
                                           [(e.offset, e.header_size, e.item_size) for e in entries]))

    def run(self) -> Workload:
        rng, env, wl, record = self.rng, self.env, self.workload, self.record
        # Two checkpoints at fixed operations (a third and two thirds of the way in a workload of
        # FORCED_BY operations or fewer), so that a longer workload starts as the shorter one of its seed.
        first, second = min(self.ops, FORCED_BY) // 3, (2 * min(self.ops, FORCED_BY)) // 3
        forced = {first, second}
        cleaning = first + 1  # between the two forced checkpoints: the second one deletes
        for i in range(self.ops):
            roll = rng.random()
            try:
                if i in forced:
                    if rng.random() < 0.5:
                        record.checkpoint()
                    else:
                        record.stepped_checkpoint(self.small_op)
                elif i == cleaning:
                    self.clean()
                elif roll < 0.40:
                    self.write()
                elif roll < 0.62:
                    self.short_txn()
                elif roll < 0.72:
                    if self.long_txn is None:
                        self.long_txn = env.begin()
                    self.write(self.long_txn)
                elif roll < 0.76 and self.long_txn is not None:
                    if rng.random() < 0.6:
                        record.commit(self.long_txn)
                    else:
                        self.long_txn.abort()
                    self.long_txn = None
                elif roll < 0.82:
                    record.stepped_checkpoint(self.small_op)
                elif roll < 0.86:
                    record.checkpoint(minimize=rng.random() < 0.3)
                elif roll < 0.88:
                    self.clean()
                elif roll < 0.9:
                    record.sync()
                elif roll < 0.95:
                    self.erase()
                else:
                    list(env.database(rng.choice(DATABASES)).items())
            except LockConflictError:
                wl.conflicts += 1
        wl.files_deleted = env.log.head - 1
        return wl


def rng_keys(rng: random.Random) -> int:
    return rng.choice([12, 24, 40])


def run_workload(seed: int, ops: int) -> Workload:
    return _Runner(seed, ops).run()


@dataclass(frozen=True)
class Recovered:
    """What recovering one crash image gave."""

    end: LSN | None
    problem: str | None


def recover_and_check(workload: Workload, image: SimDisk, deep: bool = True) -> Recovered:
    try:
        env = Environment.open(image, workload.config)
    except MinidbError as e:
        return Recovered(None, f"recovery failed: {type(e).__name__}: {e}")
    end = env.recovery_info.end_of_log
    env.config.node_budget = None  # checking reads every node; recovery itself ran within the budget
    try:
        found = records(env)
    except MinidbError as e:
        return Recovered(end, f"reading the records failed: {type(e).__name__}: {e}")
    expected = workload.expected(end)
    for name in DATABASES:
        got, want = found.get(name, {}), expected[name]
        if got != want:
            extra = sorted(set(got) - set(want))[:3]
            missing = sorted(set(want) - set(got))[:3]
            wrong = sorted(k for k in set(got) & set(want) if got[k] != want[k])[:3]
            return Recovered(end, f"database {name}: extra {extra}, missing {missing}, wrong values {wrong} "
                                  f"(log end {end})")
    if deep:
        problems = verify_tree(env) + live_but_obsolete(env) + utilization_totals_problems(env, workload.scanned)
        problems += [f"{what} at {lsn} lies in a deleted file (the log head is {env.log.head})"
                     for lsn, what in live_lsns(env).items() if lsn.file < env.log.head]
        if problems:
            return Recovered(end, "; ".join(problems[:3]))
    return Recovered(end, None)


def check_point(workload: Workload, image: SimDisk, event_index: int, deep: bool = True,
                cache: dict[str, Recovered] | None = None) -> str | None:
    """None if recovery on the crashed ``image`` gives the committed state; else what is wrong."""
    key = image.content_digest() if cache is not None else None
    recovered = cache.get(key) if cache is not None and key is not None else None
    if recovered is None:
        recovered = recover_and_check(workload, image, deep)
        if cache is not None and key is not None:
            cache[key] = recovered
    if recovered.problem is not None:
        return recovered.problem
    assert recovered.end is not None
    for lsn in workload.promised(event_index):
        if not lsn < recovered.end:
            return f"the entry at {lsn} was fsynced before the crash, but the log ends at {recovered.end}"
    return erasure_problem(workload, image, event_index)


def erasure_problem(workload: Workload, image: SimDisk, event_index: int) -> str | None:
    """An erasure finished before the crash point whose entries are not erased and zeroed on ``image``."""
    for done, number, entries in workload.erasures:
        if done > event_index or not image.exists(file_name(number)):
            continue  # not finished before the crash, or the file is gone since (the cleaner deleted it)
        with image.open(file_name(number)) as handle:
            data = handle.read_all()
        for offset, _header_size, _item_size in entries:
            header, problem = check_entry(data, offset, None)
            if header is None or problem is not None or not header.erased:
                return (f"the erasure of file 0x{number:x} finished, but its entry at 0x{offset:x} is not in its "
                        f"erased form ({problem or 'not erased'})")
    return None


def crash_sweep(seed: int, ops: int, torn_variants: int = 1, random_variants: int = 1, deep: bool = True) -> SweepResult:
    """Every crash point of workload ``seed``; byte-identical crash images are recovered once."""
    workload = run_workload(seed, ops)
    result = SweepResult()
    cache: dict[str, Recovered] = {}
    for point in crash_points(workload.disk, torn_variants=torn_variants, random_variants=random_variants, seed=seed):
        result.points += 1
        problem = check_point(workload, point.disk, point.event.index, deep, cache)
        if problem is not None:
            result.violations.append(f"seed {seed}, {point}: {problem}")
    return result


__all__ = ["Workload", "CommittedStates", "Recorder", "run_workload", "check_point", "crash_sweep", "DATABASES"]
