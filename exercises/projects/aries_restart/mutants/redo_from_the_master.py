"""Wrong: redo starts at the master checkpoint instead of the redo LSN (the smallest recovery LSN in the dirty
page table). A page that was dirty at the checkpoint and not written before the crash loses the changes
logged before the checkpoint: committed work is gone after restart."""

import dataclasses

from minidb.pagestore.restart import restart as reference


class Restart(reference.Restart):
    def redo(self):
        found = self.analysis_result
        if not self.master.is_null and not found.redo_lsn.is_null and found.redo_lsn < self.master:
            self.analysis_result = dataclasses.replace(found, redo_lsn=self.master)
        try:
            return super().redo()
        finally:
            self.analysis_result = found
