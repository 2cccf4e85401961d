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

The whole protocol is one pure decision, :func:`commit_step`, that
``LogManager.sync`` asks at every step of a sync request (one call site,
through the exercise hook ``COMMIT_STEP``; exercise 01b): given what the
sync lock guards (the durable end, whether an fsync is in flight, the
followers waiting, the batch expected, the time waited and its bound) it
answers *served* (the entry is durable: return), *follow* (wait for the
fsync in flight), *lead* (no fsync in flight: this request leads the next),
*gather* (the leader waits for more followers), *write* (the leader is done
gathering: write the log buffer) or *sync* with the target (fsync, then
everything before the target is durable: the end of what was written, so
every follower whose entry the buffer held is served by that one fsync).

Time comes from a clock object, so tests script the interleaving without
sleeping: :class:`MonotonicClock` waits on the condition with a timeout;
:class:`ManualClock` waits until notified (a follower arrives) or until the
test moves it on with :meth:`ManualClock.advance`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from minidb import impl
from minidb.errors import UserError
from minidb.log.lsn import LSN

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

    def __call__(self) -> float:
        """The time, so that the clock also serves as an environment's ``config.clock`` (its lock waits)."""
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


# -- the decision: one step of a sync request ------------------------------------------------------------
SERVED, FOLLOW, LEAD, GATHER, WRITE, SYNC = "served", "follow", "lead", "gather", "write", "sync"
ACTIONS = (SERVED, FOLLOW, LEAD, GATHER, WRITE, SYNC)


def commit_step(lsn, durable_end, in_flight: bool, leading: bool, written_end, waiting: int, expected: int,
                waited: float, max_wait: float) -> tuple:
    """The next step of the sync request for the entry at ``lsn``: ``(action, target)``, ``target`` set for
    :data:`SYNC` only (everything before it is durable once the fsync returns).

    ``durable_end``: the entries that start before it are durable; ``in_flight``: another request leads an
    fsync now; ``leading``: this request leads; ``written_end``: where the buffer the leader wrote ends
    (None until it wrote); ``waiting``: followers waiting; ``expected``: the previous fsync's batch, its
    leader included; ``waited``/``max_wait``: the leader's gather so far and its bound. LSNs are anything
    ordered (the engine's :class:`~minidb.log.LSN`, the exercise's whole numbers).
    """
    if not leading:
        if lsn < durable_end:
            return SERVED, None
        return (FOLLOW, None) if in_flight else (LEAD, None)
    if written_end is None:
        if waiting < expected - 1 and waited < max_wait:
            return GATHER, None
        return WRITE, None
    return SYNC, written_end


def _from_exercise(hook: impl.Hook, student: Callable) -> Callable[..., tuple]:
    """A student's ``commit_step`` (exercise 01b: LSNs as whole numbers, ``LSN.packed``), its answer checked:
    an action the request's role allows, a target that covers the leader's entry and nothing unwritten."""
    def step(lsn, durable_end, in_flight, leading, written_end, waiting, expected, waited, max_wait):
        answer = student(lsn.packed, durable_end.packed, in_flight, leading,
                         None if written_end is None else written_end.packed, waiting, expected, waited, max_wait)
        if not (isinstance(answer, tuple) and len(answer) == 2 and answer[0] in ACTIONS):
            raise hook.wrong(f"returned {answer!r}, not (action, target) with an action of {', '.join(ACTIONS)}")
        action, target = answer
        allowed = ((GATHER, WRITE) if written_end is None else (SYNC,)) if leading else (SERVED, FOLLOW, LEAD)
        if action not in allowed:
            role = "the leader" if leading else "a request that does not lead"
            raise hook.wrong(f"returned {action!r} for {role}" + ("" if not leading else
                             f" ({'before' if written_end is None else 'after'} writing the buffer)"))
        if action == FOLLOW and not in_flight:
            raise hook.wrong("returned 'follow' with no fsync in flight: nobody would wake the follower")
        if action == LEAD and in_flight:
            raise hook.wrong("returned 'lead' while another leader's fsync is in flight")
        if action == GATHER and not waited < max_wait:
            raise hook.wrong(f"returned 'gather' after waiting {waited}s, past the bound {max_wait}s")
        if action != SYNC:
            return action, None
        if not isinstance(target, int) or isinstance(target, bool) or not lsn.packed < target <= written_end.packed:
            raise hook.wrong(f"returned the sync target {target!r}: it must cover the leader's entry "
                             f"({lsn.packed}) and nothing past the written end ({written_end.packed})")
        return SYNC, LSN.unpack(target)
    return step


COMMIT_STEP = impl.register("01b_group_commit", "commit_step", commit_step, _from_exercise)
