"""Quarks (Shore's ``sm_quark_t``): release a group of locks in the middle of a transaction.

A quark is a marker in the list of locks a transaction holds. While it is
open, the locks the transaction acquires are *short*; closing it releases
every lock acquired since it opened, so a transaction can, say, read a
few records to decide what to do, and let other writers at them before it
commits. Invariants:

- locks held before the quark opened stay (asking again for one inside the
  quark never shortens it);
- **extent locks stay to the end of the transaction**: page allocation and
  freeing rely on them (a page allocated inside a quark keeps its extent
  locked until commit);
- quarks nest: closing the inner quark releases only the locks acquired
  since *it* opened; the outer one releases the rest at its own close;
- a quark belongs to an active transaction and closes before it ends. One
  whose transaction ended inside it (committed or aborted: every lock is
  gone already) raises :class:`~minidb.pagestore.transactions.xctmgr.XctError`
  when it closes, and so does opening one for an ended transaction or
  opening the same quark twice.

Locks released early are the caller's responsibility, as in Shore: releasing
a write lock before commit lets others see uncommitted data, so quarks are
meant for reads.

Worked example: T1 holds IX on ``s(1.3)`` (it created a record). In
``with sm.quark(t1):`` it reads ``r(1.3.12.1)``: SH on the record and IS on
``p(1.3.12)``, both short. At the end of the block both are released; the
IX on ``s(1.3)`` and ``v(1)`` stays.
"""

from __future__ import annotations

from typing import Any

from minidb.pagestore.transactions.locking import optional
from minidb.pagestore.transactions.xct import Xct
from minidb.pagestore.transactions.xctmgr import XctError


class Quark:
    """``with sm.quark(xct):``: the locks taken in the block are released at its end (extent locks excepted)."""

    def __init__(self, xcts: Any, xct: Any):
        self.xcts = xcts
        self.xct = xct
        self.depth = 0  # its nesting depth once open
        self.released: int | None = None  # how many locks its close released

    def __enter__(self) -> "Quark":
        if self.depth:
            raise XctError(f"this quark of {self.xct} was opened already: open a new one")
        if isinstance(self.xct, Xct) and not self.xct.is_active:
            raise XctError(f"{self.xct} is not active: a quark needs an active transaction")
        self.xcts.check_active(self.xct)
        self.depth = optional(self.xcts.locks, "open_quark")(self.xct) or 1
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if not self.xct.is_active:
            if exc_type is None:
                raise XctError(f"{self.xct} ended inside its quark (depth {self.depth}): its locks went at its "
                               f"end; close a quark before commit or abort")
            return
        self.released = optional(self.xcts.locks, "close_quark")(self.xct)
