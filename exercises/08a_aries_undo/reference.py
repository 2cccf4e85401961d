"""Exercise 08a, reference: minidb's own answer (not a second implementation).

``undo_order`` is :func:`minidb.pagestore.restart.undo.exercise_form`:
:func:`minidb.pagestore.restart.undo.undo_order`, which runs the undo pass's
loop (``walk_losers``: always the largest LSN, through :class:`UndoList`)
with the decision of :func:`minidb.pagestore.transactions.rollback.chain_step`
(by the entry type's flags C and U), without undoing anything, with the
exercise's integers as packed LSNs and its kinds as real page-store entry
types with those flags. The same module turns a student's ``undo_order``
into the undo pass's walk (``UNDO_WALK``, see ``minidb/impl.py``).
"""

from __future__ import annotations

from minidb.pagestore.restart.undo import exercise_form as undo_order

__all__ = ["undo_order"]
