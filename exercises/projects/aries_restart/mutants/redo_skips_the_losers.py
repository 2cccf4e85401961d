"""Wrong: redo repeats only the history of transactions that did not lose (it passes over the entries of
losers, thinking undo will take them away anyway). Undo then rolls back changes the pages never got back:
it frees what is not there, restores bytes over the wrong record, and a later restart sees page LSNs that
say a change is in a page when it is not."""

from minidb.pagestore.buffer.latch import EX
from minidb.pagestore.ids import PageId
from minidb.pagestore.restart import restart as reference
from minidb.pagestore.restart.repair import fix_or_repair, read_other_pages
from minidb.pagestore.restart.results import RedoResult
from minidb.pagestore.wal.logdef import PAGESTORE_TYPES
from minidb.pagestore.wal.logrec import REDO


class Restart(reference.Restart):
    def redo(self):
        self.mount_devices()
        result, trace = self.analysis_result, self.traces["redo"]
        losers = {row.tid for row in result.losers}
        done, seen = RedoResult(result.redo_lsn), set()
        for entry in self.log.scan(result.redo_lsn) if not result.redo_lsn.is_null else ():
            done.entries_read += 1
            kind, v = entry.entry_type, entry.values
            if kind is None or not kind.redoable or kind.owner != PAGESTORE_TYPES.owner:
                continue
            known = result.dirty_pages.get((v["vol"], v["page"]))
            if known is None or entry.lsn < known.rec_lsn or v.get("txn_id") in losers:
                done.skipped_not_dirty += 1
                done.decisions.append((entry.lsn, "skipped"))
                continue
            pid = PageId(v["vol"], v["store"], v["page"])
            page = fix_or_repair(self.log, self.volume, pid, result.dirty_pages, done, trace, mode=EX)
            seen.add(pid.key)
            apply = page.lsn < entry.lsn
            if apply:
                REDO[kind.name](page, v)
                page.lsn = entry.lsn
                self.volume.bp.lower_rec_lsn(page, entry.lsn)
                done.redone += 1
            else:
                done.skipped_page_newer += 1
            self.volume.bp.unfix(page, dirty=apply)
            done.decisions.append((entry.lsn, "redone" if apply else "skipped"))
        read_other_pages(self.log, self.volume, result.dirty_pages, done, seen, trace)
        self.redo_result = done
        return done
