"""Syncup rollback (JE's ``RollbackStart``/``RollbackEnd`` and the replica's ``Rollback``): undo a log's tail.

After syncup found the matchpoint (:mod:`.syncup`), everything the node
logged after it with a VLSN is *rolled back*: it leaves the replication
stream, and its effect leaves the tree. The log is not truncated (the log
store's entries intermingle replicated and local ones, JE's VLSNIndex); instead,
in this order, on a quiescent node (the environment latch held, no
transaction open but the replica's replay ones):

1. check the **rollback limit**, changing nothing if it is passed
   (:class:`~minidb.replication.errors.RollbackLimitError`, asking for a
   network restore): at most ``txn_rollback_limit`` committed transactions
   (JE's ``je.rep.txnRollbackLimit``, 10 by default,
   :mod:`minidb.replication.config`) may be undone, each counted once by its
   Commit, a record written without a transaction or a database's creation
   counted as one;
2. log ``RollbackStart`` (matchpoint VLSN and LSN, the last VLSN rolled back,
   the transactions rolled back) and fsync;
3. set the INVISIBLE bit of each rolled-back entry in place, newest first,
   fsyncing each (:meth:`~minidb.log.LogManager.set_invisible`): the visible
   entries always form a contiguous stream, whatever a crash keeps;
4. undo their effect in memory, newest first: each record gets back the
   version it replaced (the log store's undo, ``records.restore``, only
   where the slot still holds the rolled-back version, or, for a deletion,
   where no slot is left: BINs compress deleted slots away); a database whose
   creation (its replicated MapLN) is rolled back is removed, after its records
   (``DbTree.remove``: the rollback's undo is complete only if the databases
   themselves are as they were at the matchpoint); the replica's open
   replay transactions forget their rolled-back writes (one that began after
   the matchpoint ends, its locks released);
5. truncate the VLSN index from the tail
   (``VLSNIndex.truncate_from_tail_in_rollback``, flushed durably);
6. log ``RollbackEnd`` and fsync.

**Hard recovery: a rollback across a checkpoint.** When the node logged a
checkpoint after the matchpoint (its last CkptEnd lies after it), that
checkpoint's BINs and its flushed VLSN index may hold versions about to be
rolled back, committed ones too. The rollback then does steps 2, 3, 5 and 6
only (the marks durable, the tree left as it is) and finishes by JE's *hard
recovery*: the environment is recovered again from its log
(:meth:`~minidb.replication.env.ReplicatedEnvironment.hard_recover`), and
recovery does not use a checkpoint whose CkptStart lies inside a rollback
period (the matchpoint .. the RollbackEnd, :mod:`.periods`): it starts from
the last checkpoint before the matchpoint, or the log's start, and skips
the INVISIBLE entries, so the tree is rebuilt without them (a BIN logged
in the tail that still points at one is undone again, as below). Before
anything changes, the log from that checkpoint on must still be there (the
cleaner deletes files at the log's head): else a network restore is needed.
JE raises ``RollbackException`` and the application closes and reopens the
environment. minidb instead closes the log store environment and its VLSN
index without a checkpoint and opens them again on the same disk, inside
the same :class:`~minidb.replication.env.ReplicatedEnvironment`: the node
keeps its state, its master, its election node and its links (they hold
the replicated environment, not the log store's), so the replica resumes
the stream at the matchpoint as after a soft rollback. What does not
survive is what JE's handles lose too: the replay transactions and the
database handles of the environment closed (the replay transactions that
recovery finds open are opened again, :func:`reopen_replay_txns`). A crash
at any point is safe: before the RollbackEnd it is a rollback cut short
(below), after it the next open does what hard recovery does, and a crash
during hard recovery's own recovery is a crash during recovery.

Why it survives a crash at any point: invisible entries are skipped by
every reader (the scanners, the feeders, the log store's recovery, which
also undoes a rolled-back transaction as a loser, the VLSN recovery
tracker). A ``RollbackStart`` without its ``RollbackEnd`` is redone when the
environment opens (:class:`PendingRollback`): the VLSN recovery tracker
notes it (its rollback period runs to the end of the log, so recovery
starts from a checkpoint before its matchpoint, and the tracker, which sees
the log from that CkptStart on, sees the RollbackStart); before recovery's
checkpoint the remaining entries are marked and
the recovered tree is undone (:func:`redo_marks_and_undo`), and in that
checkpoint's step 6 the index is truncated and RollbackEnd logged
(:func:`finish_pending`). So after a restart the rollback is finished, or was
never started, and the log, the index and the tree agree.

**A finished rollback after the CkptStart recovery starts from is undone again at open.**
Recovery rebuilds the tree from the checkpoint's BINs and the BINs logged
after its CkptStart. Those logged while the tail was written (an eviction, a
split, a compressed slot) still point at the rolled-back versions: redo skips
invisible LNs, so nothing replaces such a slot, and the version the rollback
put back lived only in memory until the next checkpoint. So, before
recovery's checkpoint, every rollback the VLSN recovery tracker saw (after
the last CkptStart; a finished one before it was written out by that
checkpoint) is undone again on the recovered tree, newest first
(:func:`undo_again`): the slots still holding a rolled-back LSN get the version it
replaced, exactly as the rollback did. A rolled-back deletion whose slot was
compressed away is put back only if no record of that key was redone after
the RollbackStart (a later deletion by the new master leaves no slot either,
and is the newer truth). Why hard recovery for a rollback across a
checkpoint rather than this undo: a checkpoint inside the rollback period
would be the one the next recovery starts from, and its tree and its VLSN
index were written while the rolled-back entries were the node's truth;
rebuilding from before the matchpoint leaves nothing of them to trust.

**Transactions open at the matchpoint.** Transactions interleave, so a
transaction T may have records before the matchpoint and its Commit (or
Abort) after it. The rollback makes that end invisible, and the master's
stream will end T again (its own Commit, or the Abort a new master logs for
a transaction its predecessor never ended). So after a rollback, and
whenever a replica starts taking a stream, every replicated transaction
whose visible records survive but whose end does not is *open again* in the
replica's replay state (:func:`reopen_replay_txns`, JE's resurrected
``ReplayTxn``), exactly as if the stream had stopped at the matchpoint: its
records are T's newest versions in the tree, locked by T, and each one's
abort version is the one T replaced. This also covers a replica that
crashed in the middle of T (recovery undid T as a loser: its records are put
back) and a node that becomes master (it reopens, then aborts, the
transactions nobody ended: :meth:`~minidb.replication.env.ReplicatedEnvironment.become_master`).

JE's VLSNIndex example (LSNs schematic)::

    LSN 100, VLSN 1
    LSN 200, VLSN 2 <- overmarked (INVISIBLE)
    LSN 300, VLSN 3 <- overmarked (INVISIBLE)
    --- syncup, rollback to VLSN 1, restart at VLSN 2
    LSN 400, VLSN 2
    LSN 500, VLSN 3
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from minidb.log import LSN, NULL_LSN, LogEntry
from minidb.logstore.logdef import DELETED_LN_TYPES, USER_LN_TYPES, recovery_start
from minidb.logstore.mapping_tree import MAPPING_DB_ID
from minidb.logstore.tree.ln import AbortInfo
from minidb.logstore.txn.txn import TxnState, WriteRecord
from minidb.replication.errors import NetworkRestoreRequiredError, RollbackLimitError, SyncupError
from minidb.replication.logdef import ROLLBACK_END, ROLLBACK_START
from minidb.replication.vlsn.recovery import PendingRollback

if TYPE_CHECKING:
    from minidb.logstore import Environment
    from minidb.replication.env import ReplicatedEnvironment
    from minidb.replication.vlsn.index import VLSNIndex


@dataclass(frozen=True)
class RollbackResult:
    """What a rollback did: the matchpoint, its RollbackStart/End, the entries made invisible."""

    matchpoint_vlsn: int
    matchpoint_lsn: LSN
    start_lsn: LSN
    end_lsn: LSN
    rolled_back: tuple[tuple[int, LSN, str], ...]  # (VLSN, LSN, type) newest first
    txn_ids: tuple[int, ...]
    records_undone: int
    redone: bool = False  # finished at open, after a crash cut it short
    hard_recovery: str | None = None  # where the hard recovery that rebuilt the tree started (None: none)

    def describe(self) -> str:
        vlsns = [v for v, _, _ in self.rolled_back]
        what = f"VLSNs {min(vlsns)}..{max(vlsns)}" if vlsns else "nothing"
        return (f"rolled back {what} to matchpoint VLSN {self.matchpoint_vlsn} at {self.matchpoint_lsn}: "
                f"RollbackStart {self.start_lsn}, RollbackEnd {self.end_lsn}, txns {list(self.txn_ids)}, "
                + (f"the tree rebuilt by hard recovery {self.hard_recovery}" if self.hard_recovery else
                   f"{self.records_undone} records undone{' (redone at open)' if self.redone else ''}"))


def tail_after(inner: "Environment", matchpoint_vlsn: int, matchpoint_lsn: LSN,
               start: LSN | None = None, invisible_too: bool = False) -> list[LogEntry]:
    """The replicated entries after the matchpoint, newest first, from ``start`` (default: the log's end)."""
    found = []
    for entry in inner.log.scan_backward(start):
        if entry.lsn <= matchpoint_lsn:
            break
        if entry.vlsn is not None and entry.vlsn > matchpoint_vlsn and (invisible_too or not entry.header.invisible):
            found.append(entry)
    return found


def committed_txns(entries: list[LogEntry]) -> list[LogEntry]:
    """The ends of the committed transactions among ``entries``: Commits, and the records written without a
    transaction and databases' creations (each commits by itself). A transaction counts once, however many
    records it wrote."""
    return [e for e in entries if e.type_name in ("Commit", "LN", "DEL_LN", "MapLN")]


def _prev_version(inner: "Environment", entry: LogEntry) -> AbortInfo:
    """The version a rolled-back record replaced (its slot gets it back)."""
    values = entry.values
    prev = values["prev_lsn"]
    if prev.is_null:
        return AbortInfo(NULL_LSN, True)
    if "abort_lsn" in values and prev == values["abort_lsn"]:
        return AbortInfo(prev, values["abort_known_deleted"])
    try:
        replaced = inner.log.read(prev)
    except Exception as e:  # cleaned away: the state at the matchpoint cannot be rebuilt here
        raise NetworkRestoreRequiredError(
            f"{inner.where()}: rolling back {entry.type_name} at {entry.lsn} needs the version it replaced at {prev}, "
            f"which is gone ({e}): a network restore is needed; nothing was rolled back") from None
    return AbortInfo(prev, replaced.type_name in DELETED_LN_TYPES)


def _undo(inner: "Environment", entries: list[LogEntry],
          rewritten: frozenset[tuple[int, bytes]] = frozenset()) -> int:
    """Put back, newest first, the version each rolled-back record replaced; how many slots changed.

    ``rewritten``: the (database id, key) pairs written again after the rollback (:func:`_rewritten_keys`): a
    missing slot of theirs is a later deletion, not a rolled-back one."""
    versions = [_prev_version(inner, e) if e.type_name in USER_LN_TYPES else None for e in entries]
    undone = 0
    for entry, version in zip(entries, versions, strict=True):
        if version is None:
            continue
        db = inner.db_tree.get_by_id(entry.values["db_id"])
        if db is None:
            continue
        key = entry.values["key"]
        only_if: LSN | None = entry.lsn
        if entry.type_name in DELETED_LN_TYPES:
            index, exact = db.tree.search(key).find(key)
            if not exact:  # the deleted slot was compressed away: the deletion is what the tree shows
                if (db.id, key) in rewritten:
                    continue
                only_if = None
        if inner.records.restore(db, key, version, only_if=only_if):
            undone += 1
    for entry in entries:  # newest first, so a database's records went back before its creation goes
        if entry.type_name != "MapLN":
            continue
        name = entry.values["name"]
        db = inner.db_tree.get_by_id(entry.values["db_id"])
        # The new master may have created a database again since, under this name or this id (ids are
        # handed out by each master): that one stays.
        if db is not None and db.name == name and (MAPPING_DB_ID, name.encode("utf-8")) not in rewritten:
            inner.db_tree.remove(db)
            undone += 1
    return undone


def _forget_replay_writes(env: "ReplicatedEnvironment", matchpoint_lsn: LSN) -> None:
    """The replica's open replay transactions forget what they wrote after the matchpoint."""
    for txn_id, txn in list(env.replay_txns.items()):
        for key in list(txn.order):
            record = txn.writes[key]
            record.lsns = [(lsn, deleted) for lsn, deleted in record.lsns if lsn <= matchpoint_lsn]
            if not record.lsns:
                del txn.writes[key]
                txn.order.remove(key)
        kept = [lsn for record in txn.writes.values() for lsn, _ in record.lsns]
        txn.last_lsn = max(kept) if kept else NULL_LSN
        if not kept:
            txn.first_lsn = NULL_LSN
            txn.state = TxnState.ABORTED
            env.env.locks.release_all(txn.id)
            env.env.txn_manager.unregister(txn)
            del env.replay_txns[txn_id]


def reopen_replay_txns(env: "ReplicatedEnvironment") -> list[int]:
    """Open again, as replay transactions, the replicated transactions whose visible records survive but whose
    end (Commit/Abort) does not (see the module documentation); their ids, in log order.

    Reads the whole log forward (a transaction open at the matchpoint may have begun before the last
    checkpoint). Skips the transactions already open on this node."""
    inner = env.env
    writes: dict[int, list[LogEntry]] = {}
    for entry in inner.log.scan():
        if entry.vlsn is None or entry.header.invisible or entry.txn_id is None:
            continue
        if entry.type_name in ("Commit", "Abort"):
            writes.pop(entry.txn_id, None)
        elif entry.type_name in USER_LN_TYPES:
            writes.setdefault(entry.txn_id, []).append(entry)
    reopened = []
    for txn_id, entries in writes.items():
        if txn_id in inner.txn_manager.active:
            continue
        txn = env.replay_txns[txn_id] = inner.txn_manager.begin(txn_id=txn_id)
        for entry in entries:
            values = entry.values
            db = inner.db_tree.get_by_id(values["db_id"])
            if db is None:
                continue
            key, deleted = values["key"], entry.type_name in DELETED_LN_TYPES
            inner.locks.lock_write(db.id, db.name, key, txn_id)
            record = txn.writes.get((db.id, key))
            if record is None:
                record = txn.writes[(db.id, key)] = WriteRecord(
                    db.id, key, AbortInfo(values["abort_lsn"], values["abort_known_deleted"]))
                txn.order.append((db.id, key))
            record.lsns.append((entry.lsn, deleted))
            inner.records.restore(db, key, AbortInfo(entry.lsn, deleted))  # T's newest version, as replay left it
            txn.first_lsn = entry.lsn if txn.first_lsn.is_null else txn.first_lsn
            txn.last_lsn, txn.replicated = entry.lsn, True
        reopened.append(txn_id)
    if reopened:
        inner.trace.emit("replay transactions open again (their ends were rolled back or never logged): %s",
                         reopened)
    return reopened


def roll_back(env: "ReplicatedEnvironment", matchpoint_vlsn: int, matchpoint_lsn: LSN,
              limit: int | None = None) -> RollbackResult | None:
    """Roll back everything after the matchpoint (see the module documentation); None if nothing is after it.

    ``limit``: the number of committed transactions it may undo (default: the node's ``txn_rollback_limit``)."""
    inner = env.env
    limit = env.rep_config.txn_rollback_limit if limit is None else limit
    with inner.latch:
        inner.check_usable()
        tail = tail_after(inner, matchpoint_vlsn, matchpoint_lsn)
        if not tail:
            return None
        others = [t for t in inner.txn_manager.active.values() if t not in env.replay_txns.values()]
        if others:
            raise SyncupError(f"{env.where()}: a rollback needs a quiescent node, but transactions "
                              f"{sorted(t.id for t in others)} are open; nothing was rolled back")
        committed = committed_txns(tail)
        if len(committed) > limit:
            raise RollbackLimitError(
                f"{env.where()}: rolling back to matchpoint VLSN {matchpoint_vlsn} would undo {len(committed)} "
                f"committed transaction{'s' if len(committed) != 1 else ''} (the oldest ends at VLSN {committed[-1].vlsn}, {committed[-1].lsn}), "
                f"more than txn_rollback_limit {limit}: a network restore is needed; nothing was changed")
        for entry in tail:  # every replaced version must still be readable: else change nothing
            if entry.type_name in USER_LN_TYPES:
                _prev_version(inner, entry)
        crossed = crossed_checkpoint(inner, matchpoint_lsn)
        if crossed is not None:
            check_hard_recovery(inner, matchpoint_vlsn, matchpoint_lsn)
        txn_ids = tuple(sorted({e.txn_id for e in tail if e.txn_id is not None}))
        quiet, inner._in_after_operation = inner._in_after_operation, True  # no checkpoint inside a rollback
        try:
            if crossed is None:
                start_lsn, end_lsn, undone = _roll_back(env, tail, matchpoint_vlsn, matchpoint_lsn, txn_ids)
                reopen_replay_txns(env)
            else:  # steps 2, 3, 5 and 6; recovery does the undo
                start_lsn, end_lsn = _roll_back_durably(env, tail, matchpoint_vlsn, matchpoint_lsn, txn_ids)
                undone = 0
        finally:
            inner._in_after_operation = quiet
    hard = None
    if crossed is None:
        inner.after_operation()  # a checkpoint that came due meanwhile
    else:
        info = env.hard_recover(f"the rollback to matchpoint VLSN {matchpoint_vlsn} at {matchpoint_lsn} crosses "
                                f"the checkpoint whose CkptEnd is at {crossed}")
        env.reopen_replay_txns()
        hard = ("from the start of the log" if info.last_ckpt_end.is_null
                else f"from CkptEnd {info.last_ckpt_end} (CkptStart {info.last_ckpt_start})")
    result = RollbackResult(matchpoint_vlsn, matchpoint_lsn, start_lsn, end_lsn,
                            tuple((e.vlsn, e.lsn, e.type_name) for e in tail), txn_ids, undone, hard_recovery=hard)
    env.env.trace.emit("%s", result.describe())
    return result


def crossed_checkpoint(inner: "Environment", matchpoint_lsn: LSN) -> LSN | None:
    """The last CkptEnd if it lies after the matchpoint (the rollback then needs hard recovery), else None."""
    last = inner.checkpointer.last_ckpt_end
    return last if not last.is_null and last > matchpoint_lsn else None


def check_hard_recovery(inner: "Environment", matchpoint_vlsn: int, matchpoint_lsn: LSN) -> None:
    """Hard recovery reads the log from a checkpoint that began before the matchpoint (or from the log's
    start): refuse, changing nothing, if the cleaner has deleted files it would need. The checkpoint looked
    at is the last one ended before the matchpoint (found walking back from it): recovery may take a later
    one, which began before the matchpoint and ended after it, whose log is then all there as well."""
    ckpt_end = next((e for e in inner.log.scan_backward(matchpoint_lsn) if e.type_name == "CkptEnd"), None)
    first_file = inner.log.end().files[0]
    if ckpt_end is not None:
        start = recovery_start(ckpt_end.values)
        if start.file >= first_file:
            return
        needs = f"the log from {start} (the checkpoint ending at {ckpt_end.lsn})"
    else:
        header = inner.log.read(LSN(first_file, 0))
        if header.values["last_entry_lsn"].is_null:  # the log's first file ever: nothing was deleted
            return
        needs = "the log from its start (no checkpoint began before the matchpoint)"
    raise NetworkRestoreRequiredError(
        f"{inner.where()}: the rollback to matchpoint VLSN {matchpoint_vlsn} needs hard recovery, which reads "
        f"{needs}, but the log now begins in file {first_file}: a network restore is needed; nothing was changed")


def _roll_back(env: "ReplicatedEnvironment", tail: list[LogEntry], matchpoint_vlsn: int, matchpoint_lsn: LSN,
               txn_ids: tuple[int, ...]) -> tuple[LSN, LSN, int]:
    """Steps 2-6 of the module documentation: RollbackStart, marks, undo, index, RollbackEnd."""
    inner = env.env
    start_lsn = _log_start(inner, tail, matchpoint_vlsn, matchpoint_lsn, txn_ids)
    inner.log.set_invisible([e.lsn for e in tail])
    undone = _undo(inner, tail)
    _forget_replay_writes(env, matchpoint_lsn)
    env.vlsn_index.truncate_from_tail_in_rollback(matchpoint_vlsn + 1, matchpoint_lsn)
    end_lsn = _log_end(inner, matchpoint_vlsn, start_lsn)
    return start_lsn, end_lsn, undone


def _roll_back_durably(env: "ReplicatedEnvironment", tail: list[LogEntry], matchpoint_vlsn: int,
                       matchpoint_lsn: LSN, txn_ids: tuple[int, ...]) -> tuple[LSN, LSN]:
    """Steps 2, 3, 5 and 6 (the tree is left as it is: hard recovery rebuilds it)."""
    inner = env.env
    start_lsn = _log_start(inner, tail, matchpoint_vlsn, matchpoint_lsn, txn_ids)
    inner.log.set_invisible([e.lsn for e in tail])
    left = tail_after(inner, matchpoint_vlsn, matchpoint_lsn, start_lsn)
    if left:  # hard recovery would rebuild the tree with them: stop before the RollbackEnd (the next open redoes it)
        why = (f"the rollback to matchpoint VLSN {matchpoint_vlsn} marked its entries INVISIBLE, but "
               f"{left[0].type_name} VLSN {left[0].vlsn} at {left[0].lsn} is still visible; no RollbackEnd was logged")
        inner.invalidate(why)
        raise SyncupError(f"{env.where()}: {why}")
    env.vlsn_index.truncate_from_tail_in_rollback(matchpoint_vlsn + 1, matchpoint_lsn)
    return start_lsn, _log_end(inner, matchpoint_vlsn, start_lsn)


def _log_start(inner: "Environment", tail: list[LogEntry], matchpoint_vlsn: int, matchpoint_lsn: LSN,
               txn_ids: tuple[int, ...]) -> LSN:
    start_lsn = inner.log_entry(ROLLBACK_START, {"matchpoint_vlsn": matchpoint_vlsn,
                                                 "matchpoint_lsn": matchpoint_lsn, "last_vlsn": tail[0].vlsn,
                                                 "txn_ids": [{"txn_id": t} for t in txn_ids]})
    inner.log.sync(start_lsn)
    return start_lsn


def _log_end(inner: "Environment", matchpoint_vlsn: int, start_lsn: LSN) -> LSN:
    end_lsn = inner.log_entry(ROLLBACK_END, {"matchpoint_vlsn": matchpoint_vlsn, "rollback_start_lsn": start_lsn})
    inner.log.sync(end_lsn)
    return end_lsn


def redo_marks_and_undo(inner: "Environment", pending: PendingRollback) -> None:
    """At open, before recovery's checkpoint: mark what a crash left visible, undo the recovered tree."""
    tail = tail_after(inner, pending.matchpoint_vlsn, pending.matchpoint_lsn, pending.start_lsn, invisible_too=True)
    inner.log.set_invisible([e.lsn for e in tail if not e.header.invisible])
    pending.undone = _undo(inner, tail)
    pending.marked = [(e.vlsn, e.lsn, e.type_name) for e in tail]


def _rewritten_keys(inner: "Environment", start_lsn: LSN) -> frozenset[tuple[int, bytes]]:
    """The (database id, key) pairs of the records recovery redid after ``start_lsn``: visible LNs written
    without a transaction or by one whose visible Commit follows, and the mapping tree's records of the
    databases created since."""
    committed: set[int] = set()
    written: list[tuple[int | None, int, bytes]] = []
    for entry in inner.log.scan(start_lsn):
        if entry.header.invisible or entry.vlsn is None:
            continue
        if entry.type_name == "Commit":
            committed.add(entry.txn_id)
        elif entry.type_name in USER_LN_TYPES:
            written.append((entry.txn_id, entry.values["db_id"], entry.values["key"]))
        elif entry.type_name == "MapLN":  # a database created (again) by the new master
            written.append((None, MAPPING_DB_ID, entry.values["name"].encode("utf-8")))
    return frozenset((db_id, key) for txn_id, db_id, key in written if txn_id is None or txn_id in committed)


def undo_again(inner: "Environment", rollback: PendingRollback) -> int:
    """At open, before recovery's checkpoint: undo a finished rollback again on the recovered tree (see the
    module documentation); how many slots changed."""
    tail = tail_after(inner, rollback.matchpoint_vlsn, rollback.matchpoint_lsn, rollback.start_lsn,
                      invisible_too=True)
    rollback.undone = _undo(inner, tail, _rewritten_keys(inner, rollback.start_lsn))
    if rollback.undone:
        inner.trace.emit("the rollback to matchpoint VLSN %d (RollbackStart %s) undone again at open: %d records",
                         rollback.matchpoint_vlsn, rollback.start_lsn, rollback.undone)
    return rollback.undone


def finish_pending(inner: "Environment", index: "VLSNIndex", pending: PendingRollback) -> RollbackResult:
    """At open, in recovery's checkpoint step 6 (after the index is merged): truncate it, log RollbackEnd."""
    index.truncate_from_tail_in_rollback(pending.matchpoint_vlsn + 1, pending.matchpoint_lsn)
    end_lsn = _log_end(inner, pending.matchpoint_vlsn, pending.start_lsn)
    result = RollbackResult(pending.matchpoint_vlsn, pending.matchpoint_lsn, pending.start_lsn, end_lsn,
                            tuple(pending.marked), pending.txn_ids, pending.undone, redone=True)
    inner.trace.emit("%s", result.describe())
    return result


__all__ = ["RollbackResult", "PendingRollback", "roll_back", "committed_txns", "crossed_checkpoint",
           "check_hard_recovery", "reopen_replay_txns", "tail_after", "redo_marks_and_undo", "undo_again",
           "finish_pending"]
