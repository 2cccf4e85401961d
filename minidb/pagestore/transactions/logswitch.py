"""Logging switched off: for one transaction a while (Shore's ``xct_log_switch_t``), or for every
transaction (Shore's ``logging_enabled`` option, ``StorageManager.open(..., logging_enabled=False)``).

Shore lets a transaction stop logging and simply not log what it does then;
recovery can then neither undo nor redo those changes, and the promises of
restart (committed changes survive, a loser leaves no trace) hold only by
luck. minidb keeps the promises, by allowing while logging is off only the
changes that never need the log: those to files that the transaction itself
*loads*, whose store properties (:mod:`minidb.pagestore.files.storeprops`)
already say how they are recovered without the log.

**The rules**, while a transaction's logging is off:

1. a file it creates is a LOAD file (a TMP file stays TMP): its record
   changes are not logged (only the space management is, which restart
   needs to know what each page is);
2. it may change the files it loads (LOAD files it created, INSERT files it
   set) and TMP files; a change to any other file, an index or an R*-tree
   (stores other transactions share, whose changes a rollback or restart
   must undo or redo from the log) is refused (:func:`refusal`), nothing
   changed;
3. it may not be prepared (a prepared transaction must be able to roll
   back, or to commit after a crash, from the log alone), and a prepared
   transaction may not turn its logging off;
4. a rollback to a savepoint taken before unlogged changes is refused (the
   transaction manager's rule for LOAD files: the pages are not in the log);
   an abort is allowed: it drops the LOAD files whole.

**What survives a crash.** A transaction's unlogged changes are in its LOAD
files, and commit forces every one of their pages before it logs the
commit point (:mod:`minidb.pagestore.transactions.loadstores`). So after a
crash: if the commit point is durable, the files and all their records are
there; if not (a crash before the commit, or after a commit that was not
durable), restart undoes the files' creation like a loser's, and nothing of
them is left, whatever pages the cleaner had written. Changes made with
logging on, before or after, are recovered from the log as always.

Why a transaction that has already logged changes to shared stores may turn
its logging off here, unlike in Shore: it cannot change those stores again
until its logging is on (rule 2), so its rollback still undoes them from the
log, and its unlogged changes go with the LOAD files.

Worked example: T5 updates r(1.3.12.0) (logged), then, logging off, creates
file s(1.7) (LOAD) and three records in it (not logged); an update of
r(1.3.12.0) now is refused. Commit forces s(1.7)'s pages, makes it
REGULAR, logs ``xct_end``; a crash before that ``xct_end`` is durable
leaves r(1.3.12.0) as it was and no s(1.7).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from minidb.pagestore.errors import BadRequestError
from minidb.pagestore.ids import StoreId
from minidb.pagestore.pages.storeprop import StoreProperty
from minidb.pagestore.transactions.xct import XctState


def property_for(xct: Any, prop: StoreProperty) -> StoreProperty:
    """The property of a file ``xct`` creates (rule 1)."""
    return StoreProperty.LOAD if xct.log_off and prop == StoreProperty.REGULAR else prop


def refusal(xct: Any, store: StoreId | None, what: str, tmp: bool = False) -> str | None:
    """Why ``xct`` may not ``what`` (a change to ``store``; None: a store it cannot load) with its logging off
    (rule 2); None when it may."""
    if not xct.log_off or tmp or (store is not None and store in xct.load_stores):
        return None
    where = f" {store}" if store is not None else ""
    return (f"T{xct.txn_id} cannot {what}{where} with its logging off: other transactions share it, and a "
            f"rollback or restart could neither undo nor redo a change the log does not hold; only its own LOAD "
            f"and INSERT files and TMP files change unlogged (turn its logging on first)")


def check(xct: Any, store: StoreId | None, what: str, tmp: bool = False) -> None:
    reason = refusal(xct, store, what, tmp)
    if reason is not None:
        raise BadRequestError(reason)


@contextmanager
def logging_off(xct: Any) -> Iterator[Any]:
    """``with logging_off(t):`` ``t``'s logging is off inside the block, as it was after (rule 3 first)."""
    if xct.state == XctState.PREPARED:
        raise BadRequestError(f"T{xct.txn_id} is prepared: it cannot turn its logging off (its rollback or commit "
                              f"after a crash must find everything in the log)")
    before, xct.log_off = xct.log_off, True
    try:
        yield xct
    finally:
        xct.log_off = before
