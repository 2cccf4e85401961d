"""Exercise 01b, reference: minidb's own answer (not a second implementation).

``commit_step`` is :func:`minidb.log.groupcommit.commit_step`, which
``LogManager.sync`` in ``minidb/log/manager.py`` asks at every step of a sync
request (the one place the log decides who leads, who follows, how long the
leader gathers and how far its fsync counts). The engine passes its ``LSN``
objects; the function only compares them, so whole numbers work as well.
"""

from __future__ import annotations

from minidb.log.groupcommit import commit_step as _commit_step


def commit_step(lsn, durable_end, in_flight, leading, written_end, waiting, expected, waited, max_wait):
    return _commit_step(lsn, durable_end, in_flight, leading, written_end, waiting, expected, waited, max_wait)
