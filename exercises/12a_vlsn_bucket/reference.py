"""Exercise 12a, reference: minidb's own answers (not a second implementation).

The bucket is :class:`minidb.replication.vlsn.bucket.VLSNBucket`: ``put`` stores
stride offsets (with holes when puts come out of order) and refuses them
when the bucket is full; ``get_lte_lsn`` and ``get_gte_lsn`` are what the
tracker and the scanners (:mod:`minidb.replication.vlsn.scanner`) use to start
reading the log.
"""

from __future__ import annotations

from minidb.log import LSN
from minidb.replication.vlsn.bucket import VLSNBucket


def offset_array(first: int, stride: int, max_mappings: int, puts: list[tuple[int, int]]) -> list[int]:
    bucket = VLSNBucket(1, stride, max_mappings, 1 << 32, first)
    for vlsn, offset in puts:
        bucket.put(vlsn, LSN(1, offset))
    return list(bucket.file_offsets)


def _bucket(file_number, first, stride, file_offsets, last, last_lsn) -> VLSNBucket:
    bucket = VLSNBucket(file_number, stride, max(1, len(file_offsets)), 1 << 32, first)
    bucket.file_offsets = list(file_offsets)
    bucket.last, bucket.last_lsn = last, last_lsn
    return bucket


def get_lte_lsn(file_number: int, first: int, stride: int, file_offsets: list[int], last: int, last_lsn: LSN,
                vlsn: int) -> LSN | None:
    return _bucket(file_number, first, stride, file_offsets, last, last_lsn).get_lte_lsn(vlsn)


def get_gte_lsn(file_number: int, first: int, stride: int, file_offsets: list[int], last: int, last_lsn: LSN,
                vlsn: int) -> LSN | None:
    return _bucket(file_number, first, stride, file_offsets, last, last_lsn).get_gte_lsn(vlsn)
