"""Making it fast: the lock manager's reference and its accelerated twin, side by side (notebook 17).

The reference lock manager (:mod:`minidb.pagestore.lock.manager`) is the code
a student reads; its twin (:mod:`minidb.fast.pagestore.lock.manager`) grants
the usual request and unlock inline. This module runs both on the same
workload and shows where the twin saves work and that it changes nothing else.

A workload is a *script* (see :mod:`minidb.viz.script`), one call of the lock
manager per line, in one thread (a conflicting request fails at once, with
timeout 0, instead of waiting)::

    script = [
        ("lock", "T1", "r(1.3.48.1)", "SH", "short"),  # T1 reads a record ...
        ("unlock", "T1", "r(1.3.48.1)"),               # ... and lets it go
        ("commit", "T1"),                              # release_all
    ]

:func:`run` replays a script ``times`` times on a fresh lock manager, the
reference, the twin, or any class standing in for it (a twin broken on
purpose), and keeps after every call what the agreement test compares: the
answer (``ok`` or the error), the lock table (:meth:`snapshot`, durations
included), the statistics and the new trace lines. With ``profile`` it counts
the calls of every engine function (``cProfile``). Only a warm replay is
profiled: the script runs once unprofiled first, so that the engine's caches
(a lock id's ancestors) hold what they will hold in a long run, and building
the manager is not counted. Counts are then the same on every run, times are
not, so the pictures show counts and :func:`time_both` reports a ratio.

Pictures: :func:`draw_call_counts` (calls per function, reference against
twin) and :func:`draw_agreement` (step by step, equal or not). The widget's
pure callback is :func:`fast_step`; :func:`disk_state` is what a run on a
simulated disk leaves, byte for byte, as the agreement test reads it.
"""

from __future__ import annotations

import cProfile
import inspect
import os
import pstats
import re
import textwrap
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

import minidb
from minidb import impl
from minidb.io import SimDisk
from minidb.pagestore.lock import LOCK_MANAGER, BadLockRequest, Duration, LockId, LockMode, LockTimeout
from minidb.viz.script import Op, checked, op_table, script_error
from minidb.viz.style import BAD, DURABLE, SMALL, TEXT, TITLE, WIDTH, new_figure, text_width, title_lines

MANAGER = "pagestore.lock.manager.LockManager"  # the hot spot's name (minidb.impl)
IMPLS = (impl.ENGINE, impl.FAST)
# One colour per implementation (and for a twin broken on purpose), none like another.
IMPL_COLOURS = {impl.ENGINE: "#4e79a7", impl.FAST: "#f28e2b", "broken": "#b07aa1"}
SAME, DIFFERENT = DURABLE, BAD
SETTINGS = {"escalation_threshold": None, "trace": True}

OPS = op_table(
    Op("lock", ("txn", "lock_id", "mode", "duration"),
       "txn asks for lock_id (v(1), s(1.3), p(1.3.48), r(1.3.48.2)) in mode (IS IX SH SIX UD EX) for duration "
       "(instant short long); a conflict fails at once"),
    Op("unlock", ("txn", "lock_id"), "txn releases a short lock early (refused for a long one)"),
    Op("commit", ("txn",), "txn ends: every lock it holds is released (release_all)"),
)

SCRIPT = [
    ("lock", "T1", "r(1.3.48.1)", "EX", "long"),   # T1 updates a record: IX on v(1), s(1.3), p(1.3.48) first
    ("lock", "T1", "r(1.3.48.2)", "SH", "short"),  # T1 reads the next record (a short lock) ...
    ("unlock", "T1", "r(1.3.48.2)"),               # ... and lets it go when it moves on
    ("lock", "T1", "r(1.3.48.3)", "SH", "short"),
    ("unlock", "T1", "r(1.3.48.3)"),
    ("lock", "T1", "r(1.3.48.4)", "SH", "short"),
    ("unlock", "T1", "r(1.3.48.4)"),
    ("lock", "T1", "r(1.3.48.5)", "SH", "short"),
    ("unlock", "T1", "r(1.3.48.5)"),
    ("lock", "T1", "r(1.3.48.6)", "EX", "long"),   # another update, under the page's IX it holds
    ("unlock", "T1", "r(1.3.48.6)"),               # refused: a long lock goes at commit
    ("lock", "T2", "r(1.3.50.1)", "SH", "long"),   # T2 reads on another page
    ("lock", "T2", "r(1.3.48.6)", "SH", "long"),   # T2 wants T1's record: fails at once (timeout 0)
    ("commit", "T1"),
    ("commit", "T2"),
]

_TXN = re.compile(r"T([1-9]\d*)")


@dataclass(frozen=True)
class Owner:
    """A lock owner (the transaction manager's transactions look the same to the lock manager)."""

    txn_id: int


def parsed(script: Sequence[Sequence[object]]) -> list[tuple]:
    """The script as engine values: ``("lock", txn_id, LockId, LockMode, Duration)``, ``("unlock", txn_id,
    LockId)``, ``("commit", txn_id)``; a bad operation is a ScriptError naming its step."""
    result: list[tuple] = []
    for step, operation in enumerate(checked(script, OPS), 1):
        name, txn = operation[0], operation[1]
        match = _TXN.fullmatch(txn) if isinstance(txn, str) else None
        if match is None:
            raise script_error(step, operation, f"a transaction is named 'T1', 'T2', ..., not {txn!r}")
        values: list[Any] = [name, int(match.group(1))]
        if name in ("lock", "unlock"):
            try:
                values.append(LockId.parse(operation[2]) if isinstance(operation[2], str) else None)
            except BadLockRequest as e:
                raise script_error(step, operation, str(e)) from None
            if values[-1] is None:
                raise script_error(step, operation, f"a lock id is a string like 'r(1.3.48.2)', not {operation[2]!r}")
        if name == "lock":
            mode, duration = operation[3], operation[4]
            if mode not in LockMode.__members__ or mode == "NL":
                raise script_error(step, operation, f"the mode is one of IS, IX, SH, SIX, UD, EX, not {mode!r}")
            if not isinstance(duration, str) or duration.upper() not in Duration.__members__:
                raise script_error(step, operation, f"the duration is instant, short or long, not {duration!r}")
            values += [LockMode[mode], Duration[duration.upper()]]
        result.append(tuple(values))
    return result


@dataclass
class Run:
    """What one implementation did with a workload: per call, the answer and the state it left."""

    name: str
    calls: list[tuple]                               # the script's calls, repeated
    steps: list[tuple] = field(default_factory=list)  # (answer, snapshot, statistics, new trace lines)
    counts: Counter = field(default_factory=Counter)  # engine function -> calls (with profile)
    other_calls: int = 0                              # calls of everything else (C functions, the library)

    @property
    def answers(self) -> list[str]:
        return [step[0] for step in self.steps]

    @property
    def engine_calls(self) -> int:
        return sum(self.counts.values())


def manager_class(which: str | type) -> type:
    """The lock manager class ``which`` names: ``reference``, ``fast`` (that twin alone), or a class."""
    if isinstance(which, type):
        return which
    with impl.using(which, only=[MANAGER] if which == impl.FAST else None):
        return LOCK_MANAGER.chosen()


def run(script: Sequence[Sequence[object]] = SCRIPT, which: str | type = impl.ENGINE, times: int = 1,
        profile: bool = False, name: str | None = None) -> Run:
    """Replay ``script`` ``times`` times on a fresh lock manager of ``which``; with ``profile``, count calls
    (the trace is then off, as in a real run, and the states are not kept)."""
    calls = parsed(script) * times
    cls = manager_class(which)
    manager = cls(**{**SETTINGS, "trace": not profile})
    owners = {number: Owner(number) for number in {call[1] for call in calls}}
    result = Run(name or (which if isinstance(which, str) else which.__name__), calls)
    profiler = cProfile.Profile() if profile else None
    if profiler is not None:
        warm = cls(**{**SETTINGS, "trace": False})
        for call in calls:  # once unprofiled first: the engine's caches (a lock id's ancestors) filled
            _call(warm, owners[call[1]], call)
        profiler.enable()
    for call in calls:
        seen = len(manager.trace.lines)
        answer = _call(manager, owners[call[1]], call)
        if profiler is None:
            result.steps.append((answer, manager.snapshot(), manager.stats.as_dict(), manager.trace.lines[seen:]))
    if profiler is not None:
        profiler.disable()
        result.counts, result.other_calls = call_counts(pstats.Stats(profiler))
    return result


def _call(manager: Any, owner: Owner, call: tuple) -> str:
    try:
        if call[0] == "lock":
            manager.lock(owner, call[2], call[3], call[4], timeout=0)
        elif call[0] == "unlock":
            manager.unlock(owner, call[2])
        else:
            manager.release_all(owner)
    except (BadLockRequest, LockTimeout) as e:
        return f"{type(e).__name__}: {e}"
    return "ok"


ENGINE_DIR = os.path.dirname(os.path.abspath(minidb.__file__))
FRONT_ENDS = ("viz", "cli", "spark")


def function_label(filename: str, function: str) -> str | None:
    """``manager._acquire`` for a function of the engine (``fast manager.lock`` for a twin's); None for
    anything else (a C function, the standard library)."""
    path = os.path.abspath(filename)
    if not path.startswith(ENGINE_DIR + os.sep):
        return None
    relative = os.path.relpath(path, ENGINE_DIR)
    if relative.split(os.sep)[0] in FRONT_ENDS:
        return None  # the code that drives the workload (this module), not the engine
    stem = os.path.splitext(os.path.basename(relative))[0]
    twin = relative.startswith("fast" + os.sep)
    return f"{'fast ' if twin else ''}{stem}.{function}"


def call_counts(stats: pstats.Stats) -> tuple[Counter, int]:
    """Calls per engine function (by :func:`function_label`), and the calls of everything else."""
    counts: Counter = Counter()
    other = 0
    for (filename, _, function), (_, calls, *_) in stats.stats.items():  # type: ignore[attr-defined]
        label = function_label(filename, function)
        if label is None:
            other += calls
        else:
            counts[label] += calls
    return counts, other


def differences(reference: Run, other: Run) -> list[str | None]:
    """Per step, None where ``other`` left what ``reference`` left, else what differs first."""
    parts = ("the answer", "the lock table", "the statistics", "the trace")
    found: list[str | None] = []
    for mine, theirs in zip(reference.steps, other.steps, strict=True):
        found.append(next((part for part, a, b in zip(parts, mine, theirs, strict=True) if a != b), None))
    return found


def first_difference(reference: Run, other: Run) -> str:
    """The first step where ``other`` differs from ``reference``, in words (or that none does)."""
    for number, (call, what) in enumerate(zip(reference.calls, differences(reference, other), strict=True), 1):
        if what is None:
            continue
        lines = [f"step {number} {describe(call)}: {what} differs"]
        if what == "the lock table":
            held = {o.txn_id: o.held for o in reference.steps[number - 1][1].owners}
            for owner in other.steps[number - 1][1].owners:
                for lock in set(owner.held) - set(held.get(owner.txn_id, ())):
                    lines.append(f"  {other.name}: T{owner.txn_id} holds {held_text(lock)}")
            theirs = {o.txn_id: o.held for o in other.steps[number - 1][1].owners}
            for txn_id, locks in held.items():
                for lock in set(locks) - set(theirs.get(txn_id, ())):
                    lines.append(f"  {reference.name}: T{txn_id} holds {held_text(lock)}")
        else:
            lines += [f"  {reference.name}: {reference.steps[number - 1][_PART[what]]}",
                      f"  {other.name}: {other.steps[number - 1][_PART[what]]}"]
        return "\n".join(lines)
    return f"{other.name} left what {reference.name} left after each of the {len(reference.steps)} steps"


_PART = {"the answer": 0, "the lock table": 1, "the statistics": 2, "the trace": 3}


def held_text(lock: tuple) -> str:
    lock_id, mode, duration = lock
    return f"{lock_id} {mode} {duration.name.lower()}"


def describe(call: tuple) -> str:
    """A call as the script wrote it."""
    words = [call[0], f"T{call[1]}", *(str(v) if not isinstance(v, Duration) else v.name.lower() for v in call[2:])]
    return "(" + ", ".join(repr(w) for w in words) + ")"


def time_both(script: Sequence[Sequence[object]] = SCRIPT, times: int = 200, rounds: int = 5) -> dict[str, float]:
    """Seconds of the best of ``rounds`` replays for the reference and the twin (no profile, no trace kept),
    and their ratio. Times vary from run to run and machine to machine: only the ratio means much."""
    best = {}
    for which in IMPLS:
        cls = manager_class(which)
        calls = parsed(script) * times
        owners = {call[1]: Owner(call[1]) for call in calls}
        seconds = []
        for _ in range(rounds):
            manager = cls(escalation_threshold=None)
            start = time.perf_counter()
            for call in calls:
                _call(manager, owners[call[1]], call)
            seconds.append(time.perf_counter() - start)
        best[which] = min(seconds)
    return {**best, "ratio": best[impl.ENGINE] / best[impl.FAST]}


def excerpt(source: Any, start: str, stop: str | None = None) -> str:
    """The lines of ``source`` (a text, or a function or class, read with ``inspect.getsource``) from the first
    that holds ``start`` to the first after it that holds ``stop`` (included; None: to the end), dedented."""
    text = source if isinstance(source, str) else inspect.getsource(source)
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if start in line), None)
    if first is None:
        raise ValueError(f"no line holds {start!r}")
    last = len(lines) - 1 if stop is None else next((i for i in range(first + 1, len(lines)) if stop in lines[i]), None)
    if last is None:
        raise ValueError(f"no line after {start!r} holds {stop!r}")
    return textwrap.dedent("\n".join(lines[first:last + 1]))


def disk_state(disk: SimDisk) -> dict[str, Any]:
    """What ``disk`` holds and what was done to it: every file's bytes (as read now, and as a crash would
    leave them) and the disk's events in order (each write, fsync and truncate)."""
    files = {name: (disk.open(name).read_all(), disk.durable_bytes(name)) for name in sorted(disk.list())}
    events = [(e.kind, e.name, e.offset, e.data, e.size, e.new_name) for e in disk.events]
    return {"files": files, "events": events}


# == pictures ================================================================================

def top_functions(runs: Sequence[Run], top: int) -> list[str]:
    """The ``top`` engine functions called most in any of ``runs``, most called first (ties by name)."""
    best: Counter = Counter()
    for r in runs:
        for label, calls in r.counts.items():
            best[label] = max(best[label], calls)
    return [label for label, _ in sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:top]]


def draw_call_counts(runs: Sequence[Run], top: int = 12, title: str | None = None) -> Figure:
    """Calls per engine function, one bar per run (reference, twin ...) for each of the ``top`` functions."""
    labels = top_functions(runs, top)
    bar = 0.2  # inches: a bar per run, a row of bars per function
    row = bar * len(runs) + 0.14
    height = 1.5 + row * max(1, len(labels))
    fig = new_figure(WIDTH, height)
    left = (text_width(max(labels, key=len) if labels else "", SMALL) / 72 + 0.3) / WIDTH
    ax = fig.add_axes((left, 0.95 / height, 0.86 - left, 1 - 1.5 / height))
    most = max((r.counts[label] for r in runs for label in labels), default=1) or 1
    for i, label in enumerate(labels):
        for j, r in enumerate(runs):
            y = -(i * row + j * bar)
            calls = r.counts.get(label, 0)
            ax.add_patch(Rectangle((0, y - bar * 0.45), calls, bar * 0.9, facecolor=run_colour(r.name),
                                   edgecolor="none"))
            ax.text(calls + most * 0.01, y, str(calls), va="center", ha="left", fontsize=SMALL)
    ax.set_xlim(0, most * 1.12)
    ax.set_ylim(-(len(labels) * row) + 0.1, bar)
    ax.set_yticks([-(i * row + bar * (len(runs) - 1) / 2) for i in range(len(labels))])
    ax.set_yticklabels(labels, fontsize=SMALL)
    ax.tick_params(axis="x", labelsize=SMALL)
    ax.set_xlabel("calls", fontsize=TEXT)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    totals = ", ".join(f"{r.name} {r.engine_calls}" for r in runs)
    heading = title or f"calls of the engine's functions, the {top} most called (in all: {totals})"
    fig.suptitle(title_lines(heading, WIDTH, TITLE), fontsize=TITLE, y=1 - 0.1 / height, va="top")
    fig.legend(handles=[Patch(facecolor=run_colour(r.name), label=r.name) for r in runs], loc="lower right",
               fontsize=SMALL, ncol=len(runs), frameon=False, bbox_to_anchor=(0.99, 0.0))
    return fig


def run_colour(name: str) -> str:
    return IMPL_COLOURS.get(name, IMPL_COLOURS["broken"])


def draw_agreement(reference: Run, others: Sequence[Run], title: str | None = None) -> Figure:
    """One row per run of ``others``, one square per step: green where it left what ``reference`` left,
    red where it did not (the first thing that differs written below the row)."""
    steps = len(reference.steps)
    rows = [differences(reference, other) for other in others]
    height = 1.2 + 0.95 * len(others)
    fig = new_figure(WIDTH, height)
    left = (text_width(max((o.name for o in others), key=len), TEXT) / 72 + 0.3) / WIDTH
    ax = fig.add_axes((left, 0.55 / height, 0.97 - left, 1 - 1.2 / height))
    for i, found in enumerate(rows):
        y = -i
        for k, what in enumerate(found):
            ax.add_patch(Rectangle((k + 0.06, y - 0.2), 0.88, 0.5, facecolor=SAME if what is None else DIFFERENT,
                                   edgecolor="white"))
        first = next((k for k, what in enumerate(found) if what is not None), None)
        note = "every step equal" if first is None else f"step {first + 1}: {found[first]} differs"
        ax.text(0.06, y - 0.45, note, va="center", ha="left", fontsize=SMALL,
                color=SAME if first is None else DIFFERENT)
    ax.set_xlim(0, steps)
    ax.set_ylim(-len(others) + 0.35, 0.45)
    ax.set_yticks([0.05 - i for i in range(len(others))])
    ax.set_yticklabels([o.name for o in others], fontsize=TEXT)
    every = max(1, -(-steps // 30))
    ax.set_xticks([k + 0.5 for k in range(0, steps, every)])
    ax.set_xticklabels([str(k + 1) for k in range(0, steps, every)], fontsize=SMALL)
    ax.set_xlabel("step of the workload", fontsize=TEXT)
    ax.tick_params(length=0)
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    heading = title or f"each step's answer, lock table, statistics and trace, compared with the {reference.name}"
    fig.suptitle(title_lines(heading, WIDTH, TITLE), fontsize=TITLE, y=1 - 0.08 / height, va="top")
    return fig


# == the widget's callback ===================================================================

@dataclass
class FastView:
    """What the control shows: both runs' counts, the chosen one's picture and a summary."""

    which: str
    times: int
    runs: dict[str, Run]
    figure: Figure

    def summary(self) -> str:
        chosen, reference = self.runs[self.which], self.runs[impl.ENGINE]
        operations = len(chosen.calls)
        lines = [f"{self.which}: {operations} calls of the lock manager ({self.times} x the script)",
                 f"  engine function calls: {chosen.engine_calls} ({chosen.engine_calls / operations:.1f} per call)",
                 f"  other calls (C functions, the library): {chosen.other_calls}"]
        if self.which != impl.ENGINE:
            lines.append(f"  the reference makes {reference.engine_calls / chosen.engine_calls:.2f}x as many "
                         f"engine calls")
        return "\n".join(lines)


def fast_step(which: str = impl.FAST, times: int = 1, script: Sequence[Sequence[object]] = SCRIPT,
              top: int = 10) -> FastView:
    """The widget's callback: ``script`` run ``times`` times under each implementation, profiled; the picture
    shows ``which`` against the reference (the reference alone if ``which`` is the reference)."""
    if which not in IMPLS:
        raise ValueError(f"the implementation is {' or '.join(IMPLS)}, not {which!r}")
    if not isinstance(times, int) or times < 1:
        raise ValueError(f"the workload is the script repeated 1 or more times, not {times!r}")
    runs = {w: run(script, w, times, profile=True) for w in IMPLS}
    shown = [runs[impl.ENGINE]] + ([runs[which]] if which != impl.ENGINE else [])
    return FastView(which, times, runs, draw_call_counts(shown, top))
