"""The lock scenarios of ``notebooks/05_locks.ipynb``, the tour and ``figures/``.

Each scenario is a script of steps, each step one call in one transaction's
thread, run through :class:`~minidb.pagestore.lock.Interleaving` so that the
threads really block and yet every run gives the same result.
:func:`lock_step` is the pure function behind the notebook's controls: it
replays a scenario up to step ``k`` on a fresh lock manager and returns the
lock table, the waits-for graph, the digests, what the step printed and a
picture.

The scenarios:

- ``hierarchy``: implicit parent locks; a page lock that must wait for an
  IX; a reader queued behind it although compatible (first come, first
  served); a conversion; the queue draining as transactions commit.
- ``escalation``: with a threshold of 4, T1's fourth record lock on a page
  becomes an SH lock on the page; the next read is covered; a writer waits.
- ``cycle``: three transactions in a cycle. T1's digest is refreshed when T2
  starts waiting, so T3, closing the cycle, finds its own fingerprint in T1's
  digest and, the youngest of the two, is the victim.
- ``upgrade``: two readers both convert to EX: the younger is the victim and
  keeps its SH until it aborts.
- ``no deadlock``: waiters behind waiters and chains of waits, no cycle: no victim.
- ``false positive``: a 4-bit bitmap and three threads: the third must share
  bits, and finds "itself" in a digest without any cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from matplotlib.figure import Figure

from minidb.pagestore import PageId, RecordId, StoreId
from minidb.pagestore.lock import Duration, Interleaving, LockId, LockManager, LockTableSnapshot, WaitsForGraph
from minidb.pagestore.lock.modes import EX, IS, IX, SH, LockMode
from minidb.viz.locks import draw_lock_state


@dataclass(frozen=True)
class DemoTxn:
    """A lock owner for the demonstrations (the transaction manager's transactions look the same)."""

    txn_id: int


def rec(page: int, slot: int) -> LockId:
    return LockId.record(RecordId(1, 3, page, slot))


def page(number: int) -> LockId:
    return LockId.page(PageId(1, 3, number))


STORE = LockId.store(StoreId(1, 3))


@dataclass(frozen=True)
class Action:
    """One step: ``txn`` locks ``lock_id`` in ``mode`` (or releases everything, or unlocks)."""

    description: str
    txn: int
    verb: str  # "lock", "release", "unlock"
    lock_id: LockId | None = None
    mode: LockMode | None = None
    duration: Duration = Duration.LONG


def lock(description: str, txn: int, lock_id: LockId, mode: LockMode,
         duration: Duration = Duration.LONG) -> Action:
    return Action(description, txn, "lock", lock_id, mode, duration)


def release(description: str, txn: int) -> Action:
    return Action(description, txn, "release")


@dataclass(frozen=True)
class Scenario:
    title: str
    steps: tuple[Action, ...]
    options: dict = field(default_factory=dict)


SCENARIOS: dict[str, Scenario] = {
    "hierarchy": Scenario("Implicit parent locks and a FIFO queue", (
        lock("T1 updates r(1.3.48.2): EX there, IX on v(1), s(1.3), p(1.3.48)", 1, rec(48, 2), EX),
        lock("T2 reads r(1.3.48.3): SH there, IS above it", 2, rec(48, 3), SH),
        lock("T3 reads the whole page p(1.3.48): SH conflicts with T1's IX, T3 waits", 3, page(48), SH),
        lock("T4 reads r(1.3.48.3): its IS on the page is compatible, but T3 came first", 4, rec(48, 3), SH),
        lock("T2 updates r(1.3.48.3): IS->IX above it and SH->EX on it, at once: conversions do not queue "
             "behind the waiters", 2, rec(48, 3), EX),
        release("T1 commits: T3's SH on the page still conflicts with T2's IX", 1),
        release("T2 commits: T3 and then T4 are granted, in arrival order", 2),
    ), {"escalation_threshold": None}),
    "escalation": Scenario("Escalation after 4 record locks", (
        lock("T1 reads r(1.3.50.0)", 1, rec(50, 0), SH),
        lock("T1 reads r(1.3.50.1)", 1, rec(50, 1), SH),
        lock("T1 reads r(1.3.50.2)", 1, rec(50, 2), SH),
        lock("T1 reads r(1.3.50.3): 4 record locks under p(1.3.50), the page escalates to SH", 1, rec(50, 3), SH),
        lock("T1 reads r(1.3.50.4): covered by the page's SH, no lock taken", 1, rec(50, 4), SH),
        lock("T2 updates r(1.3.50.9): IX on the page conflicts with T1's SH, T2 waits", 2, rec(50, 9), EX),
        release("T1 commits: T2 gets the page and the record", 1),
    ), {"escalation_threshold": 4}),
    "cycle": Scenario("A deadlock of three transactions, found by Dreadlocks", (
        lock("T1 updates r(1.3.48.1)", 1, rec(48, 1), EX),
        lock("T2 updates r(1.3.48.2)", 2, rec(48, 2), EX),
        lock("T3 updates r(1.3.48.3)", 3, rec(48, 3), EX),
        lock("T1 asks for r(1.3.48.2): waits for T2; digest = T1's bits | T2's", 1, rec(48, 2), EX),
        lock("T2 asks for r(1.3.48.3): waits for T3; T1's digest is refreshed with T3's bits", 2, rec(48, 3), SH),
        lock("T3 asks for r(1.3.48.1): its fingerprint is in T1's digest: a cycle, T3 the victim", 3,
             rec(48, 1), SH),
        release("T3 aborts: T2 gets r(1.3.48.3)", 3),
        release("T2 commits: T1 gets r(1.3.48.2)", 2),
    ), {"escalation_threshold": None, "fingerprint_bits": 16, "bits_per_fingerprint": 2}),
    "upgrade": Scenario("The upgrade deadlock: two readers both convert to EX", (
        lock("T1 reads p(1.3.48)", 1, page(48), SH),
        lock("T2 reads p(1.3.48)", 2, page(48), SH),
        lock("T1 converts to EX: waits for T2's SH", 1, page(48), EX),
        lock("T2 converts to EX: finds itself in T1's digest; the younger T2 is the victim, keeps SH", 2,
             page(48), EX),
        release("T2 aborts: T1's conversion is granted", 2),
    ), {"escalation_threshold": None, "fingerprint_bits": 16, "bits_per_fingerprint": 2}),
    "no deadlock": Scenario("Waiting behind a compatible waiter is no deadlock", (
        lock("T2 reads r(1.3.48.9)", 2, rec(48, 9), SH),
        lock("T1 updates r(1.3.48.2)", 1, rec(48, 2), EX),
        lock("T2 reads r(1.3.48.2): waits for T1", 2, rec(48, 2), SH),
        lock("T3 reads r(1.3.48.2): waits for T1 and behind T2 (compatible with it)", 3, rec(48, 2), SH),
        lock("T4 updates r(1.3.48.9): waits for T2, which waits for T1: a chain, no cycle", 4, rec(48, 9), EX),
        release("T1 commits: T2 and T3 read together", 1),
        release("T2 commits: T4 gets r(1.3.48.9)", 2),
    ), {"escalation_threshold": None, "fingerprint_bits": 16, "bits_per_fingerprint": 2}),
    "false positive": Scenario("A false positive: four bits for three threads", (
        lock("T1 updates r(1.3.48.1)", 1, rec(48, 1), EX),
        lock("T2 updates r(1.3.48.2)", 2, rec(48, 2), EX),
        lock("T2 asks for r(1.3.48.1): waits for T1; T2's digest has all 4 bits", 2, rec(48, 1), EX),
        lock("T3 (a third thread: it must share bits) asks for r(1.3.48.2): it finds its bits in T2's digest",
             3, rec(48, 2), SH),
    ), {"escalation_threshold": None, "fingerprint_bits": 4, "bits_per_fingerprint": 2}),
}

@dataclass(frozen=True)
class LockStep:
    scenario: str
    step: int
    description: str
    log: tuple[str, ...]  # the interleaving's log so far
    new_log: tuple[str, ...]  # what this step added
    trace: tuple[str, ...]  # the lock manager's trace of this step
    snapshot: LockTableSnapshot
    graph: WaitsForGraph
    stats: dict[str, int]
    figure: Figure
    detection: tuple[LockTableSnapshot, WaitsForGraph] | None  # the table when this step found a cycle

    def summary(self) -> str:
        lines = [f"step {self.step}: {self.description}"]
        lines += [f"  script: {line.strip()}" for line in self.new_log]
        lines += [f"  locks:  {line}" for line in self.trace]
        return "\n".join(lines)


def run_action(lm: LockManager, script: Interleaving, owners: dict[int, DemoTxn], action: Action) -> None:
    owner = owners.setdefault(action.txn, DemoTxn(action.txn))
    if action.verb == "lock":
        script.lock(owner, action.lock_id, action.mode, action.duration)  # type: ignore[arg-type]
    elif action.verb == "release":
        script.release_all(owner)
    else:
        script.unlock(owner, action.lock_id)  # type: ignore[arg-type]


def lock_step(scenario: str, step: int) -> LockStep:
    """The lock table after the first ``step`` steps of ``scenario`` (0: empty)."""
    if scenario not in SCENARIOS:
        raise ValueError(f"scenario must be one of {', '.join(SCENARIOS)}, not {scenario!r}")
    plan = SCENARIOS[scenario]
    if not 0 <= step <= len(plan.steps):
        raise ValueError(f"step must be between 0 and {len(plan.steps)} for {scenario!r}, not {step}")
    lm = LockManager(trace=True, **plan.options)
    owners: dict[int, DemoTxn] = {}
    found: list[tuple[LockTableSnapshot, WaitsForGraph]] = []

    def on_event(event: str, *_: object) -> None:
        if event == "deadlock":  # called under the manager's mutex, before the victim leaves
            found.append((lm.snapshot(), lm.waits_for()))

    lm.add_listener(on_event)
    script = Interleaving(lm)
    try:
        trace_from = log_from = 0
        for action in plan.steps[:step]:
            trace_from, log_from = len(lm.trace.lines), len(script.log)
            found.clear()
            run_action(lm, script, owners, action)
        snapshot, graph, stats = lm.snapshot(), lm.waits_for(), lm.stats.as_dict()
        trace = tuple(lm.trace.lines[trace_from:]) if step else ()
        log = tuple(script.log)
        new_log = log[log_from:] if step else ()
    finally:
        script.close()
    action = plan.steps[step - 1] if step else None
    description = action.description if action else plan.title + ": nothing locked yet"
    highlight = (action.lock_id,) if action is not None and action.lock_id is not None else ()
    figure = draw_lock_state(snapshot, graph, title=f"{scenario}, step {step}: {_short(description)}",
                             highlight=highlight)
    detection = found[0] if step and found else None
    return LockStep(scenario, step, description, log, new_log, trace, snapshot, graph, stats, figure, detection)


def _short(text: str, width: int = 110) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def steps_of(scenario: str) -> int:
    return len(SCENARIOS[scenario].steps)


def detection_figure(step: LockStep) -> Figure:
    """The lock table, the waits-for graph (the cycle in red) and the digests at the moment the step
    found a cycle, before the victim left."""
    if step.detection is None:
        raise ValueError(f"step {step.step} of {step.scenario!r} found no cycle")
    snapshot, graph = step.detection
    return draw_lock_state(snapshot, graph, title=f"{step.scenario}, step {step.step}: the cycle as Dreadlocks "
                                                  f"found it, before the victim leaves")
