"""Wrong: undo goes on from a CLR to the CLR's ``txn_prev_lsn`` (the entry logged before it) instead of its
``undo_nxt``. A loser that had rolled back part of its work (a savepoint, an abort under way, an earlier
restart that crashed during undo) has that part undone a second time."""

from minidb.pagestore.restart import restart as reference
from minidb.pagestore.restart.results import UndoResult
from minidb.pagestore.transactions.rollback import undo_step
from minidb.pagestore.transactions.xct import XctState


class Restart(reference.Restart):
    def undo(self):
        space = getattr(self.xcts, "log_space", None)
        if space is not None:
            for row in [*self.analysis_result.losers, *self.analysis_result.prepared]:
                space.reserve_chain(row.tid, row.undo_nxt, self.log.read)
        losers = {row.tid: self.xcts.adopt(row.tid, XctState.ABORTING, row.last_lsn, row.undo_nxt, row.first_lsn)
                  for row in self.analysis_result.losers}
        done = UndoResult(sorted(losers))
        pending = {tid: xct.undo_nxt for tid, xct in losers.items() if not xct.undo_nxt.is_null}
        for xct in losers.values():
            xct.rolling_back = True
        while pending:
            tid = max(pending, key=lambda t: pending[t])
            entry = self.log.read(pending[tid])
            step = undo_step(self.volume, entry, losers[tid])
            done.steps.append((tid, step))
            following = entry.values["txn_prev_lsn"] if step.action == "jumped" else step.next_lsn
            if following.is_null:
                del pending[tid]
            else:
                pending[tid] = following
        for tid, xct in sorted(losers.items()):
            xct.rolling_back = False
            done.ended[tid] = self.xcts.end_after_restart(xct, committed=False)
        self.undo_result = done
        return done
