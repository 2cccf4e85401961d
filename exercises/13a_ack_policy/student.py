"""Exercise 13a: acks and a replicated commit's durability.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/13a_ack_policy --exercise-impl=student
"""

from __future__ import annotations


def required_acks(policy: str, group_size: int) -> int:
    """How many replicas must acknowledge a commit under ``policy`` ("ALL", "SIMPLE_MAJORITY" or "NONE") in a
    group of ``group_size`` nodes, the master included."""
    raise NotImplementedError("exercise 13a: implement required_acks (see exercises/13a_ack_policy/README.md)")


def count_ack(required: int, commit_vlsn: int | None, acked_by: tuple[str, ...], replica: str,
              vlsn: int) -> tuple[tuple[str, ...], bool]:
    """``replica``'s ack naming VLSN ``vlsn``, for a commit that needs ``required`` acks, whose Commit is at
    ``commit_vlsn`` (None: not known yet), acknowledged so far by ``acked_by``: the replicas whose acks count
    now (earlier ones first), and whether the commit may return."""
    raise NotImplementedError("exercise 13a: implement count_ack (see exercises/13a_ack_policy/README.md)")
