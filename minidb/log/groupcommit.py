"""Group commit that batches: how long a sync's leader waits for the followers it expects.

When several threads commit at once, the first to call ``sync`` becomes the
*leader*: it writes the log buffer and fsyncs, and every thread whose entry
that fsync covered (a *follower*, waiting meanwhile) returns without an
fsync of its own. Left at that, the batches stay small: the threads served
by one fsync come back together, append their next entries, and the first
of them to reach ``sync`` fsyncs at once, before the others have appended.

So the leader first *gathers*: it waits until as many followers are waiting
as the previous fsync's batch had (the sync requests made since the leader
before it started its fsync: the commits it expects), but never longer than
a fraction of the fsync time measured so far (an exponentially weighted
average). This is PostgreSQL's ``commit_delay`` made adaptive, and what the
Linux journal does when it waits for more handles before committing. A
single thread never waits (the previous fsync served only itself), and a
waited-for follower that never comes costs at most that fraction of one
fsync.

Invariants: the gather never lets an fsync cover less than it would have
without it (the leader takes the buffer's end after waiting); the wait is
always bounded by ``commit_delay × average fsync time``; nothing here
touches the disk.

Time comes from a clock object, so tests script the interleaving without
sleeping: :class:`MonotonicClock` waits on the condition with a timeout;
:class:`ManualClock` waits until notified (a follower arrives) or until the
test moves it on with :meth:`ManualClock.advance`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from minidb.errors import UserError

#: weight of the newest fsync time in the running average
FSYNC_WEIGHT = 0.2


class MonotonicClock:
    """Real time (``time.monotonic``), and a real bounded wait on a condition."""

    def now(self) -> float:
        return time.monotonic()

    def wait(self, cond: threading.Condition, timeout: float) -> None:
        cond.wait(timeout)


class ManualClock:
    """A clock that moves only when told: a wait lasts until the condition is notified (a follower
    arrives) or :meth:`advance` moves the clock. ``waits`` records every timeout asked for, and
    ``waiting`` is set whenever someone waits, so a test can step in at that moment."""

    def __init__(self, start: float = 0.0):
        self.time = start
        self.waits: list[float] = []
        self.waiting = threading.Event()
        self._conds: list[threading.Condition] = []

    def now(self) -> float:
        return self.time

    def wait(self, cond: threading.Condition, timeout: float) -> None:
        self.waits.append(timeout)
        if cond not in self._conds:
            self._conds.append(cond)
        self.waiting.set()
        cond.wait()

    def advance(self, seconds: float) -> None:
        self.time += seconds
        for cond in self._conds:
            with cond:
                cond.notify_all()


class GroupCommitPolicy:
    """How many followers the next leader expects, and how long it may wait for them.

    ``commit_delay`` is the fraction of the average fsync time a leader may wait (0 turns the
    gather off); ``expected`` is the previous fsync's batch: the sync requests made since the
    fsync before it, its leader's included; ``fsync_seconds`` the running average of measured fsync times."""

    def __init__(self, commit_delay: float = 0.5, clock: MonotonicClock | ManualClock | None = None):
        if not isinstance(commit_delay, (int, float)) or not 0 <= commit_delay <= 1:
            raise UserError(f"commit_delay {commit_delay!r} must be a fraction of an fsync's time, from 0 to 1")
        self.commit_delay = float(commit_delay)
        self.clock = clock if clock is not None else MonotonicClock()
        self.expected = 1
        self.fsync_seconds = 0.0

    def max_wait(self) -> float:
        """The longest a leader may wait for followers now."""
        return self.commit_delay * self.fsync_seconds

    def fsynced(self, seconds: float, served: int) -> None:
        """One fsync took ``seconds``; ``served`` sync requests were made for it, its leader's included."""
        if self.fsync_seconds == 0.0:
            self.fsync_seconds = seconds
        else:
            self.fsync_seconds += FSYNC_WEIGHT * (seconds - self.fsync_seconds)
        self.expected = max(1, served)

    def gather(self, cond: threading.Condition, waiting: Callable[[], int]) -> int:
        """Called by a leader holding ``cond``'s lock: wait until ``waiting()`` followers wait, as many as
        were in the previous fsync's batch besides its leader, or until the bounded wait is over. Returns how
        many followers wait at the end."""
        wanted = self.expected - 1
        if wanted <= 0 or self.commit_delay == 0.0:
            return waiting()
        deadline = self.clock.now() + self.max_wait()
        while waiting() < wanted:
            remaining = deadline - self.clock.now()
            if remaining <= 0:
                break
            self.clock.wait(cond, remaining)
        return waiting()
