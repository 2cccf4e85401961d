"""Exercise 01b: group commit, one step of a sync request at a time.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/01b_group_commit --exercise-impl=student
"""

from __future__ import annotations

# The actions, as the log manager spells them.
SERVED, FOLLOW, LEAD, GATHER, WRITE, SYNC = "served", "follow", "lead", "gather", "write", "sync"


def commit_step(lsn: int, durable_end: int, in_flight: bool, leading: bool, written_end: int | None,
                waiting: int, expected: int, waited: float, max_wait: float) -> tuple[str, int | None]:
    """The next step of the sync request for the entry at ``lsn``: ``(action, target)``, where ``target``
    is None except for SYNC (after that fsync every entry that starts before ``target`` is durable).

    ``durable_end``: the entries that start before it are durable; ``in_flight``: another request leads an
    fsync right now; ``leading``: this request is the leader; ``written_end``: where the log buffer the
    leader wrote ends (None until it wrote it); ``waiting``: the followers waiting for the next fsync;
    ``expected``: how many sync requests the previous fsync served, its leader's included; ``waited``: how
    long this leader has gathered so far; ``max_wait``: the longest it may. See README.md.
    """
    raise NotImplementedError("commit_step: your code here")
