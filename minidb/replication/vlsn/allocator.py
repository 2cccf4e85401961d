"""VLSNs: the numbers of the replication stream, how they are allocated, and how they sort as keys.

A VLSN (virtual LSN) identifies a log entry shared between the members of a
replication group. A log is addressed by LSNs, which differ from node to
node; the replication stream is addressed by VLSNs, which are the same on
every node. Rules (JE `VLSNIndex`, "Generating new VLSNs"):

- the first valid VLSN is 1 (:data:`FIRST_VLSN`); :data:`NULL_VLSN` (0 here,
  -1 in JE) means "none", for example the ends of an empty range;
- VLSNs ascend, over time and across recoveries, and the stream has no gaps:
  VLSN n+1 is logged after VLSN n.

**Allocation.** :class:`VLSNAllocator` is JE's ``VLSNIndex.bump()``: the log
manager calls it (``log.vlsn_allocator``) *under the log write latch*, only
once the entry is sure to be appended, so VLSN order is log order and no
number is lost. The counter is not a record of its own: it is persisted by
the VLSN index's range, whose ``last`` is flushed at every checkpoint, and
recovery re-tracks every VLSN after the checkpoint's start, so after a
restart the counter continues at the last VLSN in the log, plus one.
Example: VLSNs 1..77 logged, checkpoint (range 1..77 flushed), VLSNs 78 and
79 logged, crash; recovery merges the flushed range 1..77 with the re-tracked
78..79 and the next entry gets VLSN 80. Truncating the index from the tail
(the syncup rollback's step,
``VLSNIndex.truncate_from_tail_in_rollback``) sets the counter back, so the next entry reuses the first
VLSN cut off (the JE documentation's "restart at VLSN 2").

**Keys.** The VLSN index is stored in an internal database whose keys are
signed 64-bit numbers: a bucket's first VLSN, and -1 for the range
(:data:`RANGE_KEY_VLSN`). The log store compares keys as bytes, so
:func:`encode_key` writes them big-endian with the sign bit flipped, which
keeps numeric order::

    value                  two's complement          key bytes (sign bit flipped)
    -1  (the range)        ff ff ff ff ff ff ff ff   7f ff ff ff ff ff ff ff
     1                     00 00 00 00 00 00 00 01   80 00 00 00 00 00 00 01
     78                    00 00 00 00 00 00 00 4e   80 00 00 00 00 00 00 4e

so the range sorts before every bucket, and buckets sort by first VLSN.
"""

from __future__ import annotations

import struct
import threading

NULL_VLSN = 0
FIRST_VLSN = 1
RANGE_KEY_VLSN = -1

_KEY = struct.Struct(">Q")
_SIGN = 1 << 63
KEY_SIZE = _KEY.size


def encode_key(value: int) -> bytes:
    """A signed 64-bit number as 8 bytes that sort like the number (big-endian, sign bit flipped)."""
    if not -_SIGN <= value < _SIGN:
        raise ValueError(f"{value} does not fit in a signed 64-bit key")
    return _KEY.pack((value + _SIGN) & ((1 << 64) - 1))


def decode_key(data: bytes) -> int:
    """The inverse of :func:`encode_key`."""
    if len(data) != KEY_SIZE:
        raise ValueError(f"a VLSN index key has {KEY_SIZE} bytes, not {len(data)}")
    (raw,) = _KEY.unpack(data)
    return raw - _SIGN


RANGE_KEY = encode_key(RANGE_KEY_VLSN)


class VLSNAllocator:
    """Hands out VLSNs in order (JE's ``VLSNIndex.bump``); called under the log write latch.

    ``last`` is the last VLSN handed out. It starts at the recovered range's
    last VLSN and is set back by a syncup rollback (:meth:`reset`).
    """

    def __init__(self, last: int = NULL_VLSN):
        if last < NULL_VLSN:
            raise ValueError(f"the last VLSN cannot be {last}")
        self._last = last
        self._lock = threading.Lock()  # the log write latch already serializes; this guards direct callers

    @property
    def last(self) -> int:
        return self._last

    def bump(self) -> int:
        """The next VLSN."""
        with self._lock:
            self._last += 1
            return self._last

    __call__ = bump

    def reset(self, last: int) -> None:
        """Continue after ``last`` (recovery, or a rollback of the stream's tail)."""
        if last < NULL_VLSN:
            raise ValueError(f"the last VLSN cannot be {last}")
        with self._lock:
            self._last = last

    def __repr__(self) -> str:
        return f"VLSNAllocator(last={self._last})"


__all__ = ["NULL_VLSN", "FIRST_VLSN", "RANGE_KEY_VLSN", "RANGE_KEY", "KEY_SIZE", "encode_key", "decode_key",
           "VLSNAllocator"]
