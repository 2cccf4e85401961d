"""A transaction (Shore's ``xct_t``): its id, state, log chain and what it frees at commit.

A transaction is identified by a *tid*, a number given in increasing order
(larger = younger). Every entry it logs carries its tid and the LSN of its
previous entry (``txn_prev_lsn``), so its entries form a chain backwards
from ``last_lsn``. It also keeps:

- ``first_lsn``: its first entry;
- ``undo_nxt``: where a rollback starts: the last entry that can be undone,
  or, after a compensation entry (CLR), that entry's ``undo_nxt``. Redo-only
  entries do not move it;
- ``stores_to_free``: stores it marked for deletion (destroyed at commit);
- ``extents_to_free``: extents in which it freed pages, as (volume, store,
  extent) (freed at commit if they are still empty);
- ``pages_freed``: pages it freed, which no other transaction may allocate
  while it is active (it may take them back by rolling back);
- ``load_stores``: the LOAD and INSERT stores it is loading
  (:mod:`minidb.pagestore.pages.storeprop`), made regular at its commit, and
  ``unlogged``: how many changes it made to their pages without logging
  them (a savepoint taken before one of those cannot be rolled back to).

States (Shore's ``xct_state_t``)::

    ACTIVE --commit--> FREEING_SPACE --space freed--> ENDED (committed)
     |  |                  (xct_freeing_space)         (xct_end committed=true)
     |  +---abort----> ABORTING --rolled back-------> ENDED (aborted)
     |                 (xct_abort)                     (xct_end committed=false)
     +--prepare--> PREPARED --commit_prepared--> as commit
                   (xct_prepare_*) --abort_prepared--> as abort

A PREPARED transaction (two-phase commit,
:mod:`minidb.pagestore.transactions.prepare`) does no more work; it
survives checkpoints and crashes until it is committed or aborted by its
global transaction id (``gtid``).

A commit with nothing to free logs only ``xct_end``; a transaction that
logged nothing logs nothing at all.

Worked example: transaction 5 logs ``rec_insert`` at 0x1/0x100 (undo-next
0x1/0x100), ``page_format`` at 0x1/0x140 (redo-only: undo-next stays
0x1/0x100), ``rec_splice`` at 0x1/0x170 (undo-next 0x1/0x170). Rolling back
undoes 0x1/0x170, logging ``clr_rec_splice`` with ``undo_nxt`` 0x1/0x140
(the undo-next is now 0x1/0x140), skips the redo-only 0x1/0x140, and
undoes 0x1/0x100.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from minidb.log.lsn import LSN, NULL_LSN
from minidb.log.types import EntryType
from minidb.pagestore.ids import StoreId
from minidb.pagestore.pages.page import StoreFlags
from minidb.pagestore.pages.slotted import SpaceUser
from minidb.pagestore.pages.storeprop import LOADING
from minidb.pagestore.wal.logrec import noting

RECENT = 16


class XctState(IntEnum):
    """Shore's transaction states (the values are logged in ``chkpt_xct_tab``)."""

    ACTIVE = 1
    ABORTING = 2
    FREEING_SPACE = 3
    ENDED = 4
    PREPARED = 5  # after ACTIVE, before ABORTING or FREEING_SPACE (see PROGRESS)


PROGRESS = (XctState.ACTIVE, XctState.PREPARED, XctState.ABORTING, XctState.FREEING_SPACE, XctState.ENDED)
"""The states in the order a transaction goes through them (the values are not)."""


@dataclass(frozen=True)
class SavePoint:
    """A point to roll back to: the transaction's last LSN when it was taken."""

    tid: int
    lsn: LSN
    unlogged: int = 0  # the transaction's unlogged changes to loading stores when it was taken

    def __str__(self) -> str:
        return f"savepoint of T{self.tid} at {self.lsn}"


@dataclass(eq=False)
class Xct:
    """One transaction (see the module documentation)."""

    txn_id: int
    state: XctState = XctState.ACTIVE
    first_lsn: LSN = NULL_LSN
    last_lsn: LSN = NULL_LSN
    undo_nxt: LSN = NULL_LSN
    stores_to_free: list[StoreId] = field(default_factory=list)
    extents_to_free: set[tuple[int, int, int]] = field(default_factory=set)  # (volume, store number, extent)
    pages_freed: set[tuple[int, int]] = field(default_factory=set)  # (volume, page number)
    load_stores: list[StoreId] = field(default_factory=list)
    unlogged: int = 0
    created_tmp: bool = False  # it created a TMP file (restart drops it: the transaction cannot be prepared)
    rolling_back: bool = False
    restart_work: bool = False  # restart's own (dropping TMP files): no log space reserved for its rollback
    log_off: bool = False  # its logging is switched off (minidb.pagestore.transactions.logswitch)
    manager: Any = None
    log_count: int = 0  # entries logged so far
    recent: list[LSN] = field(default_factory=list)  # the last few of them, for traces
    prepared: Any = None  # once PREPARED: its PreparedInfo (gtid, locks, ...)

    @property
    def tid(self) -> int:
        return self.txn_id

    def note_logged(self, lsn: LSN, entry_type: EntryType, values: dict[str, Any]) -> None:
        """An entry of this transaction was logged at ``lsn``: advance the chain and undo-next."""
        if not self.log_count and self.first_lsn.is_null:  # (once an entry is counted, first_lsn is set)
            self.first_lsn = lsn
        self.last_lsn = lsn
        self.log_count += 1
        recent = self.recent
        recent.append(lsn)
        if len(recent) > RECENT:
            del recent[:-RECENT]
        if entry_type.compensation:
            self.undo_nxt = values["undo_nxt"]
        elif entry_type.undoable:
            self.undo_nxt = lsn

    def note_unlogged(self, flags: StoreFlags) -> None:
        """A change to a page whose store's logging is off was made (only a loading store's count)."""
        if flags & LOADING:
            self.unlogged += 1

    def logged_since(self, count: int) -> list[LSN]:
        """The LSNs logged after the ``count``-th entry (at most the last few)."""
        return self.recent[-(self.log_count - count):] if self.log_count > count else []

    def space_user(self) -> SpaceUser:
        """Who asks for space on a page, for space reservation."""
        oldest = self.manager.oldest_active() if self.manager is not None else self.txn_id
        return SpaceUser(self.txn_id, oldest, self.rolling_back)

    @property
    def is_active(self) -> bool:
        return self.state == XctState.ACTIVE

    def __str__(self) -> str:
        return f"T{self.txn_id}"

    def __repr__(self) -> str:
        return (f"Xct(T{self.txn_id} {self.state.name} first={self.first_lsn} last={self.last_lsn} "
                f"undo_nxt={self.undo_nxt})")


def log_xct_entry(log: Any, xct: Any, entry_type: EntryType, values: dict[str, Any] | None = None,
                  then: Callable[[], None] | None = None) -> LSN:
    """Log a non-page entry of ``xct`` (xct_end, compensate, ...), chained to its previous entry; ``then``
    (a change of state the entry means) runs with the entry's note, under the log latch."""
    full = {"txn_id": xct.txn_id, "txn_prev_lsn": xct.last_lsn, **values} if values else \
        {"txn_id": xct.txn_id, "txn_prev_lsn": xct.last_lsn}
    return log.append(entry_type, full, noted=noting(xct, entry_type, full, then))
