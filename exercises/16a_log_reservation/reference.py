"""Exercise 16a, reference: minidb's own answer (not a second implementation).

``reserve_for_rollback`` is :func:`minidb.pagestore.wal.logspace.reserve_for_rollback`, which
``LogSpace.admit`` calls for every forward entry a transaction logs on a storage manager that accounts for
log space.
"""

from __future__ import annotations

from minidb.pagestore.wal.logspace import reserve_for_rollback

__all__ = ["reserve_for_rollback"]
