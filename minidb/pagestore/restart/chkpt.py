"""Fuzzy checkpoints (Shore's ``chkpt_m``).

A checkpoint bounds the work of restart without stopping the world. It
writes no page; it *logs* what restart would otherwise have to find out:

1. ``chkpt_begin``;
2. ``chkpt_bf_tab``: the buffer pool's *dirty page table*, each dirty page
   with its *recovery LSN* (no later than the first entry that dirtied it
   since it was last written; see :mod:`minidb.pagestore.buffer.bufferpool`), in
   entries of at most ``pages_per_entry`` pages;
3. ``chkpt_xct_tab``: the *transaction table*: each transaction that has not
   ended, with its state, last LSN and undo-next, and the youngest tid;
3a. ``chkpt_dev_tab``: the mounted volumes (the *device table*), logged
   only when ``devices`` says more than ``v(1)`` is mounted
   (:mod:`minidb.pagestore.mounts`);
4. ``chkpt_end``, carrying the ``chkpt_begin`` LSN and the smallest
   recovery LSN;
5. once the log is durable up to ``chkpt_end``, the volume is stamped with
   the ``chkpt_begin`` LSN (and fsynced: :mod:`minidb.pagestore.volume.volfile`; every mounted volume),
   then it becomes the **master LSN** (:mod:`minidb.pagestore.restart.master`).

Other transactions keep logging while this happens, so their entries
interleave with the checkpoint's: the checkpoint is *fuzzy*. What makes that
safe is restart's analysis, which starts at ``chkpt_begin`` and reads every
entry after it: an entry logged between ``chkpt_begin`` and the tables
updates what the tables say. Two things must not interleave: two
checkpoints (a mutex serialises them), and the copy of the transaction
table with a transaction's begin or end (both take the table latch), so a
transaction that ended before the copy has its ``xct_end`` before
``chkpt_xct_tab``.

A checkpoint whose ``chkpt_end`` is not durable never became the master: a
crash in the middle of one leaves restart to use the previous one.

Worked example: with pages p(1.3.12) (recovery LSN 0x1/0x200) and
p(1.0.1) (0x1/0x1c0) dirty and T4 active (last LSN 0x1/0x2a0, undo-next
0x1/0x2a0), a checkpoint logs ``chkpt_begin`` at 0x1/0x300, ``chkpt_bf_tab``
with both pages, ``chkpt_xct_tab youngest=4`` with T4, ``chkpt_end
master=0x1/0x300 min_rec_lsn=0x1/0x1c0``, syncs, and writes master 0x1/0x300.
Restart will analyse from 0x1/0x300 and redo from 0x1/0x1c0.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from minidb.log.lsn import LSN, NULL_LSN
from minidb.pagestore.restart.master import write_master
from minidb.pagestore.wal.logdef import CHKPT_BEGIN, CHKPT_BF_TAB, CHKPT_DEV_TAB, CHKPT_END, CHKPT_XCT_TAB
from minidb.stats import Stats, Trace

PAGES_PER_ENTRY = 64


@dataclass(frozen=True)
class CheckpointResult:
    begin: LSN
    end: LSN
    dirty_pages: int
    transactions: int
    min_rec_lsn: LSN

    def summary(self) -> str:
        return (f"checkpoint {self.begin}..{self.end}: {self.dirty_pages} dirty pages, {self.transactions} "
                f"transactions, min recovery LSN {self.min_rec_lsn}")


class Checkpointer:
    """Takes checkpoints of one volume, its buffer pool and its transactions (see the module documentation)."""

    def __init__(self, disk: Any, log: Any, bufferpool: Any, xcts: Any, pages_per_entry: int = PAGES_PER_ENTRY,
                 trace: bool = True, stamp: Callable[[LSN], None] | None = None,
                 devices: Callable[[], list[int] | None] | None = None):
        self.disk = disk
        self.stamp = stamp  # the volume's checkpoint stamp, written before the master
        self.devices = devices  # the mounted volumes, None while v(1) alone is (then no chkpt_dev_tab)
        self.log = log
        self.bp = bufferpool
        self.xcts = xcts
        self.pages_per_entry = pages_per_entry
        self.stats = Stats("chkpt", ["nCheckpoints", "nDirtyPagesLogged", "nXctsLogged"])
        self.trace = Trace(enabled=trace)
        self.last: CheckpointResult | None = None
        self.serial = threading.Lock()  # one checkpoint at a time; a volume mounts or dismounts between two

    def take(self) -> CheckpointResult:
        with self.serial:
            begin = self.log.append(CHKPT_BEGIN, {})
            self.trace.emit("chkpt_begin at %s", begin)
            table = sorted(self.bp.dirty_page_table().items(), key=lambda item: item[0].key)
            for i in range(0, len(table), self.pages_per_entry):
                chunk = table[i:i + self.pages_per_entry]
                lsn = self.log.append(CHKPT_BF_TAB, {"pages": [
                    {"vol": pid.vol, "store": pid.store, "page": pid.page, "rec_lsn": rec} for pid, rec in chunk]})
                self.trace.emit("chkpt_bf_tab at %s: %s", lsn,
                                ", ".join(f"{pid} rec_lsn={rec}" for pid, rec in chunk))
            with self.xcts.table_latch:
                xcts = self.xcts.active()
                youngest = self.xcts.youngest
                lsn = self.log.append(CHKPT_XCT_TAB, {"youngest": youngest, "xcts": [
                    {"tid": x.txn_id, "state": int(x.state), "last_lsn": x.last_lsn, "undo_nxt": x.undo_nxt}
                    for x in xcts]})
            self.trace.emit("chkpt_xct_tab at %s: youngest T%d; %s", lsn, youngest,
                            ", ".join(f"T{x.txn_id} {x.state.name} last={x.last_lsn} undo_nxt={x.undo_nxt}"
                                      for x in xcts) or "no transactions")
            # -- the device table (step 3a) --
            vols = self.devices() if self.devices is not None else None
            if vols is not None:
                lsn = self.log.append(CHKPT_DEV_TAB, {"vols": [{"vol": vid} for vid in vols]})
                self.trace.emit("chkpt_dev_tab at %s: %s", lsn, ", ".join(f"v({vid})" for vid in vols))
            # -- end of the device table --
            min_rec = min((rec for _, rec in table), default=NULL_LSN)
            end = self.log.append(CHKPT_END, {"master": begin, "min_rec_lsn": min_rec})
            self.log.sync(end)
            if self.stamp is not None:
                self.stamp(begin)
            write_master(self.disk, begin, end)
            self.trace.emit("chkpt_end at %s; master LSN is now %s", end, begin)
            self.stats.add("nCheckpoints")
            self.stats.add("nDirtyPagesLogged", len(table))
            self.stats.add("nXctsLogged", len(xcts))
            self.last = CheckpointResult(begin, end, len(table), len(xcts), min_rec)
            return self.last
