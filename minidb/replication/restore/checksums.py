"""The CRC-32 of each log file a network restore sends, cached (JE's ``LogFileFeeder`` response cache).

A member computes a file's checksum once and extends it as the file grows
(only the bytes after the cached prefix are read). Bytes that change in place
make a cached checksum wrong, so it is dropped first: the data eraser drops a
file's before it erases the file (the environment's ``before_file_erased``
hooks), a syncup rollback's INVISIBLE marks drop them all (``generation``),
and so does a hard recovery.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

from minidb.io import Disk
from minidb.log.files import file_name


class FileChecksums:
    """Per-file CRC-32s of a node's log files (JE's ``LogFileFeeder`` response cache).

    ``generation()`` counts the in-place changes the cache cannot see coming
    (the replicated environment passes its VLSN index's tail truncations: a
    syncup rollback marks entries INVISIBLE in place, in any file after the
    matchpoint); when it moved, every cached checksum is dropped."""

    def __init__(self, disk: Disk, generation: Callable[[], int] = lambda: 0):
        self.disk = disk
        self.generation = generation
        self._seen = generation()
        self._cache: dict[int, tuple[int, int]] = {}  # file number -> (length summed, CRC-32 of those bytes)
        self.bytes_read = 0  # bytes read to compute checksums (a cached prefix is not read again)

    def checksum(self, number: int, length: int) -> int:
        """The CRC-32 of file ``number``'s first ``length`` bytes."""
        if self.generation() != self._seen:
            self._cache, self._seen = {}, self.generation()
        start, crc = self._cache.get(number, (0, 0))
        if start > length:
            start, crc = 0, 0
        if start < length:
            with self.disk.open(file_name(number)) as f:
                data = f.read(start, length - start)
            self.bytes_read += len(data)
            crc = zlib.crc32(data, crc)
        self._cache[number] = (length, crc)
        return crc

    def clear(self, number: int) -> bool:
        """Drop file ``number``'s cached checksum (its bytes are about to change); whether one was cached."""
        return self._cache.pop(number, None) is not None

    def clear_all(self) -> None:
        """Drop every cached checksum (the log was recovered again: hard recovery)."""
        self._cache, self._seen = {}, self.generation()

    def cached(self) -> dict[int, int]:
        """File number -> the length its cached checksum covers."""
        return {n: length for n, (length, _) in self._cache.items()}


__all__ = ["FileChecksums"]
