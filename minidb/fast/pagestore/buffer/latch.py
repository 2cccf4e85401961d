"""The latch, accelerated: a free latch granted under its lock alone.

Every fix takes a latch and every unfix releases it, and a latch is almost
always free when asked for. The reference :meth:`~minidb.pagestore.buffer.latch.Latch.acquire`
enters its condition with a ``with`` statement and asks ``_grantable`` and
``_grant``; this twin takes the latch's lock by hand, grants a free latch
inline (SH when nobody holds it EX, EX when nobody holds it at all) and
releases the lock: no condition, no helper calls, no ``with``; a release
takes the lock the same way and, when no request waits (nobody to notify),
lets go of the EX hold or one SH hold inline, as ``_let_go`` does. Anything else (a conditional failure,
``on_block``, waiting) is the reference's code.

Safe because the condition shares the latch's lock: granting under the lock
alone is what the reference does under the condition, and a request that must
wait still goes through the reference, so it is counted in ``waiting`` before
it blocks, and :meth:`release` notifies whenever a request is counted: it
cannot miss it.
"""

from __future__ import annotations

from minidb.pagestore.buffer import latch as reference
from minidb.pagestore.buffer.latch import EX, SH, LatchMode


class Latch(reference.Latch):
    __slots__ = ()

    def acquire(self, mode: LatchMode, conditional: bool = False) -> bool:
        lock = self._lock
        lock.acquire()
        if not self._exclusive:
            if mode == 1:  # SH (an IntEnum compares as its int)
                self._shared += 1
                lock.release()
                return True
            if not self._shared and mode == 2:  # EX
                self._exclusive = True
                lock.release()
                return True
        lock.release()
        return super().acquire(mode, conditional)

    def release(self) -> LatchMode:
        lock = self._lock
        lock.acquire()
        if not self.waiting:  # nobody to notify: the hold let go inline
            if self._exclusive:
                self._exclusive = False
                lock.release()
                return EX
            if self._shared:
                self._shared -= 1
                lock.release()
                return SH
        try:
            return self._let_go()
        finally:
            lock.release()
