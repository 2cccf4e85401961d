"""Dreadlocks: statistical deadlock detection by fingerprints and digests.

Shore detects lock-lock deadlocks with *Dreadlocks* (Koskinen and Herlihy).
Every thread has a **fingerprint**: a few bits (here ``bits_per_fingerprint``,
Shore takes three) in a bitmap of ``bitmap_bits`` bits. A thread that is
not waiting has the digest of its fingerprint alone. A thread that blocks
computes its **digest**: its own fingerprint ORed with the digests of every
transaction it waits for (see :meth:`~.queue.LockHead.blockers`). Digests
are therefore (over-approximate) sets of the threads a thread waits for,
directly or through others.

**The cycle test**: a blocking thread looks at the digest of each
transaction it waits for; if it finds *its own fingerprint* there (every bit
of it), that transaction waits, through some chain, for the thread itself: a
cycle. Of the two transactions, the **younger** (larger transaction id) is the
victim.

Worked example, a bitmap of 16 bits, fingerprints of 2 bits (seed 0: the
first two threads get these)::

    T1 (its thread's fingerprint {12,15})  holds EX on r(1.3.48.2)
    T2 (its thread's fingerprint {0,6})    holds EX on r(1.3.48.3)
    T1 asks for r(1.3.48.3): waits for T2, which is not waiting: digest {0,6}
        T1's digest = {12,15} | {0,6} = {0,6,12,15}
    T2 asks for r(1.3.48.2): waits for T1, whose digest {0,6,12,15} contains
        {0,6}: a cycle; T2 is the younger: T2 is the victim.

The cycle test runs in the blocked threads: when a thread blocks (so a
cycle is found at once by the thread whose request closes it), and again
whenever a change puts its own fingerprint in a digest it depends on (a cycle
closed by someone else's request, a conversion for instance). The digests
themselves are kept exact: at every change of who waits for whom (a request
blocks, is granted or cancelled, a lock is released) the lock manager
recomputes the waiting transactions' digests from the fingerprints up. Shore
instead lets each blocked thread recompute its own digest every 10 ms; between
two rounds a stale digest can still hold the bits of a thread that has since
moved on to another transaction, and make a false victim.

**False positives.** With exact digests, the test is exact while no two live
threads share a bit. With more threads than ``bitmap_bits // bits_per_fingerprint``, a new
fingerprint must reuse bits, and a digest can contain a thread's fingerprint
without that thread being in it: a *false positive*, and a transaction is
aborted for nothing. As Shore does, :class:`Fingerprints` counts the times it
could not give a thread bits of its own (``nFingerprintCollisions``); the lock
manager checks each detection against the exact waits-for graph and counts
those it does not confirm (``nFalseDeadlocks``).

A thread's bits return to the pool when the thread ends. Assignment is seeded,
so the same threads starting in the same order get the same fingerprints.
"""

from __future__ import annotations

import random
import threading
import weakref
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

DEFAULT_BITMAP_BITS = 64
DEFAULT_BITS_PER_FINGERPRINT = 3


def contains(digest: int, fingerprint: int) -> bool:
    """Whether every bit of ``fingerprint`` is set in ``digest``."""
    return digest & fingerprint == fingerprint


def bits_of(mask: int) -> tuple[int, ...]:
    """The bit numbers set in ``mask``, lowest first: ``bits_of(0b1010) == (1, 3)``."""
    found = []
    bit = 0
    while mask:
        if mask & 1:
            found.append(bit)
        mask >>= 1
        bit += 1
    return tuple(found)


def mask_of(bits: Iterable[int]) -> int:
    mask = 0
    for bit in bits:
        mask |= 1 << bit
    return mask


def format_bits(mask: int) -> str:
    """A bitmap as the set of its bits: ``{1,4,9,12}``."""
    return "{" + ",".join(str(b) for b in bits_of(mask)) + "}"


@dataclass(frozen=True)
class DigestStep:
    """One Dreadlocks step: the new digest, and the first blocker whose digest held our fingerprint."""

    digest: int
    cycle_with: int | None  # index into the blockers' digests, or None: no cycle seen


def digest_step(fingerprint: int, blocker_digests: list[int]) -> DigestStep:
    """The digest of a thread with ``fingerprint`` waiting for transactions with these digests.

    The digest is the fingerprint ORed with every blocker's digest; a cycle is
    seen at the first blocker whose digest contains the whole fingerprint.
    """
    digest = fingerprint
    cycle_with = None
    for i, other in enumerate(blocker_digests):
        if cycle_with is None and contains(other, fingerprint):
            cycle_with = i
        digest |= other
    return DigestStep(digest, cycle_with)


class _Holder:
    """A thread's fingerprint, kept in thread-local storage; freed when the thread ends."""

    __slots__ = ("fingerprint", "thread_name", "__weakref__")

    def __init__(self, fingerprint: int, thread_name: str):
        self.fingerprint = fingerprint
        self.thread_name = thread_name


class _ThreadHolders(threading.local):
    """Each thread's :class:`_Holder`; None (the class's default) until the thread first asks."""

    holder: _Holder | None = None


class Fingerprints:
    """Gives each thread a fingerprint of ``bits_per_fingerprint`` bits out of ``bitmap_bits``.

    A new thread gets bits no live thread uses, chosen by a seeded generator;
    when fewer free bits are left, it shares some (``collisions`` counts these
    times, and ``on_collision`` is called).
    """

    def __init__(self, bitmap_bits: int = DEFAULT_BITMAP_BITS,
                 bits_per_fingerprint: int = DEFAULT_BITS_PER_FINGERPRINT, seed: int = 0,
                 on_collision: Callable[[], None] | None = None):
        if not 1 <= bits_per_fingerprint <= bitmap_bits:
            raise ValueError(f"bits_per_fingerprint must be between 1 and bitmap_bits ({bitmap_bits}), "
                             f"not {bits_per_fingerprint}")
        self.bitmap_bits = bitmap_bits
        self.bits_per_fingerprint = bits_per_fingerprint
        self.collisions = 0
        self._on_collision = on_collision
        self._rng = random.Random(seed)
        self._use = [0] * bitmap_bits  # how many live threads use each bit
        self._lock = threading.Lock()
        self.threads = _ThreadHolders()  # .holder: the calling thread's (what current() reads)
        self._freed: deque[int] = deque()  # fingerprints of ended threads, returned lazily
        self.assigned: list[tuple[str, int]] = []  # (thread name, fingerprint), in order of assignment

    def current(self) -> int:
        """The calling thread's fingerprint (assigned at its first call)."""
        holder = self.threads.holder
        if holder is None:
            holder = self._assign()
        return holder.fingerprint

    def _assign(self) -> _Holder:
        name = threading.current_thread().name
        with self._lock:
            while self._freed:
                for bit in bits_of(self._freed.popleft()):
                    self._use[bit] -= 1
            free = [bit for bit, users in enumerate(self._use) if users == 0]
            k = self.bits_per_fingerprint
            if len(free) >= k:
                chosen = self._rng.sample(free, k)
            else:
                used = [bit for bit, users in enumerate(self._use) if users > 0]
                chosen = free + self._rng.sample(used, k - len(free))
                self.collisions += 1
                if self._on_collision is not None:
                    self._on_collision()
            for bit in chosen:
                self._use[bit] += 1
            fingerprint = mask_of(chosen)
            self.assigned.append((name, fingerprint))
        holder = _Holder(fingerprint, name)
        # When the thread ends its thread-local storage goes, and with it the
        # holder: the bits are queued for reuse (a deque append needs no lock).
        weakref.finalize(holder, self._freed.append, fingerprint)
        self.threads.holder = holder
        return holder

    def live_bits(self) -> int:
        """How many bits live threads use (some possibly shared)."""
        with self._lock:
            return sum(1 for users in self._use if users)
