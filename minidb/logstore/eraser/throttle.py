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
                       the fsync after the type bytes, zeroing the items,
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

Time comes from a clock object (:class:`ManualClock` in tests and notebooks,
where waiting just moves the clock, so a cycle of days runs in milliseconds).
"""

from __future__ import annotations

import threading
import time


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
        target = self.target_ms()
        now = self.clock.now_ms()
        if now < target:
            self.clock.wait_ms(target - now)
        else:
            self.base_ms += now - target  # no catch-up: the rest of the work keeps its pace


__all__ = ["EraserShutdown", "ManualClock", "SystemClock", "WorkThrottle"]
