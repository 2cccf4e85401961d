"""The outcome of a crash sweep, shared by every engine's crash test.

A crash test runs a seeded workload on a :class:`~minidb.io.simdisk.SimDisk`,
then, for every crash point (:func:`~minidb.io.simdisk.crash_points`),
reopens what the crash left and compares it with a model of what must have
survived. :class:`SweepResult` counts the points and collects violations; its
summary line is what ``minidb crashtest`` prints. :func:`crash_during_restart`
is the step that checks recovery is idempotent: a second crash, during it
(after one of the operations :func:`operations_in` counts);
:func:`sweep_crash_points` is the loop over the points.

Many crash points leave the same disk: every write between two fsyncs
crashed keeping nothing unsynced leaves the image of the last fsync, and an
fsync crashed keeping everything leaves what the write before it left kept
whole. Recovery is deterministic, so the same image recovers to the same
state; a check then differs only by what it expects at that point (which
commits had returned, say). An engine that can say so in a *memo key* (a
function of the crash's event index: everything its check reads from the
point besides the image) has each distinct (image, key) checked once: a
point that repeats one is given the result the first got, a violation
included, under its own name. At a point that also crashes during restart,
only that second crash is checked anew, from the record of the first
point's restart.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from random import Random
from typing import Any

from minidb.io import SimDisk, crash_points
from minidb.io.simdisk import CRASH_POINT_KINDS, Event


@dataclass
class SweepResult:
    points: int = 0
    violations: list[str] = field(default_factory=list)

    def add(self, other: "SweepResult") -> None:
        self.points += other.points
        self.violations.extend(other.violations)

    @property
    def ok(self) -> bool:
        return not self.violations

    def summary(self) -> str:
        return f"crash points: {self.points}, violations: {len(self.violations)}"


def operations_in(events: Sequence[Event]) -> int:
    """How many of ``events`` (a disk's record from some point on) are crash points (writes, truncates,
    fsyncs): the operations a restart made, one of which :func:`crash_during_restart` crashes after."""
    return sum(1 for event in events if event.kind in CRASH_POINT_KINDS)


@dataclass
class Restarted:
    """What a check found in a crashed image once restarted (``problem``: None if all was well), and what
    a crash during that restart needs: the events the restart recorded (``restart``), and ``recheck``,
    which restarts an image crashed during it and checks the result as the point's own check would."""

    problem: str | None
    restart: Sequence[Event] = ()
    recheck: Callable[[SimDisk], str | None] | None = None


def crash_during_restart(twin: SimDisk, restart: Sequence[Event], rng: Random,
                         recheck: Callable[[SimDisk], str | None]) -> str | None:
    """Crash ``twin`` (a crashed image, not restarted) during its recovery, after a random one of the disk
    operations in ``restart`` (the events a recovery of the same image recorded), then ``recheck`` what
    that crash left (restart it, check it); None if all is well, else what is wrong.

    The crashed image is built from the record (:meth:`~minidb.io.SimDisk.crash_image_after`): the
    twin, then the events of the recovery up to that operation, then the crash. Recovery is
    deterministic, so that is what a crash of a recovery of the twin at that point leaves: the recovery
    is not run again just to be crashed there."""
    ops = [i for i, event in enumerate(restart) if event.kind in CRASH_POINT_KINDS]
    at = rng.randint(1, len(ops))
    problem = recheck(twin.crash_image_after(restart[:ops[at - 1] + 1]))
    return None if problem is None else f"after a crash during restart (after {at} of {len(ops)} operations): {problem}"


def crash_restarted(first: Restarted, twin: SimDisk | None, rng: Random) -> str | None:
    """What is wrong at a crash point whose check found ``first``: its problem; or, if it found none and
    the point also crashes during restart (``twin``: the image as the crash left it, not restarted), what
    that crash finds (:func:`crash_during_restart`)."""
    if first.problem is None and twin is not None and first.recheck is not None and operations_in(first.restart):
        return crash_during_restart(twin, first.restart, rng, first.recheck)
    return first.problem


def sweep_crash_points(disk: SimDisk, start: int, seed: int,
                       check: Callable[[SimDisk, int], str | None | Restarted], problems: Any = (),
                       torn_variants: int = 1, random_variants: int = 1, restart_crashes: float = 0.25,
                       memo_key: Callable[[int], Hashable] | None = None) -> SweepResult:
    """Crash ``disk`` (a workload's) at every point from event ``start`` on and ``check`` each (the
    crashed image and the crash's event index); ``problems`` the workload met while running count as
    violations too. A check that says what its restart recorded (:class:`Restarted`) has a
    ``restart_crashes`` share of the points crash again during that restart (:func:`crash_during_restart`).
    With ``memo_key``, a point whose image and key repeat an earlier point's gets that point's result
    (see the module's docstring); the crash during restart of such a point is built from that point's
    record, and checked."""
    rng = Random(seed * 7919 + 1)
    result = SweepResult()
    result.violations.extend(f"seed {seed}, while running: {problem}" for problem in problems)
    checked: dict[tuple[str, Hashable], Restarted] = {}
    for point in crash_points(disk, start=start, torn_variants=torn_variants, random_variants=random_variants,
                              seed=seed):
        result.points += 1
        nested = rng.random() < restart_crashes
        memo = None if memo_key is None else (point.disk.content_digest(), memo_key(point.event.index))
        twin = point.disk.clone() if nested else None  # what the crash left: the check's restart changes the image
        if memo is not None and memo in checked:
            first = checked[memo]
        else:
            found = check(point.disk, point.event.index)
            first = found if isinstance(found, Restarted) else Restarted(found)
            if memo is not None:
                checked[memo] = first
        problem = crash_restarted(first, twin, rng)
        if problem is not None:
            result.violations.append(f"seed {seed}, {point}: {problem}")
    return result
