"""The JE documentation's three BEFORE_CKPT_END cases, run in the real engine.

JE's Checkpointer documentation gives three logs. In each, BIN-A
was logged at 050 and its parent IN-B at 060; a checkpoint starts at 100;
BIN-A is logged again at 200 with Provisional.BEFORE_CKPT_END, so its old
version at 050 is counted obsolete at once, and a FileSummaryLN at 300 makes
that count durable::

    case 1 (correct)    ... 300 FileSummaryLN   crash (no CkptEnd)
    case 2 (correct)    ... 300 FileSummaryLN   400 IN-B (NO)   500 CkptEnd   crash
    case 3 (incorrect)  ... 300 FileSummaryLN   400 CkptEnd     crash

Here they run on a real environment with 4-slot nodes and a 3-level tree.

- Cases 1 and 2: the checkpointer logs BEFORE_CKPT_END only in middle
  levels, so the JE documentation's "BIN-A" is a level-2 IN (called A below) and
  "IN-B" its parent, the root at level 3. A record under A changes, and a
  checkpoint with minimize_recovery_time (JE's flushAll: up to the root)
  logs A with BEFORE_CKPT_END. The utilization tracker then writes its
  FileSummaryLNs (as JE's does when its memory fills). Case 1 crashes
  there; case 2 lets the checkpoint end first (IN-B, then CkptEnd).
- Case 3: A is a real BIN and IN-B its level-2 parent. A's records are
  deleted before "050", so A is logged there empty (why: below). The
  checkpoint's dirty map is complete and holds neither. A transaction
  inserts a record into A and the evictor logs A: with the JE
  documentation's rule, Provisional.YES; with the demonstration-only option
  ``bug_evict_with_before_ckpt_end``, BEFORE_CKPT_END, as JE did through
  CacheMode.EVICT_BIN (SR #19422). The transaction aborts, so recovery will
  have nothing to replay into A. The checkpoint ends without logging IN-B;
  crash.

Recovery then decides which version of A the tree uses, and
:func:`~minidb.logstore.tools.verify.live_but_obsolete` says whether counting 050
obsolete was right. :func:`clean_and_delete` then runs the real cleaner
(:mod:`minidb.logstore.cleaner`) over the files up to A's, lets the next
checkpoint's step 9 delete them, reopens and reads every record. The cleaner
skips the entries the summaries count obsolete, so after case 3 with the bug
it neither migrates A nor makes it dirty: its only valid version goes with
its file, and reading the tree fails with JE's LogFileNotFoundException
(:class:`~minidb.logstore.errors.LogFileNotFound`, an environment failure,
naming the file and the LSN). Without the bug the cleaner finds A live,
makes it dirty, the checkpoint logs it elsewhere, and every record reads back.

Why A is empty: the cleaner deletes files from the log's low end only, and
an LN is always logged before the BIN version that points at it, so every
file holding a live LN under A is cleaned no later than A's own file;
migrating that LN dirties A, the checkpoint logs it, and the damage hides.
JE deletes any cleaned file, so there A's LNs could sit in a file never
cleaned; here A holds no LN at all. :func:`clean_trusting_utilization`
is the older stand-in: it erases the entries the summaries call obsolete
(through the data eraser's own write protocol, so they end in the erased form)
instead of cleaning.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from minidb.io import CrashMode, SimDisk
from minidb.log import LSN, NULL_LSN, Provisional
from minidb.log.files import file_name
from minidb.logstore.config import EnvironmentConfig
from minidb.logstore.env import Environment
from minidb.logstore.eraser import ERASER_STATS, erase_file, locate
from minidb.logstore.errors import LogFileNotFound, TreeError
from minidb.logstore.logdef import NODE_TYPES
from minidb.logstore.tools.inspect import tree_view
from minidb.logstore.tools.verify import live_but_obsolete, records
from minidb.stats import Stats

DB_NAME = "cases"
KEYS = [f"key{i:02d}" for i in range(0, 40, 2)]  # 20 keys: a 3-level tree of 4-slot nodes


def case_config(bug: bool = False) -> EnvironmentConfig:
    return EnvironmentConfig(node_max_entries=4, file_max=1 << 20, checkpoint_bytes_interval=None,
                             clock=lambda: 1_700_000_000.0, bug_evict_with_before_ckpt_end=bug)


@dataclass
class WorkedCase:
    """One run of a worked case, and what recovery made of it."""

    number: int
    bug: bool
    disk: SimDisk
    a_node_id: int
    a_level: int
    b_node_id: int
    marks: dict[str, LSN] = field(default_factory=dict)  # the JE documentation's numbers -> real LSNs
    a_provisional: Provisional = Provisional.NO  # how A was logged at "200"
    recovered: Environment | None = None
    active_a: LSN = NULL_LSN  # the version of A the recovered tree uses
    old_a_counted_obsolete: bool = False
    problems: list[str] = field(default_factory=list)  # live_but_obsolete after recovery

    @property
    def correct(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        lines = [f"case {self.number}" + (" (evictor with the bug option)" if self.bug else "")]
        for name, lsn in self.marks.items():
            lines.append(f"  {name:<28} {lsn}")
        lines.append(f"  A logged at 200 with Provisional.{self.a_provisional.name}")
        lines.append(f"  after recovery the tree uses A at {self.active_a}"
                     f" ({'the new version' if self.active_a == self.marks.get('200 BIN-A') else 'the old version'})")
        lines.append(f"  A at {self.marks['050 BIN-A']} counted obsolete: {self.old_a_counted_obsolete}")
        lines.append("  " + ("correct: nothing in use is counted obsolete" if self.correct
                             else "INCORRECT: " + "; ".join(self.problems)))
        return "\n".join(lines)


def _build_tree(disk: SimDisk, bug: bool) -> tuple[Environment, object]:
    env = Environment.open(disk, case_config(bug))
    db = env.database(DB_NAME)
    for key in KEYS:
        db.put(key, "v0")
    return env, db


def _nodes(env: Environment):
    view = tree_view(env, DB_NAME)
    assert view.height() == 3, f"the case needs a 3-level tree, not {view.height()}"
    return view


def _recover(case: WorkedCase) -> WorkedCase:
    env = Environment.open(case.disk, case_config(case.bug))
    case.recovered = env
    view = tree_view(env, DB_NAME)
    node = next(n for n in view.nodes() if n.node_id == case.a_node_id)
    case.active_a = node.lsn
    case.old_a_counted_obsolete = env.utilization.is_obsolete(case.marks["050 BIN-A"])
    case.problems = live_but_obsolete(env)
    return case


def worked_case(number: int, bug: bool = False) -> WorkedCase:
    """Run case ``number`` (1, 2 or 3) and recover; ``bug`` only matters for case 3."""
    if number not in (1, 2, 3):
        raise ValueError(f"there are worked cases 1, 2 and 3, not {number!r}")
    disk = SimDisk(f"seed-case-{number}")
    env, db = _build_tree(disk, bug)
    env.checkpoint(minimize_recovery_time=True)  # every node logged: "050 BIN-A", "060 IN-B"
    view = _nodes(env)
    root = view.root
    if number in (1, 2):
        a = root.children[0]  # a level-2 IN
        b = root
        key_in_a = _keys_under(a)[0]
    else:
        b = root.children[0]  # a level-2 IN
        a = b.children[0]  # a BIN
        key_in_a = _empty(env, db, a)
        a, b = (next(n for n in _nodes(env).nodes() if n.node_id == node_id) for node_id in (a.node_id, b.node_id))
    case = WorkedCase(number, bug, disk, a.node_id, a.level, b.node_id)
    case.marks["050 BIN-A"] = a.lsn
    case.marks["060 IN-B"] = b.lsn
    if number in (1, 2):
        db.put(key_in_a, "v1")  # dirties a BIN under A
        run = env.checkpointer.start("worked case", minimize_recovery_time=True)
        run.through(3)
        case.marks["100 CkptStart"] = run.result.ckpt_start_lsn
        while not any(l.node_id == a.node_id for l in run.result.logged):
            if run.advance() is None:  # a checkpointer that broke its promise: say so, never loop
                raise RuntimeError(f"case {number}: checkpoint {run.result.checkpoint_id} ended without logging "
                                   f"BIN-A (node {a.node_id}), dirty at its CkptStart")
        logged_a = next(l for l in run.result.logged if l.node_id == a.node_id)
        case.marks["200 BIN-A"] = logged_a.lsn
        case.a_provisional = logged_a.provisional
        written = env.utilization.flush()  # what JE's tracker does when its memory fills
        case.marks["300 FileSummaryLN"] = dict(written)[a.lsn.file]
        env.sync()
        if number == 2:
            run.finish()
            logged_b = next(l for l in run.result.logged if l.node_id == b.node_id)
            case.marks["400 IN-B"] = logged_b.lsn
            case.marks["500 CkptEnd"] = run.result.ckpt_end_lsn
        env.crash(CrashMode.nothing())
        return _recover(case)
    run = env.checkpointer.start("worked case")
    run.through(3)
    case.marks["100 CkptStart"] = run.result.ckpt_start_lsn
    run.through(4)  # the dirty map is complete; neither A nor IN-B is in it
    txn = env.begin()
    db.put(key_in_a, "v1", txn=txn)  # a new record in A, by a transaction that will abort
    bin_a = _resident(env, a.node_id)
    case.marks["200 BIN-A"] = env.evictor.evict(bin_a)
    case.a_provisional = env.evictor.history[-1][2]
    txn.abort()
    run.finish()
    case.marks["300 FileSummaryLN"] = dict(run.result.summaries)[a.lsn.file]
    case.marks["400 CkptEnd"] = run.result.ckpt_end_lsn
    env.crash(CrashMode.nothing())
    return _recover(case)


def _empty(env: Environment, db, a) -> str:
    """Delete the records under BIN ``a`` and log the tree again (``a`` empty); a key that falls in ``a``."""
    keys = _keys_under(a)
    for key in keys:
        db.delete(key)
    env.checkpoint(minimize_recovery_time=True)
    return keys[0]


def _keys_under(node) -> list[str]:
    if node.is_bin:
        return [k.decode() for k in node.keys]
    return [k for child in node.children for k in _keys_under(child)]


def _resident(env: Environment, node_id: int):
    for node in env.evictor.resident_nodes():
        if node.node_id == node_id:
            return node
    raise LookupError(f"node {node_id} is not resident")


@dataclass
class CleanerRun:
    """What :func:`clean_and_delete` did: files cleaned, files deleted, and reading every record back after."""

    cleaned: list[int]
    deleted: list[int]
    error: str | None  # what reading every record gave afterwards (None: all readable)
    records: int

    def summary(self) -> str:
        names = lambda numbers: ", ".join(file_name(n) for n in numbers) or "none"  # noqa: E731
        return (f"cleaned {names(self.cleaned)}; deleted {names(self.deleted)}; "
                + (self.error or f"all {self.records} records read back"))


def clean_and_delete(case: WorkedCase) -> CleanerRun:
    """Clean the files up to A's with the real cleaner, delete them at a checkpoint, reopen, read every record."""
    env = case.recovered
    assert env is not None
    last = case.marks["050 BIN-A"].file
    env.log.force_flip()
    env.checkpoint()  # the recovery interval now starts after A's file: the cleaner may take it
    cleaned = []
    for number in range(env.log.head, last + 1):
        if env.cleaner.clean_file(number).cleaned:
            cleaned.append(number)
    head = env.log.head
    env.checkpoint()  # step 9 deletes the cleaned files
    deleted = list(range(head, env.log.head))
    env.close()
    reopened = Environment.open(case.disk, case_config(case.bug))
    case.recovered = reopened
    try:
        found = records(reopened)
        count, error = sum(len(r) for r in found.values()), None
    except LogFileNotFound as e:
        count, error = 0, f"{type(e).__name__}: {e}"
    return CleanerRun(cleaned, deleted, error, count)


@dataclass
class Cleaning:
    erased: list[LSN]
    error: str | None  # what reading every record gave afterwards (None: all readable)
    records: int


def clean_trusting_utilization(case: WorkedCase) -> Cleaning:
    """Erase every node entry the recovered environment counts obsolete, reopen, read every record."""
    env = case.recovered
    assert env is not None
    env.close()
    erased = []
    for summary in env.utilization.report():
        name = f"{summary.file_number:08x}.jdb"
        if not case.disk.exists(name):
            continue
        with case.disk.open(name) as handle:
            buf = handle.read_all()
        offsets = [offset for offset in sorted(summary.obsolete) if offset + 5 <= len(buf)
                   and env.log.read(LSN(summary.file_number, offset)).type_name in NODE_TYPES]
        if offsets:  # the data eraser's own protocol: the entries end in their erased form
            erase_file(case.disk, summary.file_number, locate(buf, offsets), Stats("Eraser", ERASER_STATS))
            erased += [LSN(summary.file_number, offset) for offset in offsets]
    reopened = Environment.open(case.disk, case_config(case.bug))
    try:
        found = records(reopened)
        count = sum(len(r) for r in found.values())
        error = None
    except TreeError as e:
        count, error = 0, str(e)
    return Cleaning(erased, error, count)


__all__ = ["WorkedCase", "worked_case", "CleanerRun", "clean_and_delete", "Cleaning", "clean_trusting_utilization", "DB_NAME", "KEYS"]
