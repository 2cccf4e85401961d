"""Wrong: the cleaner marks the pages it wrote clean without fsyncing their volume. They leave the dirty page
table while their writes may still be lost; a checkpoint then moves the redo LSN past changes that a crash
takes off the disk."""

from minidb.pagestore.buffer import bufferpool as reference


class BufferPool(reference.BufferPool):
    def _sync_volumes(self, vids):
        for vid in sorted(set(vids)):
            for key in [k for k in self._unsynced if k[0] == vid]:
                del self._unsynced[key]  # forgotten, but never made durable
