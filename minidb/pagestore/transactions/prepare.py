"""Two-phase commit: preparing a transaction, and finding its prepare entries again after a crash.

A transaction that is one branch of a distributed transaction is asked by
the *coordinator* whether it can commit (phase one). The storage manager
*prepares* it: it makes sure that, whatever happens next, crashes included,
it can still either commit or abort the transaction, and says yes. From then
on the transaction is **in doubt**: it does no more work, and only the
coordinator decides, naming it by its *global transaction id* (gtid), whether
it commits (``commit_prepared``) or aborts (``abort_prepared``) (phase two).
A crash decides nothing: restart neither commits nor rolls back a prepared
transaction, it brings it back prepared and leaves it "for the server", as
Shore does (``docs/sources.md#two-phase-commit``).

**Prepare** (:func:`log_prepare`) logs, chained like the transaction's other
entries (entry types in :mod:`minidb.pagestore.wal.logdef`):

1. ``xct_prepare_st``: the gtid and the coordinator;
2. ``xct_prepare_alk``: the locks the transaction holds, each with its mode,
   in entries of at most :data:`LOCKS_PER_ENTRY`;
3. ``xct_prepare_stores``: the space it frees at commit (stores marked for
   deletion, extents in which it freed pages, the pages it freed, which
   nobody else may take while it may still roll back);
4. ``xct_prepare_fi``: how many locks were logged, the transaction's first
   LSN and the log space it has reserved for its rollback (``rsvd``, the
   transaction's ``log_space_reserved``, 0 when the log reserves none), so
   that restart can reserve it again: an abort must always find room.

The log is then forced up to ``xct_prepare_fi``: that entry is the
*prepare point*. A crash before it is durable leaves an ACTIVE transaction
that restart rolls back like any other, so prepare is atomic.

Invariants:

- a prepared transaction logs nothing until it is resolved, so its last LSN
  *is* its ``xct_prepare_fi``. A checkpoint's transaction table row (state
  PREPARED, last LSN) is therefore all restart needs: :func:`read_prepare`
  walks the chain back from there to ``xct_prepare_st``. A prepared
  transaction survives any number of checkpoints this way;
- it stays in the transaction table, with its first LSN, so it counts as
  active everywhere: the log is kept from its first LSN on, its freed slots
  and pages stay reserved for it;
- gtids are unique among the transactions that have not ended.

**Space on pages.** A slot a transaction freed, and the bytes a record of it
shrank by, stay reserved for it until it ends, since rolling back needs them
(:mod:`minidb.pagestore.pages.slotted`). The reservation fields are not
logged, and redo acts for no transaction, so a crash loses them; for a
prepared transaction, which may still roll back after restart while new
transactions run, :func:`hold_space` reserves them again from its log chain
(the removals and shrinking splices its rollback would undo).

Worked example: T4 updates ``r(1.3.12.0)`` and is prepared with gtid
``b"order-17"``. It logs ``xct_prepare_st gtid=order-17`` at 0x1/0x300,
``xct_prepare_alk`` with ``v(1) IX, s(1.3) IX, p(1.3.12) IX, r(1.3.12.0) EX``,
``xct_prepare_stores`` (nothing to free) and ``xct_prepare_fi nlocks=4
first=0x1/0x200`` at 0x1/0x3c0, and syncs. A checkpoint logs T4 PREPARED
last=0x1/0x3c0. After a crash, restart finds that row, reads the four
entries back from 0x1/0x3c0, takes the four locks again for T4, and
``sm.in_doubt()`` shows T4; ``sm.commit_prepared(b"order-17")`` then logs its
``xct_end committed=true``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from minidb.log.lsn import LSN, NULL_LSN
from minidb.pagestore.buffer.latch import EX
from minidb.pagestore.errors import BadRequestError, PageStoreCorruptionError
from minidb.pagestore.ids import PageId
from minidb.pagestore.lock import LockId
from minidb.pagestore.transactions.rollback import chain_step
from minidb.pagestore.transactions.xct import XctState, log_xct_entry
from minidb.pagestore.wal.logdef import XCT_PREPARE_ALK, XCT_PREPARE_FI, XCT_PREPARE_ST, XCT_PREPARE_STORES
from minidb.pagestore.wal.logrec import page_id_of

MAX_GTID = 128  # bytes of a global transaction id (and of a coordinator's name)
LOCKS_PER_ENTRY = 64


class GtidError(BadRequestError):
    """A global transaction id that is malformed, already in use, or names no prepared transaction."""


def check_gtid(gtid: Any, what: str = "a gtid") -> bytes:
    """``gtid`` as bytes, if it is 1 to MAX_GTID bytes; else a GtidError."""
    if not isinstance(gtid, (bytes, bytearray)):
        raise GtidError(f"{what} must be bytes (1 to {MAX_GTID}), not {type(gtid).__name__} {gtid!r}")
    if not 1 <= len(gtid) <= MAX_GTID:
        raise GtidError(f"{what} must be 1 to {MAX_GTID} bytes long, not {len(gtid)}")
    return bytes(gtid)


@dataclass
class PreparedInfo:
    """What a prepared transaction logged at prepare, and what restart gives it back."""

    gtid: bytes
    coordinator: bytes = b""
    locks: dict[LockId, str] = field(default_factory=dict)  # lock id -> mode name
    stores: list[int] = field(default_factory=list)  # store numbers marked for deletion
    exts: list[tuple[int, int]] = field(default_factory=list)  # (store number, extent)
    pages: list[int] = field(default_factory=list)  # page numbers it freed
    first_lsn: LSN = NULL_LSN
    rsvd: int = 0  # log space reserved for its rollback
    lsn: LSN = NULL_LSN  # its xct_prepare_fi: the prepare point


@dataclass(frozen=True)
class InDoubt:
    """A prepared transaction as ``sm.in_doubt()`` lists it."""

    gtid: bytes
    tid: int
    first_lsn: LSN
    prepared_at: LSN
    locks: dict[LockId, str]
    coordinator: bytes = b""

    def __str__(self) -> str:
        locks = ", ".join(f"{lid} {mode}" for lid, mode in self.locks.items()) or "no locks"
        return f"T{self.tid} gtid={self.gtid!r} first={self.first_lsn} prepared at {self.prepared_at}: {locks}"


def log_prepare(log: Any, xct: Any, info: PreparedInfo, vol: int, latch: Any) -> LSN:
    """Log ``xct``'s prepare entries (see the module documentation); return the ``xct_prepare_fi`` LSN.

    The last entry is logged and the state set to PREPARED under ``latch``
    (the transaction table latch, which a checkpoint holds while it copies
    the table), so a checkpoint sees the transaction PREPARED only if its
    ``xct_prepare_fi`` lies before the checkpoint's table.
    """
    log_xct_entry(log, xct, XCT_PREPARE_ST, {"gtid": info.gtid, "coordinator": info.coordinator})
    locks = sorted(info.locks.items())
    for i in range(0, len(locks), LOCKS_PER_ENTRY):
        log_xct_entry(log, xct, XCT_PREPARE_ALK, {"locks": [
            {"space": lid.code, "numbers": [{"n": n} for n in lid.numbers], "key": lid.key, "mode": mode}
            for lid, mode in locks[i:i + LOCKS_PER_ENTRY]]})
    log_xct_entry(log, xct, XCT_PREPARE_STORES, {
        "vol": vol,
        "stores": [{"snum": s} for s in info.stores],
        "exts": [{"snum": s, "ext": e} for s, e in info.exts],
        "pages": [{"page": p} for p in info.pages]})
    with latch:
        info.first_lsn = xct.first_lsn
        info.lsn = log_xct_entry(log, xct, XCT_PREPARE_FI, {"nlocks": len(locks), "first": info.first_lsn,
                                                            "rsvd": info.rsvd})
        xct.state = XctState.PREPARED
        xct.prepared = info
    return info.lsn


def read_prepare(log: Any, lsn: LSN) -> PreparedInfo:
    """The prepare entries of the transaction whose ``xct_prepare_fi`` is at ``lsn``, read back."""
    entry = log.read(lsn)
    if entry.type_name != "xct_prepare_fi":
        raise PageStoreCorruptionError(f"{lsn}: a prepared transaction's last entry should be xct_prepare_fi, "
                                       f"not {entry.type_name}")
    fi = entry.values
    info = PreparedInfo(b"", first_lsn=fi["first"], rsvd=fi["rsvd"], lsn=lsn)
    at = fi["txn_prev_lsn"]
    while True:
        if at.is_null:
            raise PageStoreCorruptionError(f"{lsn}: T{fi['txn_id']}'s chain ends before its xct_prepare_st")
        entry = log.read(at)
        v = entry.values
        if entry.type_name == "xct_prepare_alk":
            for item in v["locks"]:
                lid = LockId(item["space"], tuple(n["n"] for n in item["numbers"]), item["key"])
                info.locks[lid] = item["mode"]
        elif entry.type_name == "xct_prepare_stores":
            info.stores = [s["snum"] for s in v["stores"]]
            info.exts = [(e["snum"], e["ext"]) for e in v["exts"]]
            info.pages = [p["page"] for p in v["pages"]]
        elif entry.type_name == "xct_prepare_st":
            info.gtid, info.coordinator = v["gtid"], v["coordinator"]
            break
        else:
            raise PageStoreCorruptionError(f"{at}: {entry.type_name} among T{fi['txn_id']}'s prepare entries")
        at = v["txn_prev_lsn"]
    if len(info.locks) != fi["nlocks"]:
        raise PageStoreCorruptionError(f"{lsn}: T{fi['txn_id']} logged {fi['nlocks']} locks at prepare, "
                                       f"{len(info.locks)} were found")
    info.locks = dict(sorted(info.locks.items()))
    return info


def space_to_hold(log: Any, undo_nxt: LSN) -> list[tuple[PageId, int | None, int]]:
    """(page, slot or None, bytes) that a rollback from ``undo_nxt`` would need back: every
    ``rec_remove`` (its slot and record) and every shrinking ``rec_splice`` (the bytes cut)."""
    held = []
    lsn = undo_nxt
    while not lsn.is_null:
        entry = log.read(lsn)
        v = entry.values
        action, following = chain_step(entry.entry_type, v)
        if action == "undone" and entry.type_name == "rec_remove":
            held.append((page_id_of(v), v["slot"], len(v["data"])))
        elif action == "undone" and entry.type_name == "rec_splice" and len(v["new"]) < len(v["old"]):
            held.append((page_id_of(v), None, len(v["old"]) - len(v["new"])))
        lsn = following
    return held


def hold_space(volume: Any, xct: Any) -> int:
    """Restart: reserve again, on its pages, the space prepared ``xct`` freed; return how many
    reservations were made (see the module documentation)."""
    made = 0
    for pid, slot, length in space_to_hold(volume.log, xct.undo_nxt):
        page = volume.bp.fix(pid, EX)
        done = False
        try:
            done = page.reserve_again(slot, length, xct.txn_id)
        finally:
            volume.bp.unfix(page, dirty=done)
        made += done
    return made
