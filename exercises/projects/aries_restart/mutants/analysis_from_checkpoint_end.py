"""Wrong: analysis starts reading at the master checkpoint's ``chkpt_end`` instead of its ``chkpt_begin``.
It never reads the checkpoint's tables, nor what was logged while the checkpoint was taken: pages dirty at
the checkpoint are missing from the dirty page table (their committed changes are not redone) and
transactions active then are not losers (their changes stay)."""

from minidb.pagestore.restart import restart as reference
from minidb.pagestore.restart.analysis import rebuild_tables
from minidb.pagestore.restart.results import analysis_result, check_not_erased
from minidb.pagestore.wal.logdef import PAGESTORE_TYPES


class Restart(reference.Restart):
    def analysis(self):
        trace, master = self.traces["analysis"], self.master
        first, count, started = None, 0, master.is_null

        def entries():
            nonlocal first, count, started
            for entry in self.log.scan(None if master.is_null else master):
                kind = entry.entry_type
                if not started:  # pass over the checkpoint itself
                    started = kind is not None and kind.name == "chkpt_end"
                    continue
                count += 1
                first = entry.lsn if first is None else first
                check_not_erased(entry.header.type_code, entry.lsn)
                if kind is not None and kind.owner == PAGESTORE_TYPES.owner:
                    yield entry.lsn, kind, entry.values

        tables = rebuild_tables(entries(), master, trace)
        self.analysis_result = analysis_result(self.log, master, tables, first, count, trace)
        self.xcts.set_youngest(self.analysis_result.youngest)
        return self.analysis_result
