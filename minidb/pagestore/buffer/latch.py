"""Latches: the short-term read/write locks that protect a page in a buffer frame.

Fixing a page acquires its frame's latch, and in Shore the verbs *fix* and
*latch* are used interchangeably. A latch is held in one of two modes:

- ``SH`` (shared): any number of holders may read the page together;
- ``EX`` (exclusive): one holder, who may change the page.

A request that cannot be granted blocks until the holders release, unless it
is *conditional*, in which case it fails at once (Shore's conditional fixes,
used where waiting could deadlock). Latches are not locks: there is no
deadlock detection, so callers latch pages in a fixed order (ascending page
number, as the volume manager does). A thread that holds a latch must not
ask for it again.

``on_block`` (if set) is called, without the latch's lock held, each time a
request is about to wait: tests and notebooks use it to see that a thread
really is blocked, without sleeping.

A request waits on the condition only while it is counted in ``waiting``
(from its first look until its grant), and ``release`` wakes the waiters
whenever some are counted: a waiter counted before it blocks is never missed,
even if the release comes between its look and its wait.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from enum import IntEnum

from minidb import impl


class LatchMode(IntEnum):
    NL = 0  # not latched
    SH = 1
    EX = 2


SH, EX = LatchMode.SH, LatchMode.EX


class Latch:
    __slots__ = ("_lock", "_cond", "_shared", "_exclusive", "waiting", "on_block")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._shared = 0
        self._exclusive = False
        self.waiting = 0
        self.on_block: Callable[[LatchMode], None] | None = None

    @property
    def mode(self) -> LatchMode:
        if self._exclusive:
            return LatchMode.EX
        return LatchMode.SH if self._shared else LatchMode.NL

    @property
    def holders(self) -> int:
        return 1 if self._exclusive else self._shared

    def _grantable(self, mode: LatchMode) -> bool:
        if mode == LatchMode.EX:
            return not self._exclusive and not self._shared
        return not self._exclusive

    def _grant(self, mode: LatchMode) -> None:
        if mode == LatchMode.EX:
            self._exclusive = True
        else:
            self._shared += 1

    def acquire(self, mode: LatchMode, conditional: bool = False) -> bool:
        """Take the latch in ``mode``; False only for a conditional request that would wait."""
        with self._cond:
            if self._grantable(mode):
                self._grant(mode)
                return True
            if conditional:
                return False
            self.waiting += 1
        if self.on_block is not None:
            self.on_block(mode)
        with self._cond:
            while not self._grantable(mode):
                self._cond.wait()
            self.waiting -= 1
            self._grant(mode)
            return True

    def release(self) -> LatchMode:
        """Release one hold (the EX hold, or one SH hold); return the mode released."""
        with self._lock:
            return self._let_go()

    def _let_go(self) -> LatchMode:
        """:meth:`release` with the latch's lock held."""
        if self._exclusive:
            self._exclusive = False
            released = EX
        elif self._shared:
            self._shared -= 1
            released = SH
        else:
            raise RuntimeError("release of a latch that is not held")
        if self.waiting:  # a request waits on the condition only while it is counted
            self._cond.notify_all()
        return released

    @property
    def exclusive(self) -> bool:
        """Whether the latch is held EX."""
        return self._exclusive

    def __repr__(self) -> str:
        return f"Latch({self.mode.name}, holders={self.holders}, waiting={self.waiting})"


LATCH = impl.hot_spot(Latch)
