"""Throttling the eraser: its work spread evenly over a cycle (JE's ``WorkThrottle``).

At the start of a cycle the eraser estimates its whole work, in *work units*,
as three times the total length of the files it selected (the JE
documentation's estimate, deliberately high): per file of ``L`` bytes,

=========  ==========  ===================================================
component  units       what
=========  ==========  ===================================================
1          ``L``       reading to find the file's last VLSN (VLSN index
                       truncation), or reading again after an abort
2          ``L``       reading the file and overwriting type bytes
3..6       ``L``       split 18% / 16% / 50% / 16%: the touch and its fsync,
                       the fsync after the type bytes, the erased forms,
                       the last fsync (:data:`~.protocol.STEP_SHARES`)
=========  ==========  ===================================================

The time left in the cycle divided by the total work is the time one unit
may take. After each piece of work the throttle waits until the time the
work done so far is allowed to take has passed. It never catches up: when
work falls behind (a node that was down), the schedule is moved later by the
delay instead of speeding up the following work; a cycle that has not
finished by its end time is aborted by the eraser (and a fresh one started).

Worked example (the tests use it): a cycle of one day (86 400 000 ms) and
files of 1 000 and 2 000 bytes: 9 000 units, 9 600 ms per unit. After file 1's
component 1 (1 000 units) the throttle waits until 9 600 000 ms into the cycle;
file 1's step 5 ends 2 840 units, 27 264 000 ms, in; the last fsync of file 2
ends exactly at the cycle's end.

The arithmetic is a few pure functions: :func:`work_estimate`,
:func:`file_components`, :func:`pace` (what one piece of work makes the
throttle do; :class:`WorkThrottle` calls it) and :func:`schedule` (a whole
cycle's plan, each component's earliest end, with delays and lateness).

Time comes from a clock object (:class:`ManualClock` in tests and notebooks,
where waiting just moves the clock, so a cycle of days runs in milliseconds).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass


class EraserShutdown(Exception):
    """The eraser's thread was asked to stop while it waited."""


class SystemClock:
    """Real time: milliseconds since the epoch, and real waiting that ``stop()`` interrupts."""

    def __init__(self) -> None:
        self.stopped = threading.Event()

    def now_ms(self) -> int:
        return int(time.time() * 1000)

    def wait_ms(self, ms: float) -> None:
        if self.stopped.wait(ms / 1000):
            raise EraserShutdown()

    def stop(self) -> None:
        self.stopped.set()


class ManualClock:
    """A clock that moves only when told (``advance``) or when someone waits on it."""

    def __init__(self, start_ms: int = 1_700_000_000_000):
        self.now = int(start_ms)
        self.waits: list[int] = []  # every wait, in ms, in order

    def now_ms(self) -> int:
        return self.now

    def wait_ms(self, ms: float) -> None:
        self.waits.append(int(ms))
        self.now += int(ms)

    def advance(self, ms: int) -> None:
        self.now += int(ms)


#: How one file's length of work for the write protocol (components 3 to 6) is split between its steps.
STEP_SHARES = {3: 0.18, 4: 0.16, 5: 0.50, 6: 0.16}


def work_estimate(lengths: list[int]) -> int:
    """A cycle's whole work, in units, for files of ``lengths`` bytes: three times their total length."""
    return 3 * sum(lengths)


def file_components(length: int) -> list[tuple[int, float]]:
    """The work of one file of ``length`` bytes, in order: (component, units) for components 1 to 6."""
    return [(1, float(length)), (2, float(length))] + [(step, share * length) for step, share in STEP_SHARES.items()]


def pace(base_ms: float, ms_per_unit: float, done: float, now_ms: float) -> tuple[float, float]:
    """After ``done`` units in all, at ``now_ms``: (how long to wait, the schedule's new base).

    The work done may end ``base_ms + done * ms_per_unit`` at the earliest:
    early, wait until then; late, wait nothing and move the base later by the
    delay, so the rest keeps its pace (no catch-up).
    """
    target = base_ms + done * ms_per_unit
    if now_ms < target:
        return target - now_ms, base_ms
    return 0.0, base_ms + (now_ms - target)


@dataclass(frozen=True)
class Planned:
    """One component of one file in a cycle's plan: when it may end at the earliest."""

    file: int  # the file's place in the cycle, from 0
    component: int  # 1 to 6
    units: float
    end_ms: float
    late: bool  # it ends after the cycle's end: the eraser aborts the cycle here


def schedule(start_ms: int, end_ms: int, lengths: list[int], delays: dict[tuple[int, int], float] | None = None
             ) -> list[Planned]:
    """A cycle from ``start_ms`` to ``end_ms`` over files of ``lengths`` bytes, as the throttle runs it.

    Each component is done instantly, except that ``delays[(file, component)]``
    ms pass before it (a node that was down); the plan stops at the first
    component that ends after ``end_ms`` (marked ``late``: the cycle is aborted).
    """
    delays = delays or {}
    total = work_estimate(lengths)
    per_unit = (end_ms - start_ms) / total if total else 0.0
    now, base, done, plan = float(start_ms), float(start_ms), 0.0, []
    for number, length in enumerate(lengths):
        for component, units in file_components(length):
            now += delays.get((number, component), 0.0)
            done += units
            wait, base = pace(base, per_unit, done, now)
            now += wait
            plan.append(Planned(number, component, units, now, now > end_ms))
            if now > end_ms:
                return plan
    return plan


class WorkThrottle:
    """Spreads ``total_work`` units evenly from ``start_ms`` to ``end_ms`` on ``clock``."""

    def __init__(self, clock, total_work: int, start_ms: int, end_ms: int):
        if total_work < 0 or end_ms < start_ms:
            raise ValueError(f"bad throttle: {total_work} units from {start_ms} to {end_ms}")
        self.clock = clock
        self.total_work = total_work
        self.ms_per_unit = (end_ms - start_ms) / total_work if total_work else 0.0
        self.base_ms = start_ms  # where the schedule starts (moved later when work falls behind)
        self.done = 0.0

    def target_ms(self) -> float:
        """When the work done so far may be finished, at the earliest."""
        return self.base_ms + self.done * self.ms_per_unit

    def work(self, units: float) -> None:
        """``units`` of work were done: wait until the schedule allows the next work."""
        self.done += units
        wait, self.base_ms = pace(self.base_ms, self.ms_per_unit, self.done, self.clock.now_ms())
        if wait:
            self.clock.wait_ms(wait)


__all__ = ["EraserShutdown", "ManualClock", "Planned", "STEP_SHARES", "SystemClock", "WorkThrottle", "file_components",
           "pace", "schedule", "work_estimate"]
