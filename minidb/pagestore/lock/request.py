"""Lock requests (Shore's ``lock_request_t``) and lock durations.

A request is one transaction's entry in the queue of one lock. Its
``status`` is

- ``GRANTED``: the transaction holds the lock in ``mode``;
- ``WAITING``: a new request for ``mode``, not granted yet;
- ``CONVERTING``: the transaction holds ``mode`` and waits to convert to
  ``convert_mode`` (the supremum of what it held and what it asked for).

A transaction has at most one request per lock: asking again for a lock it
holds converts the existing request (``supremum(held, asked)``), or changes
nothing if the held mode already covers the new one.

**Durations** (Shore's ``t_instant``, ``t_short``, ``t_long``):

- ``INSTANT``: the request waits until it could be granted, and is then gone
  (the B-tree uses an instant EX page lock to know that nobody still uses a
  page it is about to reuse);
- ``SHORT``: held until :meth:`~.manager.LockManager.unlock` (or the end of the
  transaction);
- ``LONG``: held to the end of the transaction, released only by
  :meth:`~.manager.LockManager.release_all` at commit or abort.

Asking again for a held lock with a longer duration lengthens it; a shorter
one never shortens it. Extent locks are always held to the end of the
transaction: a SHORT extent request is held LONG.

Once granted, ``parent`` is the same transaction's request one level up in
the hierarchy (None at the top or outside it) and ``n_children`` counts that
transaction's requests held directly below this one: the lock manager's books
for refusing to unlock a lock with locks below it, kept on the requests so
that they need no look-up by lock id.

The fields ``cond``, ``parked``, ``recheck`` and ``victim`` are the waiting
thread's: the condition it blocks on, whether it is blocked right now, whether
it must run its Dreadlocks test again (someone else's change put its
fingerprint in a digest it depends on), and the
:class:`~.errors.DeadlockVictim` to raise if a cycle chose it. Each wait
starts them afresh: a victim's request can be granted before its thread wakes,
and the error chosen for it is no concern of a later wait (a conversion).
"""

from __future__ import annotations

import enum
import threading
from typing import TYPE_CHECKING, Any

from minidb.pagestore.lock.modes import LockMode

if TYPE_CHECKING:
    from minidb.pagestore.lock.queue import LockHead


class Duration(enum.Enum):
    INSTANT = 0
    SHORT = 1
    LONG = 2

    def __str__(self) -> str:
        return self.name.lower()


# Durations are ordered, INSTANT < SHORT < LONG: a request is lengthened to a longer one, never shortened.
for _duration in Duration:
    _duration.rank = _duration.value  # type: ignore[attr-defined]


class Status(enum.Enum):
    GRANTED = "granted"
    WAITING = "waiting"
    CONVERTING = "converting"


GRANTED, WAITING, CONVERTING = Status.GRANTED, Status.WAITING, Status.CONVERTING


class LockRequest:
    """One transaction's request on one lock."""

    __slots__ = ("owner", "head", "mode", "convert_mode", "status", "duration", "cond", "parked", "recheck",
                 "victim", "parent", "n_children")

    def __init__(self, owner: Any, head: "LockHead", mode: LockMode, duration: Duration,
                 status: Status = GRANTED):
        self.owner = owner  # anything with an int txn_id (the manager's per-transaction state)
        self.head = head
        self.mode = mode  # the granted mode; for a WAITING request, the mode asked for
        self.convert_mode: LockMode | None = None
        self.status = status
        self.duration = duration
        self.cond: threading.Condition | None = None
        self.parked = False
        self.recheck = False
        self.victim: Exception | None = None
        self.parent: LockRequest | None = None  # once granted: the owner's request one level up (or None)
        self.n_children = 0  # once granted: how many of the owner's locks are held directly below this one

    @property
    def txn_id(self) -> int:
        return self.owner.txn_id

    @property
    def wanted(self) -> LockMode:
        """The mode this request waits for (or holds, once granted)."""
        return self.convert_mode if self.status is CONVERTING else self.mode  # type: ignore[return-value]

    def describe(self) -> str:
        """Shore's dump notation: ``T1(SH)`` granted, ``T2(SH/EX)`` converting, ``T3(EX*)`` waiting."""
        text = f"T{self.txn_id}({self.mode.name}"
        if self.status is CONVERTING:
            text += f"/{self.convert_mode.name}"  # type: ignore[union-attr]
        elif self.status is WAITING:
            text += "*"
        if self.duration is not Duration.LONG:
            text += f",{self.duration}"
        return text + ")"

    def __repr__(self) -> str:
        return f"<LockRequest {self.head.lock_id} {self.describe()}>"
