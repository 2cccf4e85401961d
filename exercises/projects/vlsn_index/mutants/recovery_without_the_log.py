"""Wrong: recovery loads the flushed buckets and range but forgets what it re-tracked from the log since the
last CkptStart, so the VLSNs logged after the last flush are out of the range, and the next put reuses them."""

from minidb.replication.vlsn import index as reference


class VLSNIndex(reference.VLSNIndex):
    def finish_recovery(self):
        self.begin_recovery()  # a fresh, empty recovery tracker in place of the one recovery filled
        return super().finish_recovery()
