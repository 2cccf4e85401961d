"""Restart, pass 1: analysis. From the master checkpoint to the end of the log, rebuild two tables.

Analysis reads the log forward from the *master LSN* (the ``chkpt_begin`` of
the last completed checkpoint, :mod:`minidb.pagestore.restart.master`), or from the
log's first entry if no checkpoint ever completed. It logs nothing and
changes no page. It rebuilds:

- the **transaction table**: every transaction that has not ended, with its
  state (ACTIVE, ABORTING, FREEING_SPACE), last LSN and undo-next. The
  checkpoint's ``chkpt_xct_tab`` gives the transactions of that moment;
  every transactional entry after ``chkpt_begin`` adds its transaction or
  advances it (last LSN; undo-next to an undoable entry, or to a CLR's
  ``undo_nxt``); ``xct_prepare_fi`` (the prepare point), ``xct_abort`` and
  ``xct_freeing_space`` change its state; ``xct_end`` removes it;
- the **dirty page table**: pages that may be newer in the log than on
  disk, each with a *recovery LSN*. The checkpoint's ``chkpt_bf_tab`` gives
  the pool's dirty pages then; every redoable entry after ``chkpt_begin``
  adds its page, if absent, with the entry's LSN.

A checkpoint's tables are merged with what the scan already found (the
checkpoint is fuzzy, entries interleave with it): the smaller recovery LSN
wins, and a transaction's later LSNs win over the snapshot's, as does the
state further along (:data:`~minidb.pagestore.transactions.xct.PROGRESS`).

The page store has no data eraser, so an erased entry (type 0xff) in its log,
however well formed, is corruption: analysis names its file and offset and
skips nothing.

The decisions are one pure function, :func:`rebuild_tables`, over the
page-store entries ``(lsn, type, values)``; ``analysis_pass`` only reads the
log and feeds it (exercise 08b asks for the same function).

The **device table**: the volumes mounted at the end of the log, which
restart mounts before redo (:mod:`minidb.pagestore.mounts`). The master
checkpoint's ``chkpt_dev_tab`` gives those of that moment (a checkpoint
without one had ``v(1)`` alone); each ``mount_vol`` after it adds its volume
and each ``dismount_vol`` takes its volume out, and its pages out of the
dirty page table: a volume is dismounted only once its pages are written and
no active transaction changed it, so nothing of it is left to redo or undo.

The **redo LSN** is the smallest recovery LSN in the dirty page table:
where redo starts. Transactions left ACTIVE or ABORTING are the *losers*
that undo rolls back; those in FREEING_SPACE committed and are finished;
PREPARED ones are neither: restart brings them back prepared (two-phase
commit, :mod:`minidb.pagestore.transactions.prepare`).

Worked example: master 0x1/0x500; ``chkpt_bf_tab`` has p(1.3.12) at
0x1/0x3a0; ``chkpt_xct_tab`` has T2 ACTIVE (last 0x1/0x4c0). After the
checkpoint T2 logs ``rec_insert`` on p(1.3.13) at 0x1/0x600 and T3 logs
``xct_end`` at 0x1/0x650. Analysis ends with T2 ACTIVE (last = undo-next =
0x1/0x600), the dirty pages p(1.3.12) 0x1/0x3a0 and p(1.3.13) 0x1/0x600,
and the redo LSN 0x1/0x3a0.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from minidb import impl
from minidb.log.lsn import LSN, NULL_LSN
from minidb.log.types import EntryType
from minidb.pagestore.ids import PageId
from minidb.pagestore.restart.results import (  # the records analysis fills (re-exported for its readers)
    AnalysisResult,
    AnalysisTables,
    DirtyPage,
    XctEntry,
    analysis_result,
    check_not_erased,
)
from minidb.pagestore.transactions.xct import PROGRESS, XctState
from minidb.pagestore.wal.logdef import PAGESTORE_TYPES
from minidb.stats import Trace

__all__ = ["analysis_pass", "rebuild_tables", "ANALYSIS_PASS", "AnalysisResult", "AnalysisTables", "DirtyPage",
           "XctEntry", "analysis_result", "check_not_erased"]


def analysis_pass(log: Any, master: LSN, trace: Trace | None = None) -> AnalysisResult:
    """Pass 1 (see the module documentation): scan the log from ``master`` (its beginning if NULL) and feed
    the page store's entries to :func:`rebuild_tables`."""
    trace = trace if trace is not None else Trace(enabled=False)
    if master.is_null:
        trace.emit("analysis: no checkpoint completed: scanning the whole log")
    else:
        trace.emit("analysis: master LSN %s: scanning from there", master)
    first, count = None, 0  # the first entry read, how many were

    def entries() -> Iterator[tuple[LSN, EntryType, dict[str, Any]]]:
        nonlocal first, count
        for entry in log.scan(None if master.is_null else master):
            count += 1
            if first is None:
                first = entry.lsn
            check_not_erased(entry.header.type_code, entry.lsn)
            entry_type = entry.entry_type
            if entry_type is not None and entry_type.owner == PAGESTORE_TYPES.owner:
                yield entry.lsn, entry_type, entry.values

    tables = rebuild_tables(entries(), master, trace)  # the one call site of the analysis decisions
    return analysis_result(log, master, tables, first, count, trace)


def rebuild_tables(entries: Iterable[tuple[LSN, EntryType, dict[str, Any]]], master: LSN,
                   trace: Trace | None = None) -> AnalysisTables:
    """Analysis' decisions, on the page-store entries ``(lsn, type, values)`` read from ``master`` on, in order.

    Pure: it reads only what it is given. The master checkpoint's
    ``chkpt_bf_tab`` and ``chkpt_xct_tab`` (those after the ``chkpt_begin``
    at ``master``) are merged where they appear; every transactional entry
    enters or advances its transaction, every redoable one its page; the
    redo LSN is the smallest recovery LSN (NULL_LSN: nothing to redo).
    """
    trace = trace if trace is not None else Trace(enabled=False)
    table: dict[int, XctEntry] = {}
    dirty: dict[tuple[int, int], DirtyPage] = {}
    ended: set[int] = set()
    youngest = 0
    devices = {1}  # the volumes mounted (a checkpoint without chkpt_dev_tab had v(1) alone)
    in_master_ckpt = False
    for lsn, entry_type, v in entries:
        name = entry_type.name
        if not entry_type.transactional:  # the checkpoint's entries (they belong to no transaction)
            if name == "chkpt_begin" and lsn == master:
                in_master_ckpt = True
            elif name == "chkpt_bf_tab" and in_master_ckpt:
                for item in v["pages"]:
                    pid = PageId(item["vol"], item["store"], item["page"])
                    known = dirty.get(pid.key)
                    if known is None or item["rec_lsn"] < known.rec_lsn:
                        dirty[pid.key] = DirtyPage(pid, item["rec_lsn"])
                trace.emit("analysis: %s chkpt_bf_tab: %d dirty pages from the checkpoint", lsn, len(v["pages"]))
            elif name == "chkpt_xct_tab" and in_master_ckpt:
                youngest = max(youngest, v["youngest"])
                for item in v["xcts"]:
                    _merge_checkpointed(table, ended, item)
                trace.emit("analysis: %s chkpt_xct_tab: youngest T%d, %s", lsn, v["youngest"],
                           ", ".join(f"T{i['tid']} {XctState(i['state']).name}" for i in v["xcts"])
                           or "no transactions")
            elif name == "chkpt_end" and in_master_ckpt:
                in_master_ckpt = False
            elif name in _DEVICE_CHANGES:
                devices = _change_devices(devices, dirty, name, v, trace, lsn, in_master_ckpt)
        elif tid := v["txn_id"]:
            if tid > youngest:
                youngest = tid
            row = table.get(tid)
            if row is None:
                row = table[tid] = XctEntry(tid, first_lsn=lsn)
                trace.emit("analysis: %s %s: T%d enters the transaction table", lsn, name, tid)
            row.last_lsn = lsn
            if entry_type.compensation:
                row.undo_nxt, row.undo_nxt_seen = v["undo_nxt"], True
            elif entry_type.undoable:
                row.undo_nxt, row.undo_nxt_seen = lsn, True
            if name not in _STATE_CHANGES:
                pass  # an ordinary entry: its transaction only advanced
            elif name == "xct_end":
                del table[tid]
                ended.add(tid)
                trace.emit("analysis: %s xct_end: T%d ended (%s)", lsn, tid,
                           "committed" if v["committed"] else "aborted")
            elif name == "xct_prepare_fi":
                row.state = XctState.PREPARED
                trace.emit("analysis: %s xct_prepare_fi: T%d is PREPARED", lsn, tid)
            elif name == "xct_abort":
                row.state = XctState.ABORTING
                trace.emit("analysis: %s xct_abort: T%d is ABORTING", lsn, tid)
            elif name == "xct_freeing_space":
                row.state, row.undo_nxt, row.undo_nxt_seen = XctState.FREEING_SPACE, NULL_LSN, True
                trace.emit("analysis: %s xct_freeing_space: T%d committed, FREEING_SPACE", lsn, tid)
        if entry_type.redoable and (v["vol"], v["page"]) not in dirty:  # a page's first entry since the checkpoint
            pid = PageId(v["vol"], v["store"], v["page"])
            dirty[pid.key] = DirtyPage(pid, lsn)
            trace.emit("analysis: %s %s: %s enters the dirty page table", lsn, name, pid)
    redo_lsn = min((d.rec_lsn for d in dirty.values()), default=NULL_LSN)
    return AnalysisTables(table, dirty, redo_lsn, youngest, ended, sorted(devices))


#: the entries that change the device table (the mounted volumes)
_DEVICE_CHANGES = frozenset({"chkpt_dev_tab", "mount_vol", "dismount_vol"})


def _change_devices(devices: set[int], dirty: dict[tuple[int, int], DirtyPage], name: str, v: dict[str, Any],
                    trace: Trace, lsn: LSN, in_master_ckpt: bool) -> set[int]:
    """The device table after one of :data:`_DEVICE_CHANGES` (a dismount also takes the volume's pages
    out of the dirty page table: they were written before it was logged)."""
    if name == "chkpt_dev_tab":
        if not in_master_ckpt:
            return devices
        devices = {item["vol"] for item in v["vols"]}
        trace.emit("analysis: %s chkpt_dev_tab: volumes %s mounted", lsn, ", ".join(f"v({n})" for n in sorted(devices)))
    elif name == "mount_vol":
        devices = devices | {v["vol"]}
        trace.emit("analysis: %s mount_vol: v(%d) mounted", lsn, v["vol"])
    else:
        devices = devices - {v["vol"]}
        for key in [key for key in dirty if key[0] == v["vol"]]:
            del dirty[key]
        trace.emit("analysis: %s dismount_vol: v(%d) dismounted, its pages written", lsn, v["vol"])
    return devices


#: the entries that end a transaction or change its state (any other only advances it)
_STATE_CHANGES = frozenset({"xct_end", "xct_prepare_fi", "xct_abort", "xct_freeing_space"})


def _merge_checkpointed(table: dict[int, XctEntry], ended: set[int], item: dict[str, Any]) -> None:
    """Merge one ``chkpt_xct_tab`` row into the table the scan is building."""
    tid = item["tid"]
    if tid in ended:
        return
    state = XctState(item["state"])
    row = table.get(tid)
    if row is None:
        table[tid] = XctEntry(tid, state, item["last_lsn"], item["undo_nxt"])
        return
    # The scan saw entries of tid after chkpt_begin: its last LSN is newer; keep the
    # state that is further along, and the checkpoint's undo-next if the scan saw none.
    if PROGRESS.index(state) > PROGRESS.index(row.state):
        row.state = state
    if row.last_lsn.is_null or (not item["last_lsn"].is_null and item["last_lsn"] > row.last_lsn):
        row.last_lsn = item["last_lsn"]
    if not row.undo_nxt_seen:
        row.undo_nxt = item["undo_nxt"]


#: pass 1, as restart runs it
ANALYSIS_PASS = impl.hot_spot(analysis_pass)
