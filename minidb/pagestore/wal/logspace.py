"""Log space: a bounded log or disk, and the space reserved in it for rollbacks (Shore's log reservation).

A log of bounded size (``StorageManager.format(..., log_size=BYTES)``) has a
fixed number of *partitions* (log files of ``log_size / partitions`` bytes,
preallocated; see :mod:`minidb.log.manager`). Space comes back only when a
checkpoint lets old partitions be scavenged. So a transaction could fill the
log with forward work and then be unable to abort: its rollback needs to log
compensation entries too. Shore's answer, built here, is to *reserve*, with
every entry logged, the space its undo may need:

- each entry type has a *fudge factor* in the page store's entry-type table
  (:mod:`minidb.pagestore.wal.logdef`); logging an entry of ``size`` bytes
  reserves ``ceil(size * fudge)`` bytes for the transaction, and its first
  entry also reserves room for ``xct_abort``, ``xct_end`` and a
  ``compensate`` (:data:`END_RESERVE`);
- a *forward* entry (a transaction that is active and not rolling back) is
  admitted only if it and its reservation fit in the free space: the room
  left in the log, less every transaction's reservation, less a reserve for
  one checkpoint (:attr:`LogSpace.chkpt_reserve`). Otherwise it is refused
  with :class:`~minidb.pagestore.errors.OutOfLogSpaceError` and nothing is
  logged: the transaction can still roll back to a savepoint or abort.
  That decision, what the entry reserves and whether it fits, is the pure
  function :func:`reserve_for_rollback`, which :meth:`LogSpace.admit` calls
  in one place through ``RESERVE``, an exercise hook (:mod:`minidb.impl`;
  exercise 16a);
- a *rollback* entry (a CLR, ``compensate``, ``xct_abort``, ``xct_end``, any
  entry of a transaction that is rolling back, aborting or freeing space at
  commit, restart's) is never refused for reservations: it uses the space its
  transaction reserved. When rollback walks past an entry, the reservations of
  that entry and of everything logged after it are released
  (:meth:`LogSpace.undone`), so after ``rollback_to(savepoint)`` the
  transaction holds exactly what it held at the savepoint; ``xct_end``
  releases the rest. The sum returns to zero when no transaction is left;
- a non-transactional entry (a checkpoint's) is refused if it would eat into
  the transactions' reservations; a checkpoint on demand is refused before it
  starts if it would eat into the checkpoint reserve
  (:meth:`LogSpace.check_checkpoint`): the reserve is kept for the checkpoint
  that ends restart or a clean close, after which scavenging frees everything
  before it (no transaction is active and every page was written).

**Page images in a rollback.** A CLR may make a clean page dirty, so a full
image of the page is logged before it (:mod:`minidb.pagestore.wal.pageimage`);
the image belongs to no transaction. So a transaction's first undoable entry
on each page also reserves one image of the largest size (``waste``, kept
with that entry's row: released when rollback walks past the transaction's
oldest entry on the page, after the last CLR there). A page image logged
while an undo runs (:meth:`LogSpace.undoing`, set by each undo step of a
rollback or of restart's undo, in that thread) is never refused: it draws on
the reservation of the transaction being rolled back. Restart reserves the
images again with the chain.

Restart re-reserves for its losers and for the prepared transactions it
brings back in doubt (:meth:`LogSpace.reserve_chain`), so restart's undo and
a later ``abort_prepared`` always have room: on a full disk too, since the
log's partitions are preallocated.

**An unbounded log on a bounded disk.** Without ``log_size`` the disk is the
bound. On a disk that tells its free space (``Disk.free_space``: an OSDisk
asks the file system, a SimDisk has a ``capacity``) the storage manager
keeps the same accounting, and the log's room is the disk's free space less
the bytes still in the log buffer, less a file header and ``waste`` for each
log file that space could still hold (:mod:`minidb.log.manager`). Forward
work is then refused (the message says the disk bounds the log) while there
is still room for every active transaction's rollback and a checkpoint. The
rest of what an abort or a restart writes needs no new space: the volume's
pages are allocated when it is formatted (``File.allocate``), the master
file has its two slots from the first checkpoint on, and opening the log
after a crash only cuts. A crash cannot make the room smaller: the log it
leaves is at most as long as the one the reservations were made in, so
restart's undo, its TMP drop and its checkpoint fit as the abort would have.
The accounting holds against minidb's own writes only: space another
program takes from the disk meanwhile is not reserved (nothing is written
ahead), and a disk that told no bound when the storage manager opened (a
SimDisk without a capacity) has no accounting at all.

**Restart's own transaction.** Restart destroys the TMP files with a
transaction of its own (``Xct.restart_work``), after its undo, on a log the
crash may have left nearly full. Restart never rolls it back, so its entries
reserve nothing for a rollback (were they to, a TMP file's drop, whose
``store_operation`` entries reserve six times their size, could be refused
and restart could not finish); each is admitted if it fits in the room left
beside the other transactions' reservations and the checkpoint reserve. A
crash in the middle of it leaves a loser like any other, whose undo the
next restart reserves again from the log.

A file's end may be wasted when the next entry does not fit: ``waste``, the
largest entry the page store logs (about a page), is counted lost per file.

Worked example (log of 4 partitions of 6000 bytes, 24000 bytes, pages of
512 bytes: ``waste`` 640): T3 inserts a 120-byte record: ``rec_insert`` is
164 bytes, fudge 1.5: 246 bytes reserved, plus 128 for its end and 640 for
an image of the page (its first entry there): T3 holds 1014. It updates the
record (``rec_splice`` 180 bytes, on the same page: 270 more, 1284 held).
``rollback_to`` the savepoint taken after the insert logs one CLR and
releases 270: 1014 held. Its abort logs ``xct_abort``, a CLR (after the
page's image if the page was written clean meanwhile) and ``xct_end``, which
releases the rest: 0.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from minidb import impl
from minidb.log.header import HEADER_SIZE
from minidb.log.lsn import LSN, NULL_LSN
from minidb.log.types import EntryType
from minidb.pagestore.errors import OutOfLogSpaceError
from minidb.pagestore.wal.logdef import (
    CHKPT_BEGIN,
    CHKPT_BF_TAB,
    CHKPT_DEV_TAB,
    CHKPT_END,
    CHKPT_XCT_TAB,
    COMPENSATE,
    PAGE_IMAGE,
    XCT_ABORT,
    XCT_END,
)

PAGES_PER_ENTRY = 64  # the checkpointer's chkpt_bf_tab size (minidb.pagestore.restart.chkpt)
from minidb.stats import Stats

_TXN = {"txn_id": 0, "txn_prev_lsn": NULL_LSN}
END_RESERVE = sum(HEADER_SIZE + len(t.encode({**_TXN, **v})) for t, v in (
    (XCT_ABORT, {}), (XCT_END, {"committed": False}), (COMPENSATE, {"undo_nxt": NULL_LSN})))
ROLLBACK_TYPES = (XCT_ABORT.code, XCT_END.code)


def checkpoint_size(dirty_pages: int, transactions: int, volumes: int = 1) -> int:
    """The bytes a checkpoint logs with that many dirty pages, transactions and mounted volumes (chkpt_begin,
    chkpt_bf_tab per PAGES_PER_ENTRY pages, chkpt_xct_tab, chkpt_dev_tab with more than one volume,
    chkpt_end)."""
    page = {"vol": 0, "store": 0, "page": 0, "rec_lsn": NULL_LSN}
    xct = {"tid": 0, "state": 0, "last_lsn": NULL_LSN, "undo_nxt": NULL_LSN}
    chunks = [PAGES_PER_ENTRY] * (dirty_pages // PAGES_PER_ENTRY) + [dirty_pages % PAGES_PER_ENTRY]
    items = [CHKPT_BEGIN.encode({}), CHKPT_XCT_TAB.encode({"youngest": 0, "xcts": [xct] * transactions}),
             CHKPT_END.encode({"master": NULL_LSN, "min_rec_lsn": NULL_LSN})]
    items += [CHKPT_BF_TAB.encode({"pages": [page] * n}) for n in chunks if n]
    items += [CHKPT_DEV_TAB.encode({"vols": [{"vol": 0}] * volumes})] if volumes > 1 else []
    return sum(HEADER_SIZE + len(item) for item in items)


def _page_key(values: dict[str, Any]) -> tuple[int, int] | None:
    """The page an entry names, if any."""
    return (values["vol"], values["page"]) if "page" in values and "vol" in values else None


def reservation(entry_type: EntryType, size: int) -> int:
    """The log space an entry of ``size`` bytes reserves for its undo."""
    return math.ceil(size * entry_type.fudge)


def reserve_for_rollback(size: int, fudge: float, first_entry: bool, first_on_page: bool, end_reserve: int,
                         page_image: int, free: int | None) -> tuple[int, int, bool]:
    """What a forward entry of ``size`` bytes (its type's ``fudge``) reserves for its transaction's rollback,
    and whether it is admitted: ``(with_the_entry, for_the_end, admitted)``.

    ``first_entry``: the transaction's first entry (it reserves ``end_reserve`` for its end); ``first_on_page``:
    its first undoable change to that page (it reserves one ``page_image``); ``free``: the bytes left beside
    every reservation and the checkpoint reserve (None: an unbounded log, nothing is refused)."""
    with_entry = math.ceil(size * fudge) + (page_image if first_on_page else 0)
    for_end = end_reserve if first_entry else 0
    return with_entry, for_end, free is None or size + with_entry + for_end <= free


def _reserve_from_exercise(hook: impl.Hook, student: Callable) -> Callable[..., tuple[int, int, bool]]:
    """A student's ``reserve_for_rollback`` (exercise 16a has the engine's signature), its answer checked for
    form: two byte counts and a yes or no."""
    def reserve(*args: Any) -> tuple[int, int, bool]:
        answer = student(*args)
        if not (isinstance(answer, tuple) and len(answer) == 3 and all(type(n) is int and n >= 0 for n in answer[:2])
                and isinstance(answer[2], bool)):
            raise hook.wrong(f"returned {answer!r}, not (bytes with the entry, bytes for the end, admitted)")
        return answer
    return reserve


#: where :meth:`LogSpace.admit` decides a forward entry's reservation (exercise 16a's hook)
RESERVE = impl.register("16a_log_reservation", "reserve_for_rollback", reserve_for_rollback, _reserve_from_exercise)


class LogSpace:
    """The reservations of one storage manager's transactions in its log (see the module documentation).

    ``transactions`` looks a transaction up by tid without taking the table
    latch (the hook runs under the log's write latch, which comes after the
    table latch); ``holders`` lists the active transactions, for messages.
    """

    def __init__(self, log: Any, transactions: Callable[[int], Any], holders: Callable[[], list[Any]],
                 waste: int, chkpt_reserve: int):
        self.log = log
        self.transactions = transactions
        self.holders = holders
        self.waste = waste
        self.chkpt_reserve = chkpt_reserve
        self.reserved: dict[int, list[tuple[LSN, int]]] = {}  # tid -> (LSN, bytes) in LSN order
        self.ends: dict[int, int] = {}  # tid -> bytes reserved for its xct_abort, xct_end, compensate
        self.pages: dict[int, dict[tuple[int, int], LSN]] = {}  # tid -> page -> its first entry there
        self._undo = threading.local()
        self.total = 0
        self.stats = Stats("logspace", ["nReserved", "nReleased", "nRefused"])
        log.admit = self.admit

    # -- the log's admission hook ---------------------------------------------------------
    def admit(self, entry_type: EntryType, values: dict[str, Any], size: int,
              room: Callable[[int], int | None]) -> Callable[[LSN], None] | None:
        tid = values.get("txn_id", 0) if entry_type.transactional else 0
        if entry_type.code == XCT_END.code and entry_type.owner == XCT_END.owner:
            return lambda lsn: self.release(tid)
        left = room(self.waste)
        if not tid:  # a checkpoint (see check_checkpoint), or the volume logging for no transaction
            if entry_type is PAGE_IMAGE and getattr(self._undo, "active", False):
                return None  # an undo's image: reserved by the transaction rolled back
            if left is not None and size > left - self.total:
                self._refuse(f"cannot log {entry_type.name} (needs {size} bytes)", left, 0)
            return None
        xct = self.transactions(tid)
        if (xct is None or not xct.is_active or xct.rolling_back or entry_type.compensation
                or entry_type.code in ROLLBACK_TYPES):
            return None  # uses its transaction's reservation
        if xct.restart_work:  # restart's own transaction: it reserves nothing, and takes no one's reservation
            if left is not None and size > left - self.total - self.chkpt_reserve:
                self._refuse(f"restart's T{tid} cannot log {entry_type.name} (needs {size} bytes)", left,
                             self.chkpt_reserve)
            return None
        page = _page_key(values) if entry_type.undoable else None
        if page is not None and page in self.pages.get(tid, {}):
            page = None  # not the transaction's first change to the page: its image is reserved already
        free = None if left is None else left - self.total - self.chkpt_reserve
        need, first, admitted = RESERVE.call(size, entry_type.fudge, tid not in self.ends, page is not None,
                                             END_RESERVE, self.waste, free)  # the one call site
        if not admitted:
            self._refuse(f"T{tid} cannot log {entry_type.name}: it needs {size + need + first} bytes ({size} "
                         f"for the entry, {need + first} reserved for its rollback)", left, self.chkpt_reserve)

        def reserve(lsn: LSN) -> None:
            if first:
                self.ends[tid] = first  # for its end: never released by a rollback
                self.total += first
            if page is not None:
                self.pages.setdefault(tid, {})[page] = lsn
            self._reserve(tid, lsn, need)
        return reserve

    @contextmanager
    def undoing(self) -> Iterator[None]:
        """Around one undo step: page images this thread logs draw on the rolled-back transaction's
        reservation (see the module documentation)."""
        was = getattr(self._undo, "active", False)
        self._undo.active = True
        try:
            yield
        finally:
            self._undo.active = was

    def check_checkpoint(self, size: int) -> None:
        """Refuse a checkpoint of ``size`` bytes that would leave less than the checkpoint reserve."""
        left = self.log.room(self.waste)
        if left is not None and size > left - self.total - self.chkpt_reserve:
            self._refuse(f"cannot take a checkpoint of {size} bytes", left, self.chkpt_reserve)

    def _refuse(self, what: str, left: int, keep: int) -> None:
        self.stats.add("nRefused")
        holders = [x for x in self.holders() if not x.first_lsn.is_null]
        oldest = min(holders, key=lambda x: x.first_lsn, default=None)
        held = (f"; the oldest transaction holding the log is T{oldest.txn_id} (first LSN {oldest.first_lsn})"
                if oldest is not None else "")
        bound = "" if self.log.max_files is not None else " (the log is bounded by its disk's free space)"
        raise OutOfLogSpaceError(
            f"{self.log.disk.where()}: out of log space{bound}: {what}, but only {max(0, left - self.total - keep)} bytes "
            f"are free ({left} bytes of room, {self.total} reserved for rollbacks, {keep} for a checkpoint){held}")

    # -- reserving and releasing ----------------------------------------------------------------
    def _reserve(self, tid: int, lsn: LSN, amount: int) -> None:
        self.reserved.setdefault(tid, []).append((lsn, amount))
        self.total += amount
        self.stats.add("nReserved", amount)

    def undone(self, tid: int, lsn: LSN) -> None:
        """Rollback walked past ``tid``'s entry at ``lsn``: release what it and every later entry reserved."""
        rows = self.reserved.get(tid, [])
        while rows and rows[-1][0] >= lsn:
            self._take(rows.pop()[1])
        pages = self.pages.get(tid, {})
        for page in [p for p, first in pages.items() if first >= lsn]:
            del pages[page]

    def release(self, tid: int) -> None:
        """``tid`` ended: release everything it reserved."""
        for _, amount in self.reserved.pop(tid, []):
            self._take(amount)
        self._take(self.ends.pop(tid, 0))
        self.pages.pop(tid, None)

    def _take(self, amount: int) -> None:
        self.total -= amount
        self.stats.add("nReleased", amount)

    def reserve_chain(self, tid: int, undo_nxt: LSN, read: Callable[[LSN], Any]) -> int:
        """Reserve again what ``tid``'s entries from ``undo_nxt`` back need for their undo, and its end
        (after restart, for a loser or a prepared transaction); return the amount."""
        rows: list[tuple[LSN, int]] = []
        pages: dict[tuple[int, int], int] = {}  # page -> index of the oldest row on it so far
        lsn = undo_nxt
        while not lsn.is_null:
            entry = read(lsn)
            if entry.entry_type.compensation:
                lsn = entry.values["undo_nxt"]
                continue
            page = _page_key(entry.values) if entry.entry_type.undoable else None
            if page is not None:
                pages[page] = len(rows)
            rows.append((lsn, reservation(entry.entry_type, entry.size)))
            lsn = entry.values["txn_prev_lsn"]
        for index in pages.values():
            rows[index] = (rows[index][0], rows[index][1] + self.waste)
        self.release(tid)
        self.ends[tid] = END_RESERVE
        self.total += END_RESERVE
        self.pages[tid] = {page: rows[index][0] for page, index in pages.items()}
        for row in reversed(rows):
            self._reserve(tid, *row)
        return self.held(tid)

    def held(self, tid: int) -> int:
        """The bytes ``tid`` holds reserved."""
        return sum(amount for _, amount in self.reserved.get(tid, [])) + self.ends.get(tid, 0)

    def summary(self) -> str:
        per = ", ".join(f"T{tid} {self.held(tid)}" for tid in sorted(self.ends)) or "none"
        return f"log space: {self.log.room(self.waste)} bytes of room, {self.total} reserved ({per})"
