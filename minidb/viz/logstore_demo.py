"""The log store demonstrations behind notebooks 09 and 10, the tour and ``figures/``.

:func:`bank_disk` runs a small scripted workload on a simulated disk: a bank
of accounts in 4-slot nodes, writes without a transaction, a transaction
that stays open across a checkpoint (so firstActiveLSN lies before
CkptStart) and commits after it, a transfer, a loser whose record reached
the disk, and a last write that was never synced.

:func:`logstore_crash_demo` is the pure function behind notebook 10's
crash control: crash the workload right after its k-th disk write, keeping
nothing, everything or a torn part of the unsynced writes; recover, keeping
a picture of the tree and the log after every phase of recovery; return the
chosen phase's picture and what recovery said in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from matplotlib.figure import Figure

from minidb.io import CrashMode, SimDisk
from minidb.logstore import Environment, EnvironmentConfig, EnvironmentHooks
from minidb.logstore.verify import records
from minidb.viz.logstore import TreeAndLog, draw_tree_and_log, tree_and_log

DB = "accounts"
OPENING = [("alice", "100"), ("bob", "50"), ("carol", "75"), ("dave", "20"), ("erin", "5"), ("frank", "60"),
           ("grace", "35")]
KEEP_MODES = {"nothing": CrashMode.nothing(), "everything": CrashMode.everything(), "torn": CrashMode.torn(seed=3)}


def fixed_clock() -> float:
    return 1_700_000_000.0


def demo_config(**overrides) -> EnvironmentConfig:
    settings = dict(node_max_entries=4, file_max=2048, buffer_size=384, checkpoint_bytes_interval=None,
                    clock=fixed_clock)
    settings.update(overrides)
    return EnvironmentConfig(**settings)


@dataclass(frozen=True)
class BankRun:
    disk: SimDisk
    story: tuple[tuple[int, str], ...]  # (index of the last disk event when it happened, what happened)


@lru_cache(maxsize=1)
def _bank_run() -> BankRun:
    disk = SimDisk("bank")
    env = Environment.open(disk, demo_config())
    story: list[tuple[int, str]] = []

    def say(what: str) -> None:
        story.append((len(disk.events) - 1, what))

    accounts = env.database(DB)
    for name, amount in OPENING:
        accounts.put(name, amount)
    say("opened 7 accounts (no transaction, not synced)")
    long_txn = env.begin()
    accounts.put("carol", "70", txn=long_txn)
    say(f"txn {long_txn.id} wrote carol=70 and stays open")
    with env.begin() as txn:
        accounts.put("alice", "70", txn=txn)
        accounts.put("bob", "80", txn=txn)
    say(f"txn {txn.id} moved 30 from alice to bob: committed and fsynced")
    env.checkpoint()
    say("checkpoint: CkptStart ... CkptEnd (fsynced)")
    accounts.delete("dave")
    accounts.put("heidi", "40")
    say("deleted dave, opened heidi (no transaction)")
    long_txn.commit()
    say(f"txn {long_txn.id} committed (it began before the checkpoint)")
    loser = env.begin()
    accounts.put("erin", "0", txn=loser)
    env.sync()
    say(f"txn {loser.id} wrote erin=0 (on disk after a sync, never committed)")
    accounts.put("ivan", "90")
    env.log.flush()
    say("opened ivan: written, never synced")
    return BankRun(disk, tuple(story))


def bank_disk() -> SimDisk:
    """A copy of the bank workload's disk, before any crash."""
    return _bank_run().disk.clone()


def bank_story() -> list[tuple[int, str]]:
    return list(_bank_run().story)


def bank_writes() -> list[int]:
    """Event indices of the workload's disk writes (write k is ``bank_writes()[k - 1]``)."""
    return [e.index for e in _bank_run().disk.events if e.kind == "write"]


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
def _recover(after_write: int, keep: str) -> tuple[tuple[PhasePicture, ...], dict[bytes, bytes], str]:
    run = _bank_run()
    event = run.disk.events[bank_writes()[after_write - 1]]
    image = run.disk.crash_image(event.index, KEEP_MODES[keep])
    pictures: list[tuple[str, TreeAndLog | None]] = []

    def listener(name: str, env: Environment) -> None:
        picture = tree_and_log(env, DB) if env.db_tree.get(DB) is not None else None
        pictures.append((name, picture))

    env = Environment(image, demo_config(), EnvironmentHooks(), phase_listener=listener)
    phases = tuple(PhasePicture(p.name, tuple(p.lines), picture)
                   for p, (_, picture) in zip(env.recovery_info.phases, pictures))
    found = records(env).get(DB, {})
    return phases, found, str(event)


def logstore_crash_demo(after_write: int, keep: str = "nothing", phase: int = 10) -> LogstoreCrashDemo:
    """Crash the bank workload after its ``after_write``-th write; show recovery phase ``phase`` (0-based)."""
    writes = bank_writes()
    if not 1 <= after_write <= len(writes):
        raise ValueError(f"after_write must be between 1 and {len(writes)}, not {after_write}")
    if keep not in KEEP_MODES:
        raise ValueError(f"keep must be one of {sorted(KEEP_MODES)}, not {keep!r}")
    phases, found, event = _recover(after_write, keep)
    if not 0 <= phase < len(phases):
        raise ValueError(f"phase must be between 0 and {len(phases) - 1}, not {phase}")
    chosen = phases[phase]
    event_index = writes[after_write - 1]
    happened = tuple(what for index, what in _bank_run().story if index <= event_index)
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


__all__ = ["checkpoint_demo_env", "TREE_OPS", "TreeStep", "tree_step", "describe_op", "bank_disk", "bank_story", "bank_writes", "logstore_crash_demo", "LogstoreCrashDemo", "PhasePicture",
           "worked_cases_figure", "demo_config", "KEEP_MODES", "DB"]


# -- notebook 09: a tree growing in the log, operation by operation -------------------------------
TREE_OPS: tuple[tuple[str, ...], ...] = (
    ("put", "alice", "100"), ("put", "bob", "50"), ("put", "carol", "75"), ("put", "dave", "20"),
    ("put", "erin", "5"), ("put", "frank", "60"), ("put", "grace", "35"), ("put", "heidi", "40"),
    ("checkpoint",), ("put", "bob", "80"), ("put", "alice", "70"), ("delete", "dave"), ("put", "ivan", "90"),
    ("put", "judy", "15"), ("checkpoint",), ("put", "erin", "0"), ("delete", "carol"), ("checkpoint",),
)


@dataclass(frozen=True)
class TreeStep:
    step: int
    operation: str
    lsn: str | None  # where the operation's entry went
    figure: Figure
    picture: TreeAndLog
    env: Environment

    def summary(self) -> str:
        where = f" -> {self.lsn}" if self.lsn else ""
        obsolete = sum(1 for b in self.picture.boxes if b.obsolete)
        return (f"after step {self.step}: {self.operation}{where}; the log holds {len(self.picture.boxes)} entries, "
                f"{obsolete} of them obsolete; the tree has {len(self.picture.view.nodes())} nodes")


def describe_op(op: tuple[str, ...]) -> str:
    if op[0] == "put":
        return f"put {op[1]}={op[2]}"
    if op[0] == "delete":
        return f"delete {op[1]}"
    return op[0]


@lru_cache(maxsize=32)
def tree_step(step: int) -> TreeStep:
    """The tree demo's environment after its first ``step`` operations, drawn (pure: replays from scratch)."""
    if not 0 <= step <= len(TREE_OPS):
        raise ValueError(f"step must be between 0 and {len(TREE_OPS)}, not {step}")
    env = Environment.open(SimDisk("tree-demo"), demo_config(file_max=4096))
    db = env.database(DB)
    lsn = None
    for op in TREE_OPS[:step]:
        if op[0] == "put":
            lsn = db.put(op[1], op[2])
        elif op[0] == "delete":
            lsn = db.delete(op[1])
        else:
            lsn = env.checkpoint().ckpt_end_lsn
    picture = tree_and_log(env, DB)
    operation = describe_op(TREE_OPS[step - 1]) if step else "a new environment"
    figure = draw_tree_and_log(picture, title=f"step {step}: {operation}")
    return TreeStep(step, operation, str(lsn) if lsn is not None else None, figure, picture, env)


# -- notebook 10: a checkpoint with work to do on every level ----------------------------------------
def checkpoint_demo_env() -> Environment:
    """24 accounts in a 3-level tree, all logged; then dirty BINs under two level-2 INs, and one dirty level-2 IN.

    A checkpoint of it has work on levels 1 and 2, so its highest flush level is 2 (3 with
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
