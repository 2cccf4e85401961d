"""Compensation: what rollback logs when it undoes an entry, and the ``undo_nxt`` it carries.

Rolling back (a transaction's abort, a savepoint, restart's undo pass) walks
a transaction's chain backwards (:mod:`minidb.pagestore.transactions.rollback`).
For every entry it *undoes*, it logs one compensation entry (a CLR, flag
C) whose ``undo_nxt`` is the undone entry's ``txn_prev_lsn``: the next entry
the rollback has to look at. A rollback interrupted by a crash resumes
there (the transaction's undo-next becomes the CLR's ``undo_nxt``), so an
undo is never undone and every crash still leaves progress made.

Which compensation entry, by the undone entry's flags:

- a *physical* undoable entry (flag U, not L: ``rec_insert``,
  ``rec_remove``, ``rec_splice``, one record on one page) gets its **CLR
  twin** ``clr_<name>``, which makes the inverse change on the same page:
  the same slot and record for an insert or a removal; for a splice, the
  bytes swapped (``old`` := the entry's ``new``, ``new`` := its ``old``);
- a *logical* undoable entry (flags U and L: the volume's maps, the B+tree)
  is undone by an inverse *operation* that logs entries of its own; then a
  stand-alone ``compensate`` entry closes it;
- an entry that is not undoable (redo-only such as ``page_format``, or a
  state marker) and a compensation entry itself (a CLR, or the
  ``compensate`` closing a compensated action, which jumps back to the
  action's *anchor*) are never undone: nothing is logged for them.

The same ``compensate`` entry closes a compensated action in forward
processing (a B+tree split: grab an anchor, the transaction's last LSN;
log the pieces; log ``compensate`` with ``undo_nxt`` = the anchor), so a
rollback that meets it skips the whole action.

:func:`compensation` returns the entry to log, as a type name and the
fields the rollback supplies (the page and the transaction's fields are
added by logging). ``minidb.pagestore.wal.logrec.undo`` calls it once per
undone entry, through ``COMPENSATION``, an exercise hook
(:mod:`minidb.impl`; exercise 06a: with ``MINIDB_IMPL=student``
the student's version decides), and hands the CLR to the physical undo handlers.

Worked example (transaction 3)::

    0x1/0x100  rec_insert   slot 0 "ab"      txn_prev NULL
    0x1/0x140  rec_splice   slot 0 at 1: "b" -> "xyz"   txn_prev 0x1/0x100

Undoing 0x1/0x140 logs ``clr_rec_splice`` slot 0 at 1, ``old`` "xyz",
``new`` "b", ``undo_nxt`` 0x1/0x100; undoing 0x1/0x100 logs
``clr_rec_insert`` slot 0 "ab", ``undo_nxt`` NULL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from minidb import impl
from minidb.log.types import EntryType, type_by_name

SPLICE_SWAP = {"old": "new", "new": "old"}
TWIN_FIELDS = {"rec_insert": ("slot", "data"), "rec_remove": ("slot", "data"),
               "rec_splice": ("slot", "start", "old", "new")}


class Compensation(NamedTuple):
    """The entry rollback logs for an undone entry: its type's name and its own fields."""

    type_name: str
    values: dict[str, Any]


def compensation(entry_type: EntryType, values: dict[str, Any]) -> Compensation | None:
    """What rollback logs when it meets an entry of ``entry_type`` with ``values`` (None: nothing)."""
    if entry_type.compensation or not entry_type.undoable:
        return None
    undo_nxt = values["txn_prev_lsn"]
    if entry_type.logical:
        return Compensation("compensate", {"undo_nxt": undo_nxt})
    fields = TWIN_FIELDS[entry_type.name]
    inverse = {field: values[SPLICE_SWAP.get(field, field)] if entry_type.name == "rec_splice" else values[field]
               for field in fields}
    return Compensation(f"clr_{entry_type.name}", {**inverse, "undo_nxt": undo_nxt})


def _from_exercise(hook: impl.Hook, student: Callable) -> Callable[[EntryType, dict[str, Any]],
                                                                              Compensation | None]:
    """A student's ``compensation`` (exercise 06a answers ``(type_name, fields)`` or None), checked for form."""
    def compensate(entry_type: EntryType, values: dict[str, Any]) -> Compensation | None:
        answer = student(entry_type, dict(values))
        if answer is None:
            return None
        if not (isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[0], str)
                and isinstance(answer[1], dict)):
            raise hook.wrong(f"returned {answer!r}, not (type_name, fields) or None")
        if type_by_name(answer[0]) is None:
            raise hook.wrong(f"answered {answer[0]!r} for {entry_type.name}: no entry type has that name")
        return Compensation(answer[0], dict(answer[1]))
    return compensate


COMPENSATION = impl.register("06a_write_clrs", "compensation", compensation, _from_exercise)
