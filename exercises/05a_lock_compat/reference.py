"""Exercise 05a, reference: minidb's own answer (not a second implementation).

``compatible`` and ``supremum`` read Shore's tables in
``minidb/pagestore/lock/modes.py``; ``wakeup`` builds a
:class:`~minidb.pagestore.lock.queue.LockHead` with the given queue and calls
its ``wakeup``, what the lock manager does after every release;
``digest_step`` is :func:`minidb.pagestore.lock.dreadlocks.digest_step`, the
step each blocked thread runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from minidb.pagestore.lock import LockId, LockMode, dreadlocks, modes
from minidb.pagestore.lock.queue import LockHead, new_request


@dataclass(frozen=True)
class _Owner:
    txn_id: int


def compatible(requested: str, granted: str) -> bool:
    return modes.compatible(LockMode[requested], LockMode[granted])


def supremum(a: str, b: str) -> str:
    return modes.supremum(LockMode[a], LockMode[b]).name


def wakeup(queue: list[tuple[int, str, str, str | None]]) -> list[int]:
    head = LockHead(LockId.user(1))
    for txn, status, mode, convert_mode in queue:
        request = new_request(_Owner(txn), head, LockMode[mode], waiting=status == "waiting")
        if status == "converting":
            head.start_conversion(request, LockMode[convert_mode])  # type: ignore[index]
    return [request.txn_id for request in head.wakeup()]


def digest_step(fingerprint: int, blocker_digests: list[int]) -> tuple[int, int | None]:
    step = dreadlocks.digest_step(fingerprint, list(blocker_digests))
    return step.digest, step.cycle_with
