"""Exercise 06a: the compensation entry (CLR) rollback logs for each entry it undoes.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/06a_write_clrs --exercise-impl=student
"""

from __future__ import annotations

from typing import Any


def compensation(entry_type, values: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """What rollback logs when it meets an entry of ``entry_type`` with ``values``.

    ``entry_type`` has the attributes ``name``, ``undoable`` (flag U),
    ``logical`` (flag L) and ``compensation`` (flag C). ``values`` are the
    entry's fields, ``txn_prev_lsn`` among them (and ``undo_nxt`` for a
    compensation entry).

    Return ``(type_name, fields)`` of the entry to log, or None if nothing is
    logged for this entry. See README.md.
    """
    raise NotImplementedError("compensation: your code here")
