"""Restart, the end: finish what committed transactions left half done, then checkpoint.

Once the losers are rolled back, restart brings back the transactions that
were *prepared* (two-phase commit) and completes what the crash cut short on
behalf of transactions that *committed*:

0. **prepared transactions**: each one analysis found PREPARED is put back
   in the transaction table from its prepare entries
   (:func:`~minidb.pagestore.transactions.prepare.read_prepare`, from its last
   LSN), with the pages and stores it frees at commit, and its locks are
   taken again and the space it freed on pages reserved again
   (:func:`~minidb.pagestore.transactions.prepare.hold_space`), before any
   new transaction can run; ``sm.in_doubt()`` lists them, and only
   ``commit_prepared`` or ``abort_prepared`` ends them;
1. **extent lists**: volume operations of several entries (a new extent
   linked to a store, an extent unlinked and freed) may have been cut after
   any of their entries; :meth:`Volume.repair_extent_lists` frees the
   orphan extents and resets stale ``prev`` links;
2. **freeing space**: each transaction found in FREEING_SPACE committed
   (its ``xct_freeing_space`` is durable) but did not log its ``xct_end``.
   Restart reads the lists in that entry (one per volume with space to
   free, :mod:`minidb.pagestore.transactions.xctmgr`) and frees the space again
   (:func:`minidb.pagestore.transactions.freespace.free_space`, idempotent), then logs
   ``xct_end committed=true``;
3. **stores marked for deletion**: as in Shore, restart also searches the
   store map for stores still marked, and removes them (after undo, only a
   committed transaction can have left a store marked), except those a
   prepared transaction marked: they go if it commits.

Steps 1 and 3 run on every mounted volume, step 2 on the volume each entry
names (:mod:`minidb.pagestore.mounts`).

Then it writes every dirty page (Shore forces the pages "after restart")
and takes a checkpoint, whose dirty page table is empty: the next restart
starts from here and has nothing older to redo.

Each step is idempotent, so a crash anywhere in it is followed by a
restart that does it again and reaches the same state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from minidb.pagestore.restart.results import AnalysisResult
from minidb.pagestore.transactions.freespace import free_space
from minidb.pagestore.transactions.prepare import hold_space, read_prepare
from minidb.pagestore.transactions.xct import XctState
from minidb.stats import Trace


@dataclass
class FinishResult:
    repairs: list[str] = field(default_factory=list)
    finished: dict[int, list[str]] = field(default_factory=dict)  # tid -> what freeing space did
    removed_stores: list[str] = field(default_factory=list)
    prepared: list[int] = field(default_factory=list)  # tids brought back PREPARED (in doubt)

    def summary(self) -> str:
        xcts = ", ".join(f"T{t}" for t in sorted(self.finished)) or "none"
        prepared = ", ".join(f"T{t}" for t in self.prepared)
        prepared = f"prepared transactions in doubt: {prepared}; " if prepared else ""
        return (f"finish: {prepared}{len(self.repairs)} extent-list repairs; "
                f"transactions finished in freeing space: {xcts}; "
                f"{len(self.removed_stores)} stores still marked for deletion removed")


def freeing_space_entry(log: Any, last_lsn: Any) -> Any:
    """The (first) ``xct_freeing_space`` entry of a transaction, walking its chain back from ``last_lsn``."""
    entries = freeing_space_entries(log, last_lsn)
    return entries[0] if entries else None


def freeing_space_entries(log: Any, last_lsn: Any) -> list[Any]:
    """The ``xct_freeing_space`` entries of a transaction (one per volume, logged one after the other), in
    log order, walking its chain back from ``last_lsn``."""
    found: list[Any] = []
    lsn = last_lsn
    while not lsn.is_null:
        entry = log.read(lsn)
        if entry.type_name == "xct_freeing_space":
            found.append(entry)
        elif found:
            break
        lsn = entry.values["txn_prev_lsn"]
    return found[::-1]


def finish_pass(volume: Any, xcts: Any, result: AnalysisResult, trace: Trace | None = None) -> FinishResult:
    trace = trace if trace is not None else Trace(enabled=False)
    done = FinishResult()
    kept_stores = set()
    for row in result.prepared:
        info = read_prepare(volume.log, row.last_lsn)
        xct = xcts.restore_prepared(row.tid, row.last_lsn, row.undo_nxt, info)
        done.prepared.append(row.tid)
        kept_stores.update(info.stores)
        trace.emit("finish: T%d is PREPARED (gtid %r, prepared at %s): back in doubt with %d locks, "
                   "%d freed slots or bytes reserved again", row.tid, info.gtid, info.lsn, len(info.locks),
                   hold_space(volume, xct))
    done.repairs = [line for each in volume.mounted() for line in each.repair_extent_lists()]
    for line in done.repairs:
        trace.emit("finish: repaired %s", line)
    for row in result.freeing:
        xct = xcts.adopt(row.tid, XctState.FREEING_SPACE, row.last_lsn, row.undo_nxt, row.first_lsn)
        done.finished[row.tid] = []
        for entry in freeing_space_entries(volume.log, row.last_lsn):
            stores = [item["snum"] for item in entry.values["stores"]]
            exts = [(item["snum"], item["ext"]) for item in entry.values["exts"]]
            trace.emit("finish: T%d is FREEING_SPACE (committed at %s): stores %s, extents %s", row.tid,
                       entry.lsn, stores, [e for _, e in exts])
            done.finished[row.tid] += free_space(volume.of(entry.values["vol"]), xct, stores, exts)
        for line in done.finished[row.tid]:
            trace.emit("finish: T%d %s", row.tid, line)
        end = xcts.end_after_restart(xct, committed=True)
        trace.emit("finish: T%d committed, xct_end at %s", row.tid, end)
    for stid in [stid for each in volume.mounted() for stid in each.stores_marked_for_deletion()]:
        if stid.store in kept_stores and stid.vol == volume.vid:
            trace.emit("finish: %s is marked for deletion by a prepared transaction: kept", stid)
            continue
        exts = volume.of(stid.vol).remove_store(stid)
        done.removed_stores.append(f"{stid} (extents {exts})")
        trace.emit("finish: %s was still marked for deletion: removed", stid)
    trace.emit("%s", done.summary())
    return done
