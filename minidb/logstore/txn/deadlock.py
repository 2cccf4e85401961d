"""Deadlock detection: does a lock wait close a cycle of waits?

Only write locks exist (:mod:`.locks`), so a waiting request waits for
exactly one holder, the transaction that write-locked its record: the
waits-for graph has one edge out of each waiter, and a cycle is found by
following edges from the holder until they end (someone runs) or come
back. It is asked before every wait, so the request that would close a
cycle is the one that finds it (and becomes the victim: JE's default).

A transaction runs in the thread that last took a lock for it, so the edge
out of a holder is the wait of *its thread*: that is how a thread which
waits for a transaction it runs itself is found (the walk comes back to the
requester's thread at once), and how a thread that switched transactions is
followed. Example, txn 3 in thread A, txn 5 in thread B, db ``'a'``::

    txn 5 holds b"x", waits for b"y"     waiting = {B: txn 5 for (db, b"y")}
    txn 3 holds b"y", asks for b"x"      walk: holder txn 5 -> its thread B waits for b"y",
                                         held by txn 3 -> txn 3's thread is A, the requester's: a cycle
    -> ["txn 3 waits for txn 5 (db 'a' key b'x')", "txn 5 waits for txn 3 (db 'a' key b'y')"]

The walk is a pure function of the lock table's maps; it takes nothing and
changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(eq=False)
class Request:
    """A lock request that may wait: by ``locker`` (a txn id; None: no transaction) for ``record``."""

    locker: int | None
    what: str  # "read", "write", ...
    record: tuple[int, bytes]
    db_name: str
    take: bool  # a transaction's write: it takes the lock when granted
    thread: int = 0
    woken: bool = False  # let go by a release once: if it must wait again, it waits at the head

    @property
    def label(self) -> str:
        return f"txn {self.locker}" if self.locker is not None else f"a non-transactional {self.what}"

    def where(self) -> str:
        return f"db {self.db_name!r} key {self.record[1]!r}"


def waits_for_cycle(request: Request, holder: int, owner_of: Callable[[tuple[int, bytes]], int | None],
                    thread_of: Mapping[int, int], waiting: Mapping[int, Request]) -> list[str] | None:
    """The cycle ``request`` (in thread ``request.thread``) would close by waiting for ``holder``, one wait a
    line; None if there is none."""
    links = [f"{request.label} waits for txn {holder} ({request.where()})"]
    seen = {request.thread}
    while True:
        thread = thread_of.get(holder)
        if thread == request.thread:
            if holder != request.locker:
                links.append(f"txn {holder} is run by the same thread")
            return links
        if thread is None or thread in seen:
            return None
        seen.add(thread)
        wait = waiting.get(thread)
        if wait is None:
            return None  # the holder's thread runs: it will end the holder
        next_holder = owner_of(wait.record)
        if next_holder is None or next_holder == wait.locker:
            return None  # its wait is over; it runs as soon as it has the latch
        label = wait.label if wait.locker == holder else f"{wait.label} (run by the thread of txn {holder})"
        links.append(f"{label} waits for txn {next_holder} ({wait.where()})")
        holder = next_holder


__all__ = ["Request", "waits_for_cycle"]
