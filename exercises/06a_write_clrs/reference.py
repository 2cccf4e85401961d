"""Exercise 06a, reference: minidb's own answer (not a second implementation).

``compensation`` is :func:`minidb.pagestore.wal.clr.compensation`, which
``minidb.pagestore.wal.logrec.undo`` calls for every entry a rollback undoes
(a transaction's abort, a savepoint, restart's undo pass): the one place the
engine decides which compensation entry to log. The physical undo handlers
log the CLR twin it returns; ``undo_step`` in
``minidb/pagestore/transactions/rollback.py`` logs the ``compensate`` it
returns after a logical undo.
"""

from __future__ import annotations

from minidb.pagestore.wal.clr import compensation as _compensation


def compensation(entry_type, values):
    answer = _compensation(entry_type, values)
    return None if answer is None else tuple(answer)
