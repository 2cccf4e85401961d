"""The log store demonstrations behind notebooks 09, 10 and 10b, the tour and ``figures/``.

A log store workload is a *script* (:mod:`minidb.viz.script`): a list of
operations from :data:`OPS` (puts, deletes and reads without a transaction,
named transactions, checkpoints, evictions, syncs), which
:func:`run_script` checks whole before running and runs on an environment,
saying what each step did. A bad step is a :class:`ScriptError` naming the
step: an unknown transaction, one begun twice or already ended, a key or
value that is not text. A lock conflict is not an error: the step reports
that it was refused and nothing changed, as the engine does.

- :func:`tree_step` (notebook 09): a new environment after the first
  ``step`` operations of a script (default :data:`SCRIPT`: records, splits
  up to a root split, updates and deletes, checkpoints, an eviction and a
  read that fetches the evicted BIN back, an aborted transaction), drawn as
  the tree above its log. Pure: it replays from scratch, so any step of any
  script can be asked for in any order.
- :func:`logstore_crash_demo` (notebook 10): the bank workload
  (:data:`BANK_SCRIPT`) spans a checkpoint; crash it right after its k-th
  disk write, keeping nothing, everything or a torn part of the unsynced
  writes; recover, keeping a picture of the tree and the log after every
  phase of recovery; return the chosen phase's picture and what recovery
  said in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from matplotlib.figure import Figure

from minidb.errors import MinidbError
from minidb.io import CrashMode, SimDisk
from minidb.log import LSN
from minidb.logstore import Environment, EnvironmentConfig, EnvironmentHooks, LockConflictError
from minidb.logstore.tools.verify import records
from minidb.viz.logstore import TreeAndLog, draw_tree_and_log, tree_and_log
from minidb.viz.script import Op, checked, op_table, script_error

DB = "accounts"
KEEP_MODES = {"nothing": CrashMode.nothing(), "everything": CrashMode.everything(), "torn": CrashMode.torn(seed=3)}

OPS = op_table(
    Op("put", ("key", "value"), "write key=value without a transaction (an LN)"),
    Op("delete", ("key",), "delete key without a transaction (a DEL_LN)"),
    Op("get", ("key",), "read key (fetches its BIN back from the log if it was evicted)"),
    Op("begin", ("txn",), "begin a transaction, named e.g. 'T1'"),
    Op("txn_put", ("txn", "key", "value"), "write key=value in txn (an LN_TX, the key write-locked)"),
    Op("txn_delete", ("txn", "key"), "delete key in txn (a DEL_LN_TX)"),
    Op("commit", ("txn",), "commit txn (a Commit entry; the log is fsynced)"),
    Op("abort", ("txn",), "abort txn (an Abort entry; the old versions go back in their slots)"),
    Op("checkpoint", (), "a checkpoint: CkptStart, the dirty nodes bottom up, CkptEnd; fsynced"),
    Op("evict", ("key",), "evict the BIN holding key from memory (logged first if it is dirty)"),
    Op("sync", (), "fsync the log"),
    Op("flush", (), "write the log buffer to the file, without an fsync"),
)
TEXT_ARGS = {"key", "value", "txn"}


def fixed_clock() -> float:
    return 1_700_000_000.0


def demo_config(**overrides) -> EnvironmentConfig:
    settings = dict(node_max_entries=4, file_max=2048, buffer_size=384, checkpoint_bytes_interval=None,
                    clock=fixed_clock)
    settings.update(overrides)
    return EnvironmentConfig(**settings)


def describe_op(op: tuple) -> str:
    """An operation as a short phrase: ``put alice=100``, ``T1: delete bob``, ``checkpoint``."""
    name, args = op[0], op[1:]
    if name == "put":
        return f"put {args[0]}={args[1]}"
    if name in ("delete", "get", "evict"):
        return f"{name} {args[0]}"
    if name == "txn_put":
        return f"{args[0]}: put {args[1]}={args[2]}"
    if name == "txn_delete":
        return f"{args[0]}: delete {args[1]}"
    if name in ("begin", "commit", "abort"):
        return f"{name} {args[0]}"
    return name


@dataclass(frozen=True)
class StepDone:
    lsn: LSN | None  # the entry the operation logged (None if it logged nothing of its own)
    lines: tuple[str, ...]  # what it did, in the engine's words


class ScriptRunner:
    """Runs a checked script's operations, one at a time, on an environment's database ``DB``."""

    def __init__(self, env: Environment):
        self.env = env
        self.db = env.database(DB)
        self.txns: dict[str, object] = {}
        self.ended: set[str] = set()

    def _txn(self, step: int, op: tuple, name: str):
        """The open transaction the script calls ``name``."""
        if name in self.ended:
            raise script_error(step, op, f"transaction {name} has already ended")
        if name not in self.txns:
            raise script_error(step, op, f"no transaction {name} has begun (begin it first: ('begin', {name!r}))")
        return self.txns[name]

    def run(self, step: int, op: tuple) -> StepDone:
        """Run operation ``op`` (step ``step`` of the script, from 1); say what it did."""
        for arg_name, value in zip(OPS[op[0]].args, op[1:], strict=False):
            if arg_name in TEXT_ARGS and (not isinstance(value, str) or not value):
                raise script_error(step, op, f"{arg_name} must be a non-empty string, not {value!r}")
        env, name, args = self.env, op[0], op[1:]
        before = len(env.trace.lines)
        try:
            lsn, lines = self._run(step, op, name, args)
        except LockConflictError as conflict:
            return StepDone(None, (f"refused, nothing changed: {conflict}",))
        except MinidbError as error:  # the engine refused the operation: name the step
            raise script_error(step, op, str(error)) from error
        said = [line for line in env.trace.lines[before:] if line.startswith(("split", "root split"))]
        return StepDone(lsn, tuple(lines) + tuple(said))

    def _run(self, step: int, op: tuple, name: str, args: tuple) -> tuple[LSN | None, list[str]]:
        env, db = self.env, self.db
        if name == "put":
            return db.put(args[0], args[1]), []
        if name == "delete":
            lsn = db.delete(args[0])
            return lsn, [] if lsn is not None else [f"no record {args[0]!r}: nothing logged"]
        if name == "get":
            fetched = env.stats["nINsFetched"]
            value = db.get(args[0])
            shown = "no such record" if value is None else value.decode("utf-8", "replace")
            fetches = env.stats["nINsFetched"] - fetched
            return None, [f"{args[0]} = {shown}" + (f" ({fetches} node fetched from the log)" if fetches else "")]
        if name == "begin":
            if args[0] in self.txns or args[0] in self.ended:
                raise script_error(step, op, f"a transaction named {args[0]} has already begun")
            self.txns[args[0]] = txn = env.begin()
            return None, [f"{args[0]} is txn {txn.id}"]
        if name in ("txn_put", "txn_delete"):
            txn = self._txn(step, op, args[0])
            lsn = db.put(args[1], args[2], txn=txn) if name == "txn_put" else db.delete(args[1], txn=txn)
            return lsn, []
        if name in ("commit", "abort"):
            txn = self._txn(step, op, args[0])
            lsn = txn.commit() if name == "commit" else txn.abort()
            self.ended.add(args[0])
            del self.txns[args[0]]
            return lsn, []
        if name == "checkpoint":
            result = env.checkpoint()
            return result.ckpt_end_lsn, [logged.describe() for logged in result.logged]
        if name == "evict":
            node = env.db_tree.get(DB).tree.search(args[0].encode())  # the BIN that holds the key
            lsn = env.evictor.evict(node)
            where = f"logged at {lsn} with Provisional.{env.log.read(lsn).provisional.name}" if lsn else "clean: not logged"
            return lsn, [f"evicted {node.describe()}: {where}"]
        if name == "sync":
            env.sync()
            return None, []
        env.log.flush()
        return None, []


def run_script(env: Environment, script, on_step=None) -> list[StepDone]:
    """Check ``script`` whole, then run it on ``env``; ``on_step(step, op, done)`` after each operation."""
    operations = checked(script, OPS)
    runner = ScriptRunner(env)
    done = []
    for step, op in enumerate(operations, 1):
        done.append(runner.run(step, op))
        if on_step:
            on_step(step, op, done[-1])
    return done


# -- notebook 10: the bank workload, crashed anywhere ---------------------------------------------
BANK_SCRIPT: list[tuple] = [
    ("put", "alice", "100"), ("put", "bob", "50"), ("put", "carol", "75"), ("put", "dave", "20"),
    ("put", "erin", "5"), ("put", "frank", "60"), ("put", "grace", "35"),
    ("begin", "T1"), ("txn_put", "T1", "carol", "70"),  # T1 stays open across the checkpoint
    ("begin", "T2"), ("txn_put", "T2", "alice", "70"), ("txn_put", "T2", "bob", "80"), ("commit", "T2"),
    ("checkpoint",),
    ("delete", "dave"), ("put", "heidi", "40"),
    ("commit", "T1"),
    ("begin", "T3"), ("txn_put", "T3", "erin", "0"),  # T3 never commits: the loser
    ("evict", "erin"),  # the evictor logs erin's BIN, with T3's uncommitted slot
    ("sync",),
    ("put", "ivan", "90"), ("flush",),  # written, never synced
]


@dataclass(frozen=True)
class BankRun:
    disk: SimDisk
    story: tuple[tuple[int, str], ...]  # (index of the last disk event when it happened, what happened)


@lru_cache(maxsize=8)
def _bank_run(script: tuple) -> BankRun:
    disk = SimDisk("bank")
    env = Environment.open(disk, demo_config())
    story: list[tuple[int, str]] = []
    run_script(env, script, lambda step, op, done: story.append((len(disk.events) - 1, describe_op(op))))
    return BankRun(disk, tuple(story))


def bank_run(script=None) -> BankRun:
    return _bank_run(tuple(checked(BANK_SCRIPT if script is None else script, OPS)))


def bank_disk(script=None) -> SimDisk:
    """A copy of the bank workload's disk, before any crash."""
    return bank_run(script).disk.clone()


def bank_story(script=None) -> list[tuple[int, str]]:
    """Each step of the workload, after the disk event it had reached."""
    return list(bank_run(script).story)


def bank_writes(script=None) -> list[int]:
    """Event indices of the workload's disk writes (write k is ``bank_writes()[k - 1]``)."""
    return [e.index for e in bank_run(script).disk.events if e.kind == "write"]


@dataclass(frozen=True)
class PhasePicture:
    name: str
    lines: tuple[str, ...]
    picture: TreeAndLog | None  # None before recovery knows the database


@dataclass(frozen=True)
class LogstoreCrashDemo:
    after_write: int
    keep: str
    event: str
    happened: tuple[str, ...]  # the workload's steps done before the crash
    phases: tuple[PhasePicture, ...]
    phase: int
    records: dict[bytes, bytes]
    figure: Figure

    def summary(self) -> str:
        chosen = self.phases[self.phase]
        lines = [f"crash after write {self.after_write} ({self.event}), keeping {self.keep} of the unsynced writes",
                 "before the crash: " + ("; ".join(self.happened) if self.happened else "nothing yet"),
                 f"recovery phase {self.phase + 1} of {len(self.phases)}: {chosen.name}"]
        lines += [f"  {line}" for line in chosen.lines]
        shown = ", ".join(f"{k.decode()}={v.decode()}" for k, v in self.records.items())
        lines.append(f"records after recovery: {shown or 'none'}")
        return "\n".join(lines)


@lru_cache(maxsize=64)
def _recover(script: tuple, after_write: int, keep: str) -> tuple[tuple[PhasePicture, ...], dict[bytes, bytes], str]:
    run = _bank_run(script)
    writes = [e.index for e in run.disk.events if e.kind == "write"]
    event = run.disk.events[writes[after_write - 1]]
    image = run.disk.crash_image(event.index, KEEP_MODES[keep])
    pictures: list[tuple[str, TreeAndLog | None]] = []

    def listener(name: str, env: Environment) -> None:
        picture = tree_and_log(env, DB) if env.db_tree.get(DB) is not None else None
        pictures.append((name, picture))

    env = Environment(image, demo_config(), EnvironmentHooks(), phase_listener=listener)
    phases = tuple(PhasePicture(p.name, tuple(p.lines), picture)
                   for p, (_, picture) in zip(env.recovery_info.phases, pictures, strict=False))
    found = records(env).get(DB, {})
    return phases, found, str(event)


def logstore_crash_demo(after_write: int, keep: str = "nothing", phase: int = 10, script=None) -> LogstoreCrashDemo:
    """Crash the bank workload (or ``script``) after its ``after_write``-th write; show recovery phase ``phase``
    (0-based)."""
    operations = tuple(checked(BANK_SCRIPT if script is None else script, OPS))
    writes = bank_writes(operations)
    if not 1 <= after_write <= len(writes):
        raise ValueError(f"after_write must be between 1 and {len(writes)}, not {after_write}")
    if keep not in KEEP_MODES:
        raise ValueError(f"keep must be one of {sorted(KEEP_MODES)}, not {keep!r}")
    phases, found, event = _recover(operations, after_write, keep)
    if not 0 <= phase < len(phases):
        raise ValueError(f"phase must be between 0 and {len(phases) - 1}, not {phase}")
    chosen = phases[phase]
    event_index = writes[after_write - 1]
    happened = tuple(what for index, what in _bank_run(operations).story if index <= event_index)
    picture = next((p.picture for p in reversed(phases[: phase + 1]) if p.picture is not None), None)
    if picture is None:
        from minidb.viz.style import new_figure

        figure = new_figure(11.0, 6.0)
        figure.text(0.5, 0.5, f"phase {phase + 1} ({chosen.name}): the database is not known yet",
                    ha="center", va="center", fontsize=11)
    else:
        figure = draw_tree_and_log(picture, title=f"recovery phase {phase + 1}: {chosen.name}")
    return LogstoreCrashDemo(after_write, keep, event, happened, phases, phase, dict(found), figure)


def worked_cases_figure() -> Figure:
    """The JE documentation's cases 1, 2, 3 and 3 with the bug, one strip each (for figures/)."""
    from minidb.logstore.cases import worked_case
    from minidb.viz.checkpoint import draw_worked_cases

    return draw_worked_cases([worked_case(n, bug) for n, bug in [(1, False), (2, False), (3, False), (3, True)]])


# -- notebook 09: a tree growing in the log, operation by operation -------------------------------
SCRIPT: list[tuple] = [
    ("put", "alice", "100"), ("put", "bob", "50"), ("put", "carol", "75"),  # three LNs, one dirty BIN
    ("put", "dave", "20"), ("put", "erin", "5"), ("put", "frank", "60"),
    ("put", "grace", "35"), ("put", "heidi", "40"),  # two BIN splits
    ("put", "bob", "80"), ("put", "alice", "70"), ("delete", "dave"),  # old versions become obsolete
    ("checkpoint",),  # every dirty node logged, bottom up
    ("put", "ivan", "90"), ("put", "judy", "15"), ("put", "ken", "30"),  # the root splits
    ("checkpoint",),
    ("put", "liz", "25"), ("evict", "liz"), ("get", "liz"),  # out of memory, and back from the log
    ("begin", "T1"), ("txn_put", "T1", "alice", "0"), ("txn_delete", "T1", "bob"),
    ("get", "alice"),  # refused: T1 holds alice's write lock
    ("abort", "T1"),  # alice=70 and bob=80 come back
]


@dataclass(frozen=True)
class TreeStep:
    step: int
    operation: str
    lsn: LSN | None  # where the operation's entry went
    lines: tuple[str, ...]  # what the operation did, in the engine's words
    figure: Figure
    picture: TreeAndLog
    env: Environment

    def summary(self) -> str:
        where = f" -> {self.lsn}" if self.lsn is not None else ""
        obsolete = sum(1 for b in self.picture.boxes if b.obsolete)
        said = "".join(f"\n  {line}" for line in self.lines)
        return (f"after step {self.step}: {self.operation}{where}{said}\nthe log holds {len(self.picture.boxes)} "
                f"entries, {obsolete} of them obsolete; the tree has {len(self.picture.view.nodes())} nodes")


def tree_step(step: int, script=SCRIPT) -> TreeStep:
    """A new environment after the first ``step`` operations of ``script``, drawn (pure: replays from scratch)."""
    operations = tuple(checked(script, OPS))
    if not 0 <= step <= len(operations):
        raise ValueError(f"step must be between 0 and {len(operations)} (the script's length), not {step}")
    return _tree_step(step, operations)


@lru_cache(maxsize=64)
def _tree_step(step: int, operations: tuple) -> TreeStep:
    env = Environment.open(SimDisk("tree-demo"), demo_config(file_max=4096))
    done = run_script(env, operations[:step])
    picture = tree_and_log(env, DB)
    operation = describe_op(operations[step - 1]) if step else "a new environment"
    figure = draw_tree_and_log(picture, title=f"step {step}: {operation}")
    last = done[-1] if done else StepDone(None, ())
    return TreeStep(step, operation, last.lsn, last.lines, figure, picture, env)


# -- notebook 10: a checkpoint with work to do on every level ----------------------------------------
def checkpoint_demo_env() -> Environment:
    """24 accounts in a 4-level tree, all logged; then dirty BINs under two level-2 INs, and one dirty level-2 IN
    (the parent of a BIN evicted after its change).

    A checkpoint of it has work on levels 1 and 2, so its highest flush level is 2 (4 with
    minimize_recovery_time, which also logs the root).
    """
    env = Environment.open(SimDisk("checkpoint-demo"), demo_config(file_max=1 << 16, buffer_size=1 << 12))
    db = env.database(DB)
    for i in range(24):
        db.put(f"acct{i:02d}", str(100 + i))
    env.checkpoint(minimize_recovery_time=True)
    db.put("acct01", "1")  # a BIN under the first level-2 IN
    db.put("acct03", "3")
    db.put("acct22", "22")  # a BIN under the last level-2 IN
    tree = env.db_tree.get(DB).tree
    middle = tree.search(b"acct12")
    db.put("acct12", "12")
    env.evictor.evict(middle)  # logged now (no checkpoint running): its level-2 parent becomes dirty
    return env


__all__ = ["OPS", "SCRIPT", "BANK_SCRIPT", "run_script", "describe_op", "checkpoint_demo_env", "TreeStep", "tree_step",
           "bank_disk", "bank_story", "bank_writes", "logstore_crash_demo", "LogstoreCrashDemo", "PhasePicture",
           "worked_cases_figure", "demo_config", "KEEP_MODES", "DB"]


# -- notebook 10b: the evictor's bug, and a cleaner that trusts the counts ------------------------------
@dataclass(frozen=True)
class EvictionBugDemo:
    bug: bool
    case_text: str  # the case's summary, A named by what it is
    erased: int  # node entries the cleaner stand-in erased
    records: int  # records read back afterwards
    error: str | None  # what reading them back gave, if it failed
    figure: Figure

    def summary(self) -> str:
        outcome = self.error or f"all {self.records} records read back"
        return f"{self.case_text}\ncleaner trusting utilization: erased {self.erased} obsolete node entries -> {outcome}"


def eviction_bug_demo(bug: bool = True) -> EvictionBugDemo:
    """The JE documentation's case 3 with the evictor's bug on or off; then erase what is counted obsolete."""
    from minidb.logstore.cases import clean_trusting_utilization, worked_case
    from minidb.viz.checkpoint import case_summary, draw_worked_case

    case = worked_case(3, bug=bool(bug))
    text, figure = case_summary(case), draw_worked_case(case)
    cleaning = clean_trusting_utilization(case)
    return EvictionBugDemo(bool(bug), text, len(cleaning.erased), cleaning.records, cleaning.error, figure)


__all__ += ["EvictionBugDemo", "eviction_bug_demo"]
