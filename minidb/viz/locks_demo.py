"""The lock workloads of ``notebooks/05_locks.ipynb`` and ``05b_deadlocks.ipynb``, the tour and ``figures/``.

A workload is a *script*: a list of operations, plain tuples a student can
edit in a notebook cell (see :mod:`minidb.viz.script`)::

    script = [
        ("lock", "T1", "r(1.3.48.1)", "EX"),   # T1 updates a record
        ("lock", "T2", "r(1.3.48.1)", "SH"),   # T2 wants to read it: waits for T1
        ("commit", "T1"),                      # T1's locks go: T2 is granted
    ]

Each transaction runs in its **own thread**, through
:class:`~minidb.pagestore.lock.Interleaving`, so a waiting request really
blocks, and yet every run gives the same result (each step waits until every
thread has finished or is blocked). :func:`lock_step` is the pure function
behind the notebooks' controls: it replays the first ``k`` operations on a
fresh lock manager and returns the lock table, the waits-for graph, the
digests, what the step printed and a picture.

Invariants of a script, checked before anything runs: transactions are named
``T1``, ``T2``, ...; a lock id prints like the page store's ids (``v(1)``,
``s(1.3)``, ``p(1.3.48)``, ``r(1.3.48.2)``); a mode is one of Shore's seven;
only a transaction holding locks can commit or abort. While it runs: a
transaction that waits can do nothing else until it is granted or chosen as
a deadlock victim. A bad operation raises :class:`~minidb.viz.script.ScriptError`
naming its step.

The workloads (``SCRIPT`` is the first; all are in ``SCENARIOS`` with the
lock manager's settings they need):

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

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from matplotlib.figure import Figure

from minidb.pagestore import PageId, RecordId, StoreId
from minidb.pagestore.lock import (
    LOCK_MANAGER,
    BadLockRequest,
    Interleaving,
    LockId,
    LockMode,
    LockTableSnapshot,
    WaitsForGraph,
)
from minidb.viz.locks import draw_lock_state
from minidb.viz.script import Op, checked, op_table, script_error


@dataclass(frozen=True)
class DemoTxn:
    """A lock owner for the demonstrations (the transaction manager's transactions look the same)."""

    txn_id: int


def rec(page: int, slot: int) -> LockId:
    return LockId.record(RecordId(1, 3, page, slot))


def page(number: int) -> LockId:
    return LockId.page(PageId(1, 3, number))


STORE = LockId.store(StoreId(1, 3))

OPS = op_table(
    Op("lock", ("txn", "lock_id", "mode"), "txn asks for lock_id (v(1), s(1.3), p(1.3.48), r(1.3.48.2)) in mode "
                                           "(IS IX SH SIX UD EX); it waits if the mode conflicts"),
    Op("commit", ("txn",), "txn commits: all its locks are released, waiters may be granted"),
    Op("abort", ("txn",), "txn aborts (what a deadlock victim must do): all its locks are released"),
)

# The lock manager's settings for the demonstrations: no escalation, and a 16-bit Dreadlocks bitmap with
# 2 bits per fingerprint (the default is 3 of 64), so that the digests fit in a picture.
SETTINGS = {"escalation_threshold": None, "fingerprint_bits": 16, "bits_per_fingerprint": 2}

SCRIPT = [
    ("lock", "T1", "r(1.3.48.2)", "EX"),  # T1 updates a record: IX on v(1), s(1.3), p(1.3.48) first
    ("lock", "T2", "r(1.3.48.3)", "SH"),  # T2 reads another record of the page: IS above it
    ("lock", "T3", "p(1.3.48)", "SH"),    # T3 reads the whole page: SH conflicts with T1's IX, T3 waits
    ("lock", "T4", "r(1.3.48.3)", "SH"),  # T4's IS on the page is compatible, but T3 came first: T4 waits
    ("lock", "T2", "r(1.3.48.3)", "EX"),  # T2 converts IS->IX and SH->EX: conversions do not queue
    ("commit", "T1"),                     # T3's SH on the page still conflicts with T2's IX
    ("commit", "T2"),                     # T3, then T4 are granted, in arrival order
]


@dataclass(frozen=True)
class Scenario:
    title: str
    script: tuple[tuple, ...]
    settings: dict = field(default_factory=lambda: dict(SETTINGS))


SCENARIOS: dict[str, Scenario] = {
    "hierarchy": Scenario("Implicit parent locks and a FIFO queue", tuple(SCRIPT)),
    "escalation": Scenario("Escalation after 4 record locks", (
        ("lock", "T1", "r(1.3.50.0)", "SH"),
        ("lock", "T1", "r(1.3.50.1)", "SH"),
        ("lock", "T1", "r(1.3.50.2)", "SH"),
        ("lock", "T1", "r(1.3.50.3)", "SH"),  # the fourth record lock under p(1.3.50): the page escalates to SH
        ("lock", "T1", "r(1.3.50.4)", "SH"),  # covered by the page's SH: no lock taken
        ("lock", "T2", "r(1.3.50.9)", "EX"),  # IX on the page conflicts with T1's SH: T2 waits
        ("commit", "T1"),                     # T2 gets the page and the record
    ), {**SETTINGS, "escalation_threshold": 4}),
    "cycle": Scenario("A deadlock of three transactions, found by Dreadlocks", (
        ("lock", "T1", "r(1.3.48.1)", "EX"),
        ("lock", "T2", "r(1.3.48.2)", "EX"),
        ("lock", "T3", "r(1.3.48.3)", "EX"),
        ("lock", "T1", "r(1.3.48.2)", "EX"),  # waits for T2: T1's digest = T1's bits | T2's
        ("lock", "T2", "r(1.3.48.3)", "SH"),  # waits for T3: T1's digest is refreshed with T3's bits
        ("lock", "T3", "r(1.3.48.1)", "SH"),  # T3 finds its fingerprint in T1's digest: a cycle, T3 the victim
        ("abort", "T3"),                      # T2 gets r(1.3.48.3)
        ("commit", "T2"),                     # T1 gets r(1.3.48.2)
    )),
    "upgrade": Scenario("The upgrade deadlock: two readers both convert to EX", (
        ("lock", "T1", "p(1.3.48)", "SH"),
        ("lock", "T2", "p(1.3.48)", "SH"),
        ("lock", "T1", "p(1.3.48)", "EX"),  # waits for T2's SH
        ("lock", "T2", "p(1.3.48)", "EX"),  # finds itself in T1's digest: the younger T2 is the victim, keeps SH
        ("abort", "T2"),                    # T1's conversion is granted
    )),
    "no deadlock": Scenario("Waiting behind a compatible waiter is no deadlock", (
        ("lock", "T2", "r(1.3.48.9)", "SH"),
        ("lock", "T1", "r(1.3.48.2)", "EX"),
        ("lock", "T2", "r(1.3.48.2)", "SH"),  # waits for T1
        ("lock", "T3", "r(1.3.48.2)", "SH"),  # waits for T1 and behind T2 (compatible with it)
        ("lock", "T4", "r(1.3.48.9)", "EX"),  # waits for T2, which waits for T1: a chain, no cycle
        ("commit", "T1"),                     # T2 and T3 read together
        ("commit", "T2"),                     # T4 gets r(1.3.48.9)
    )),
    "false positive": Scenario("A false positive: four bits for three threads", (
        ("lock", "T1", "r(1.3.48.1)", "EX"),
        ("lock", "T2", "r(1.3.48.2)", "EX"),
        ("lock", "T2", "r(1.3.48.1)", "EX"),  # waits for T1: T2's digest has all 4 bits
        ("lock", "T3", "r(1.3.48.2)", "SH"),  # a third thread must share bits: T3 finds them in T2's digest
    ), {**SETTINGS, "fingerprint_bits": 4}),
}


@dataclass(frozen=True)
class LockStep:
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


_TXN = re.compile(r"T([1-9]\d*)")
_OUTCOMES = {"ok": "granted", "blocked": "waits", "DeadlockVictim": "deadlock victim"}


def parsed(script: Sequence[Sequence[object]]) -> list[tuple]:
    """The script with its arguments checked and turned into engine values:
    ``("lock", txn_id, LockId, LockMode)``, ``("commit", txn_id)``, ``("abort", txn_id)``."""
    result: list[tuple] = []
    active: set[int] = set()
    for step, operation in enumerate(checked(script, OPS), 1):
        name, txn = operation[0], operation[1]
        match = _TXN.fullmatch(txn) if isinstance(txn, str) else None
        if match is None:
            raise script_error(step, operation, f"a transaction is named 'T1', 'T2', ..., not {txn!r}")
        txn_id = int(match.group(1))
        if name == "lock":
            lock_id, mode = operation[2], operation[3]
            try:
                lid = LockId.parse(lock_id) if isinstance(lock_id, str) else None
            except BadLockRequest as e:
                raise script_error(step, operation, str(e)) from None
            if lid is None:
                raise script_error(step, operation, f"a lock id is a string like 'r(1.3.48.2)', not {lock_id!r}")
            if mode not in LockMode.__members__ or mode == "NL":
                raise script_error(step, operation, f"the mode is one of IS, IX, SH, SIX, UD, EX, not {mode!r}")
            active.add(txn_id)
            result.append((name, txn_id, lid, LockMode[mode]))
        else:
            if txn_id not in active:
                raise script_error(step, operation, f"{txn} holds no locks: it has locked nothing since it began "
                                                    "or it has already ended")
            active.discard(txn_id)
            result.append((name, txn_id))
    return result


def describe(action: tuple) -> str:
    """An operation in words: "T3 asks for SH on p(1.3.48)", "T1 commits"."""
    if action[0] == "lock":
        return f"T{action[1]} asks for {action[3].name} on {action[2]}"
    return f"T{action[1]} {action[0]}s"


def lock_step(step: int, script: Sequence[Sequence[object]] = SCRIPT, **settings: object) -> LockStep:
    """The lock table after the first ``step`` operations of ``script`` (0: empty).

    ``settings`` go to the :class:`~minidb.pagestore.lock.LockManager` (``escalation_threshold``,
    ``fingerprint_bits``, ``bits_per_fingerprint``); those not given are ``SETTINGS``'."""
    actions = parsed(script)
    if not 0 <= step <= len(actions):
        raise ValueError(f"step must be between 0 and {len(actions)} for this script, not {step}")
    lm = LOCK_MANAGER.call(trace=True, **{**SETTINGS, **settings})  # type: ignore[arg-type]
    owners: dict[int, DemoTxn] = {}
    found: list[tuple[LockTableSnapshot, WaitsForGraph]] = []

    def on_event(event: str, *_: object) -> None:
        if event == "deadlock":  # called under the manager's mutex, before the victim leaves
            found.append((lm.snapshot(), lm.waits_for()))

    lm.add_listener(on_event)
    interleaving = Interleaving(lm)
    try:
        trace_from = log_from = 0
        for number, action in enumerate(actions[:step], 1):
            owner = owners.setdefault(action[1], DemoTxn(action[1]))
            if interleaving.busy(owner):
                waiting = next(s for s in reversed(interleaving.steps) if s.txn_id == owner.txn_id)
                raise script_error(number, tuple(script[number - 1]),
                                   f"T{owner.txn_id} still waits (step {waiting.number}): it can do nothing "
                                   "until it is granted or chosen as a deadlock victim")
            trace_from, log_from = len(lm.trace.lines), len(interleaving.log)
            found.clear()
            if action[0] == "lock":
                interleaving.lock(owner, action[2], action[3])
            else:
                interleaving.run(owner, action[0], partial(lm.release_all, owner))
        snapshot, graph, stats = lm.snapshot(), lm.waits_for(), lm.stats.as_dict()
        trace = tuple(lm.trace.lines[trace_from:]) if step else ()
        log = tuple(interleaving.log)
        new_log = log[log_from:] if step else ()
    finally:
        interleaving.close()
    if step:
        action = actions[step - 1]
        outcomes = [(line.split(":")[0].split()[-1], line.rsplit("-> ", 1)[-1]) for line in new_log]
        description = describe(action) + (f": {_OUTCOMES.get(outcomes[0][1], outcomes[0][1])}"
                                          if action[0] == "lock" else "")
        if outcomes[1:]:  # earlier requests this step let finish
            description += "; then " + ", ".join(f"{txn} {_OUTCOMES.get(how, how)}" for txn, how in outcomes[1:])
        highlight = (action[2],) if action[0] == "lock" else ()
    else:
        description, highlight = "nothing locked yet", ()
    figure = draw_lock_state(snapshot, graph, title=f"step {step}: {description}", highlight=highlight)
    detection = found[0] if step and found else None
    return LockStep(step, description, log, new_log, trace, snapshot, graph, stats, figure, detection)


def scenario_step(name: str, step: int) -> LockStep:
    """``lock_step`` of one of the ``SCENARIOS``, with its settings."""
    if name not in SCENARIOS:
        raise ValueError(f"scenario must be one of {', '.join(SCENARIOS)}, not {name!r}")
    scenario = SCENARIOS[name]
    return lock_step(step, scenario.script, **scenario.settings)


def detection_figure(step: LockStep) -> Figure:
    """The lock table, the waits-for graph (the cycle in red) and the digests at the moment the step
    found a cycle, before the victim left."""
    if step.detection is None:
        raise ValueError(f"step {step.step} found no cycle")
    snapshot, graph = step.detection
    return draw_lock_state(snapshot, graph, title=f"step {step.step}: the cycle as Dreadlocks found it, "
                                                  "before the victim leaves")

