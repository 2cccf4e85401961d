"""VLSNs and the VLSN index: numbering the replicated entries and finding them again.

Reading order: ``allocator`` (a VLSN, its allocation, its key), ``range``
(first, last, last sync, last txn end), ``bucket`` (sparse mappings of one
log file), ``tracker`` (the buckets in memory and the range), ``config``,
``index`` (the index itself: put, lookups, flushing, truncation), ``scanner``
(finding entries by VLSN in the log), ``wait`` (waiting for new VLSNs),
``recovery`` (the tracking pass after a crash and its merge).

Invariants: VLSNs are dense and increase with LSNs; the range's last sync
and last txn end are never past its last; a bucket maps a subset of its
VLSNs and always its first and last; what the index flushed is a prefix of
what the log holds.
"""
