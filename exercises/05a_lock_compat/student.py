"""Exercise 05a: grant locks like Shore, and find deadlocks like Dreadlocks.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/05a_lock_compat --exercise-impl=student

Modes are written as their names: "NL", "IS", "IX", "SH", "SIX", "UD", "EX".
"""

from __future__ import annotations


def compatible(requested: str, granted: str) -> bool:
    """Whether a request for ``requested`` can be granted while another transaction holds ``granted``.

    Shore's compatibility table (README.md, part 1); not symmetric at SH/UD.
    """
    raise NotImplementedError("compatible: your code here")


def supremum(a: str, b: str) -> str:
    """The mode a holder of ``a`` converts to when it asks for ``b`` (README.md, part 2)."""
    raise NotImplementedError("supremum: your code here")


def wakeup(queue: list[tuple[int, str, str, str | None]]) -> list[int]:
    """The transactions granted when the queue moves: conversions first, then first come first served.

    ``queue`` lists ``(txn, status, mode, convert_mode)`` in arrival order, ``status`` one of
    "granted", "waiting", "converting" (README.md, part 3). Return the granted transactions in
    the order they were granted. Do not change ``queue``.
    """
    raise NotImplementedError("wakeup: your code here")


def digest_step(fingerprint: int, blocker_digests: list[int]) -> tuple[int, int | None]:
    """One Dreadlocks step: ``(digest, cycle_with)`` (README.md, part 4).

    ``digest`` is ``fingerprint`` ORed with every blocker's digest; ``cycle_with`` the index of the
    first blocker digest holding every bit of ``fingerprint``, or None.
    """
    raise NotImplementedError("digest_step: your code here")
