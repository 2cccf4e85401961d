"""Wrong: a put registers a Matchpoint as if it were an ordinary record, so the range's last sync-able VLSN
stays at the last commit or abort, and syncup would look for a matchpoint too far back."""

from minidb.replication.vlsn import index as reference


class VLSNIndex(reference.VLSNIndex):
    def put(self, vlsn, lsn, type_name, entry=None):
        super().put(vlsn, lsn, "LN" if type_name == "Matchpoint" else type_name, entry)
