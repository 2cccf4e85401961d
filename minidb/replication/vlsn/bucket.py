"""VLSN buckets (JE's ``VLSNBucket``): sparse VLSN->LSN mappings for one log file.

A bucket represents a set of VLSN->LSN mappings, all in a single log file
(a file may be covered by several buckets). As a trade-off of space against
time it keeps only a sparse set: the caller scans the log from the nearest
mapping to find the entries in between. It does not even store the VLSNs or
the file number per mapping: only the *offset* part of each LSN, for the
VLSNs ``first + i * stride``, in the array ``file_offsets`` (0 marks a hole:
offset 0 of a file is its FileHeader, never a replicated entry). It also
keeps its last mapping whole (``last``, ``last_lsn``), even when ``last`` is
not on a stride, so that every bucket can give a mapping at or below and at
or above each VLSN it owns, for forward and backward scans.

The JE documentation's example (002). Mappings::

    VLSN  9    10    11    12    13    14    15
    LSN   10/100 10/110 10/120 10/130 10/140 11/100 11/120

With stride 4, the bucket for file 10 keeps 9 -> 10/100 and 13 -> 10/140 as
``file_offsets = [100, 140]`` (first 9, last 13); VLSN 14 is in file 11, so
the bucket refuses it and a second bucket starts there: first 14, offsets
``[100]``, last 15 -> 11/120. A lookup of VLSN 11 gets 9 -> 10/100 at or
below it (``get_lte_lsn``) or 13 -> 10/140 at or above it (``get_gte_lsn``)
and scans the log from there.

Out-of-order puts. Mappings are registered after the log write latch is
released, so they may arrive out of order. Any registered VLSN implies that
all smaller ones exist in the log; a late one is simply not kept unless it
falls on a stride, and out-of-order inserts can leave *holes* in the offset
array or make it shorter than expected. Inserting 9 then 15 keeps
``file_offsets = [100]`` and last 15: VLSN 13 was never seen. With stride 2,
inserting 9 then 15 gives ``[100, 0, 0, 160]``: 11 and 13 are holes. A
lagging VLSN fills its hole if the bucket is still open, but nobody may count
on it: a reader may have used the bucket first, or it may have been flushed.

``put`` refuses (returns False, changes nothing):

- a mapping from another file;
- a mapping on a stride when the offset array already holds ``max_mappings``;
- a tail mapping (beyond ``last``) whose offset is more than ``max_distance``
  bytes past the last stored offset (a scan from there would be too long);
- anything, once the bucket is closed (the tracker closes a bucket when it
  starts the next one).

Defaults (JE's je.rep.vlsn.stride, maxMap, maxDist): stride 10, 1000
mappings, 100000 bytes.

A :class:`GhostBucket` stands in for unknown mappings at the head of the
index after log cleaning (see :mod:`.tracker`).

Byte layout of a bucket in the VLSN index's database (key: ``first``,
see :mod:`.vlsn`)::

    offset size  field            (little-endian, struct "<BB4I3QI")
    ------ ----  ---------------------------------------------------
       0     1   format           1
       1     1   flags            bit 0 CLOSED, bit 1 GHOST
       2     4   file_number
       6     4   stride
      10     4   max_mappings
      14     4   max_distance
      18     8   first            VLSN of file_offsets[0]
      26     8   last             0 for an empty bucket
      34     8   last_lsn         packed LSN (file << 32 | offset)
      42     4   n                entries in file_offsets
      46    4*n  file_offsets     U32 each; 0 = a hole

A ghost bucket has no offsets: its first possible LSN is the start of file
``file_number`` (offset 0) and ``last_lsn`` is its last possible LSN.

Locking: each bucket has its own mutex, the last step of the hierarchy
VLSNIndex -> VLSNTracker -> VLSNBucket; a scanner that already holds the
right bucket takes only that mutex.
"""

from __future__ import annotations

import struct
import threading

from minidb.log import LSN, NULL_LSN
from minidb.replication.errors import VLSNIndexCorruptionError, VLSNIndexError
from minidb.replication.vlsn.allocator import FIRST_VLSN, NULL_VLSN

DEFAULT_STRIDE = 10
DEFAULT_MAX_MAPPINGS = 1000
DEFAULT_MAX_DISTANCE = 100_000
NO_OFFSET = 0

BUCKET_FORMAT = 1
CLOSED = 0x01
GHOST = 0x02
_HEAD = struct.Struct("<BB4I3QI")
_OFFSET = struct.Struct("<I")
HEAD_SIZE = _HEAD.size  # 46


class VLSNBucket:
    """Sparse mappings of one log file (see the module documentation)."""

    def __init__(self, file_number: int, stride: int = DEFAULT_STRIDE, max_mappings: int = DEFAULT_MAX_MAPPINGS,
                 max_distance: int = DEFAULT_MAX_DISTANCE, first_vlsn: int = FIRST_VLSN):
        if stride < 1:
            raise ValueError(f"stride must be at least 1, not {stride}")
        if max_mappings < 1:
            raise ValueError(f"max_mappings must be at least 1, not {max_mappings}")
        if max_distance < 0:
            raise ValueError(f"max_distance cannot be negative ({max_distance})")
        if first_vlsn < FIRST_VLSN:
            raise ValueError(f"a bucket's first VLSN must be at least {FIRST_VLSN}, not {first_vlsn}")
        self.file_number = file_number
        self.stride = stride
        self.max_mappings = max_mappings
        self.max_distance = max_distance
        self.first = first_vlsn
        self.last = NULL_VLSN
        self.last_lsn: LSN = NULL_LSN
        self.file_offsets: list[int] = []
        self.closed = False
        self.dirty = False
        self.changes = 0  # bumped by every change, so a flush knows whether a bucket changed meanwhile
        self.lock = threading.Lock()

    # -- what it holds ----------------------------------------------------------------
    @property
    def is_ghost(self) -> bool:
        return False

    @property
    def is_empty(self) -> bool:
        return self.last == NULL_VLSN

    def owns(self, vlsn: int) -> bool:
        """Does this bucket cover ``vlsn`` (first <= vlsn <= last)?"""
        return not self.is_empty and self.first <= vlsn <= self.last

    def vlsn_at(self, index: int) -> int:
        return self.first + index * self.stride

    def mappings(self) -> list[tuple[int, LSN]]:
        """Every mapping kept, in VLSN order: the stored offsets and the last one."""
        with self.lock:
            return self._mappings()

    def _mappings(self) -> list[tuple[int, LSN]]:
        found = [(self.vlsn_at(i), LSN(self.file_number, off)) for i, off in enumerate(self.file_offsets)
                 if off != NO_OFFSET]
        if not self.is_empty and (not found or found[-1][0] != self.last):
            found.append((self.last, self.last_lsn))
        return found

    def holes(self) -> list[int]:
        """VLSNs on a stride, inside the offset array, with no offset."""
        with self.lock:
            return [self.vlsn_at(i) for i, off in enumerate(self.file_offsets) if off == NO_OFFSET]

    def _last_stored_offset(self) -> int | None:
        for off in reversed(self.file_offsets):
            if off != NO_OFFSET:
                return off
        return None

    # -- adding mappings ------------------------------------------------------------------
    def refusal(self, vlsn: int, lsn: LSN) -> str | None:
        """Why :meth:`put` would refuse this mapping (None: it would accept it)."""
        with self.lock:
            return self._refusal(vlsn, lsn)

    def _refusal(self, vlsn: int, lsn: LSN) -> str | None:
        if self.closed:
            return "the bucket is closed"
        if lsn.file != self.file_number:
            return f"{lsn} is in file 0x{lsn.file:x}, the bucket maps file 0x{self.file_number:x}"
        if vlsn < self.first:
            return f"VLSN {vlsn} is before the bucket's first VLSN {self.first}"
        index, rest = divmod(vlsn - self.first, self.stride)
        if rest == 0 and index >= self.max_mappings:
            return f"VLSN {vlsn} is on a stride and the bucket already holds {self.max_mappings} offsets"
        if vlsn > self.last and not self.is_empty:
            stored = self._last_stored_offset()
            if stored is not None and lsn.offset - stored > self.max_distance:
                return (f"{lsn} is {lsn.offset - stored} bytes past the last stored offset 0x{stored:x} "
                        f"(max distance {self.max_distance})")
        return None

    def put(self, vlsn: int, lsn: LSN) -> bool:
        """Register ``vlsn`` at ``lsn``; False (nothing changed) if it does not belong here."""
        with self.lock:
            if self._refusal(vlsn, lsn) is not None:
                return False
            index, rest = divmod(vlsn - self.first, self.stride)
            changed = False
            if rest == 0:
                if index < len(self.file_offsets):
                    changed = self.file_offsets[index] != lsn.offset
                    self.file_offsets[index] = lsn.offset
                else:
                    self.file_offsets.extend([NO_OFFSET] * (index - len(self.file_offsets)))
                    self.file_offsets.append(lsn.offset)
                    changed = True
            if vlsn > self.last:
                self.last, self.last_lsn = vlsn, lsn
                changed = True
            if changed:
                self.dirty = True
                self.changes += 1
            return True

    def close(self) -> None:
        """No more puts: the tracker has moved on to a newer bucket."""
        with self.lock:
            if not self.closed:
                self.closed = True
                self.dirty = True
                self.changes += 1

    # -- lookups ----------------------------------------------------------------------------
    def get_lsn(self, vlsn: int) -> LSN | None:
        """The exact mapping of ``vlsn`` if the bucket kept it, else None."""
        with self.lock:
            if not self.owns(vlsn):
                return None
            if vlsn == self.last:
                return self.last_lsn
            index, rest = divmod(vlsn - self.first, self.stride)
            if rest == 0 and index < len(self.file_offsets) and self.file_offsets[index] != NO_OFFSET:
                return LSN(self.file_number, self.file_offsets[index])
            return None

    def get_lte_mapping(self, vlsn: int) -> tuple[int, LSN] | None:
        """The nearest kept mapping at or below ``vlsn`` (VLSN and LSN), or None."""
        with self.lock:
            if self.is_empty or vlsn < self.first:
                return None
            if vlsn >= self.last:
                return self.last, self.last_lsn
            index = min((vlsn - self.first) // self.stride, len(self.file_offsets) - 1)
            while index >= 0:
                if self.file_offsets[index] != NO_OFFSET:
                    return self.vlsn_at(index), LSN(self.file_number, self.file_offsets[index])
                index -= 1
            return None

    def get_gte_mapping(self, vlsn: int) -> tuple[int, LSN] | None:
        """The nearest kept mapping at or above ``vlsn`` (the last mapping at worst), or None."""
        with self.lock:
            if self.is_empty or vlsn > self.last:
                return None
            index = max(0, -(-(vlsn - self.first) // self.stride))
            while index < len(self.file_offsets):
                if self.file_offsets[index] != NO_OFFSET and self.vlsn_at(index) <= self.last:
                    return self.vlsn_at(index), LSN(self.file_number, self.file_offsets[index])
                index += 1
            return self.last, self.last_lsn

    def get_lte_lsn(self, vlsn: int) -> LSN | None:
        found = self.get_lte_mapping(vlsn)
        return found[1] if found else None

    def get_gte_lsn(self, vlsn: int) -> LSN | None:
        found = self.get_gte_mapping(vlsn)
        return found[1] if found else None

    # -- truncation ---------------------------------------------------------------------------
    def remove_from_tail(self, start_delete: int, prev_lsn: LSN | None = None) -> None:
        """Forget the mappings from ``start_delete`` on (syncup rollback).

        ``prev_lsn`` is the LSN of ``start_delete - 1`` if the caller knows it
        (then it becomes the last mapping, if it is in this file); otherwise
        the highest mapping kept below ``start_delete`` becomes the last one.
        A bucket whose first VLSN is deleted becomes empty.
        """
        prev_lsn = NULL_LSN if prev_lsn is None else prev_lsn
        with self.lock:
            if self.is_empty or start_delete > self.last:
                return
            self.dirty = True
            self.changes += 1
            if start_delete <= self.first:
                self.file_offsets, self.last, self.last_lsn = [], NULL_VLSN, NULL_LSN
                return
            new_last = start_delete - 1
            del self.file_offsets[(new_last - self.first) // self.stride + 1:]
            while self.file_offsets and self.file_offsets[-1] == NO_OFFSET:
                self.file_offsets.pop()
            if not prev_lsn.is_null and prev_lsn.file == self.file_number:
                self.last, self.last_lsn = new_last, prev_lsn
                index, rest = divmod(new_last - self.first, self.stride)
                if rest == 0 and index < len(self.file_offsets):
                    self.file_offsets[index] = prev_lsn.offset
            elif self.file_offsets:
                self.last = self.vlsn_at(len(self.file_offsets) - 1)
                self.last_lsn = LSN(self.file_number, self.file_offsets[-1])
            else:
                self.last, self.last_lsn = NULL_VLSN, NULL_LSN

    # -- bytes ----------------------------------------------------------------------------------
    def encode(self) -> bytes:
        with self.lock:
            flags = (CLOSED if self.closed else 0) | (GHOST if self.is_ghost else 0)
            last_lsn = 0 if self.last_lsn.is_null else self.last_lsn.packed
            head = _HEAD.pack(BUCKET_FORMAT, flags, self.file_number, self.stride, self.max_mappings,
                              self.max_distance, self.first, self.last, last_lsn, len(self.file_offsets))
            return head + b"".join(_OFFSET.pack(off) for off in self.file_offsets)

    def encoded_size(self) -> int:
        return HEAD_SIZE + _OFFSET.size * len(self.file_offsets)

    @staticmethod
    def decode(data: bytes) -> "VLSNBucket":
        """A bucket from its stored bytes (a :class:`GhostBucket` if flagged so)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise VLSNIndexError(f"not a VLSN bucket: {type(data).__name__}, not bytes")
        data = bytes(data)
        if len(data) < HEAD_SIZE or data[0] != BUCKET_FORMAT:
            raise VLSNIndexCorruptionError(f"not a VLSN bucket: {len(data)} bytes, format {data[:1].hex() or 'none'}")
        (_, flags, file_number, stride, max_mappings, max_distance, first, last, last_lsn,
         count) = _HEAD.unpack_from(data, 0)
        if len(data) != HEAD_SIZE + _OFFSET.size * count:
            raise VLSNIndexCorruptionError(f"VLSN bucket {first}: {len(data)} bytes, expected {HEAD_SIZE + 4 * count} "
                                 f"for {count} offsets")
        try:
            if flags & GHOST:
                return GhostBucket(first, LSN(file_number, 0), LSN.unpack(last_lsn), stride, max_mappings,
                                   max_distance)
            bucket = VLSNBucket(file_number, stride, max_mappings, max_distance, first)
        except ValueError as e:
            raise VLSNIndexCorruptionError(f"VLSN bucket {first}: {e}") from None
        bucket.file_offsets = [_OFFSET.unpack_from(data, HEAD_SIZE + 4 * i)[0] for i in range(count)]
        bucket.last = last
        bucket.last_lsn = LSN.unpack(last_lsn) if last != NULL_VLSN else NULL_LSN
        bucket.closed = bool(flags & CLOSED)
        if last != NULL_VLSN and (last < first or bucket.last_lsn.file != file_number):
            raise VLSNIndexCorruptionError(f"VLSN bucket {first}: its last mapping {last} -> {bucket.last_lsn} does not fit")
        offsets = bucket.file_offsets
        kept = [off for off in offsets if off != NO_OFFSET]
        if offsets and last != NULL_VLSN and (
            any(a >= b for a, b in zip(kept, kept[1:], strict=False)) or max(kept, default=0) > bucket.last_lsn.offset
            or first + (len(offsets) - 1) * stride > last
        ):
            # Mappings climb: each later VLSN (first + i * stride) lies further into the file, none past the last.
            raise VLSNIndexCorruptionError(f"VLSN bucket {first}: its {len(offsets)} offsets with stride {stride} do not fit "
                                 f"VLSNs {first}..{last} ending at {bucket.last_lsn}")
        return bucket

    # -- text ----------------------------------------------------------------------------------
    def describe(self) -> str:
        state = "closed" if self.closed else "open"
        span = f"VLSNs {self.first}..{self.last}" if not self.is_empty else f"empty from VLSN {self.first}"
        stored = sum(1 for off in self.file_offsets if off != NO_OFFSET)
        return (f"bucket file 0x{self.file_number:x} {span}, stride {self.stride}, "
                f"{stored} of {self.max_mappings} offsets, {state}")

    def dump(self) -> str:
        """The bucket as text: a heading, then one line per stride slot and the last mapping."""
        with self.lock:
            lines = [self.describe()]
            for i, off in enumerate(self.file_offsets):
                where = f"0x{self.file_number:x}/0x{off:x}" if off != NO_OFFSET else "hole"
                lines.append(f"  {self.vlsn_at(i):>6} -> {where}")
            if not self.is_empty and (not self.file_offsets or self.vlsn_at(len(self.file_offsets) - 1) != self.last):
                lines.append(f"  {self.last:>6} -> {self.last_lsn} (last)")
            return "\n".join(lines)

    def __repr__(self) -> str:
        return f"VLSNBucket({self.describe()})"


class GhostBucket(VLSNBucket):
    """A placeholder for unknown mappings at the head of the index (JE's ``GhostBucket``).

    When log cleaning truncates the index's head at ``delete_end`` and no
    bucket maps ``delete_end + 1``, the range must still start with a mapping.
    The ghost owns exactly that VLSN and maps it *fuzzily*: at or below it is
    ``first_possible_lsn`` (the start of the file after the deleted ones), at
    or above it ``last_possible_lsn`` (the next real bucket's first mapping).
    A forward scan from the first, or a backward scan from the second, finds
    the real entry. It is closed from birth and never takes a put.
    """

    def __init__(self, ghost_vlsn: int, first_possible_lsn: LSN, last_possible_lsn: LSN,
                 stride: int = DEFAULT_STRIDE, max_mappings: int = DEFAULT_MAX_MAPPINGS,
                 max_distance: int = DEFAULT_MAX_DISTANCE):
        if first_possible_lsn.offset != 0:
            raise ValueError(f"a ghost bucket's first possible LSN is the start of a file, not {first_possible_lsn}")
        super().__init__(first_possible_lsn.file, stride, max_mappings, max_distance, ghost_vlsn)
        self.first_possible_lsn = first_possible_lsn
        self.last = ghost_vlsn
        self.last_lsn = last_possible_lsn
        self.closed = True
        self.dirty = True

    @property
    def is_ghost(self) -> bool:
        return True

    @property
    def last_possible_lsn(self) -> LSN:
        return self.last_lsn

    def _mappings(self) -> list[tuple[int, LSN]]:
        return []

    def _refusal(self, vlsn: int, lsn: LSN) -> str | None:
        return "a ghost bucket takes no mappings"

    def get_lsn(self, vlsn: int) -> LSN | None:
        return None

    def get_lte_mapping(self, vlsn: int) -> tuple[int, LSN] | None:
        return (NULL_VLSN, self.first_possible_lsn) if vlsn >= self.first else None

    def get_gte_mapping(self, vlsn: int) -> tuple[int, LSN] | None:
        return (NULL_VLSN, self.last_lsn) if vlsn <= self.first else None

    def remove_from_tail(self, start_delete: int, prev_lsn: LSN | None = None) -> None:
        if start_delete <= self.first:
            with self.lock:
                self.last, self.last_lsn, self.dirty = NULL_VLSN, NULL_LSN, True

    def describe(self) -> str:
        return (f"ghost bucket VLSN {self.first}: somewhere from {self.first_possible_lsn} "
                f"to {self.last_lsn}")

    def dump(self) -> str:
        return self.describe()


__all__ = ["VLSNBucket", "GhostBucket", "DEFAULT_STRIDE", "DEFAULT_MAX_MAPPINGS", "DEFAULT_MAX_DISTANCE",
           "NO_OFFSET", "HEAD_SIZE"]
