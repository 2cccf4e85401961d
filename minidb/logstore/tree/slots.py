"""A BIN's slots as the log holds them, decoded one slot at a time.

A BIN read back from the log (a *fetch*: an evicted BIN a get needs again)
is mostly searched, not walked: a get bisects its keys, looks at one slot's
LSN and known-deleted flag, and reads that one record. Decoding all of a
full BIN's slots (about a hundred keys, LSNs and flags) to use one of them
was most of such a get. So a fetched BIN keeps its item's bytes and reads a
slot's key, LSN or flag only when something asks for it (JE keeps a BIN's
keys and LSNs in compact byte arrays for the same reason).

The slots are the last field of a BIN item (:mod:`minidb.logstore.logdef`):
a count, then the slots one after another, each as long as its key makes it::

    +-----------+------+------------------------------------------+
    | offset    | size | field                                    |
    +-----------+------+------------------------------------------+
    | 0         | 4    | count of slots               <I          |
    | 4         | 4    | slot 0: key length k         <I          |
    | 8         | k    | slot 0: key                              |
    | 8+k       | 8    | slot 0: lsn (file<<32 | offset)  <Q      |
    | 16+k      | 1    | slot 0: known_deleted (0 or 1)           |
    | 17+k      | ...  | slot 1, laid out the same way            |
    +-----------+------+------------------------------------------+

Opening the slots reads each slot's key length only, to learn where each
slot starts (``starts``); it checks that the lengths fit the item and that
the last slot ends exactly where the item does, as the full decode does.
``key(i)``, ``lsn(i)`` and ``known_deleted(i)`` then read one field of one
slot; ``decoded`` counts those reads.

:meth:`SlotBytes.search` is the bisection of :meth:`BIN.find
<minidb.logstore.tree.bin.BIN.find>` over keys that were never decoded as a
whole, so nobody checked that they are in order yet. It checks what it
probes: each probed key must lie strictly between the probes that bound it
(and inside the node's range), as it would in keys that are in order.
Worked example, keys ``k10 k20 ... k90`` (9 slots), searching ``k70``: it
probes slot 4 (``k50`` < ``k70``: the answer lies above 4), slot 7 (``k80``:
at 7 or below), slot 6 (``k70``: at 6 or below), slot 5 (``k60``: above 5),
so the answer is slot 6, found after four keys of nine, each checked to lie
between the probes that bound it (``k60`` between ``k50`` and ``k70``). A probe out of place means the node is damaged:
the search says so (``consistent`` False) and the BIN decodes and checks
every key (:meth:`BIN.unfold <minidb.logstore.tree.bin.BIN.unfold>`), which
names the problem. What this leaves out: keys it does not probe are not
checked by a search that finds its key; that is safe because the record
returned is read at the found slot's LSN and must carry the key searched
(:mod:`minidb.logstore.records`), so a damaged node can never hand out
another key's data; a search that does not find its key checks them all
before it answers "no record".
"""

from __future__ import annotations

import struct

from minidb.log import LSN
from minidb.log.fields import ItemFormatError

_U32 = struct.Struct("<I")
_LSN = struct.Struct("<Q")
#: bytes of a slot besides its key: the key's length, the LSN and the flag
SLOT_OVERHEAD = _U32.size + _LSN.size + 1


class SlotBytes:
    """The slots of one BIN item, starting at ``start`` (the count), read one field at a time."""

    def __init__(self, item: bytes, start: int):
        if start + _U32.size > len(item):
            raise ItemFormatError(f"list count at item offset {start} runs past the item")
        (count,) = _U32.unpack_from(item, start)
        starts = []
        pos = start + _U32.size
        for _ in range(count):
            if pos + _U32.size > len(item):
                raise ItemFormatError(f"BYTES length at item offset {pos} runs past the item")
            starts.append(pos)
            pos += SLOT_OVERHEAD + _U32.unpack_from(item, pos)[0]
        if pos != len(item):
            raise ItemFormatError(f"the slots end at item offset {pos}, the item at {len(item)}")
        self.item = item
        self.starts = starts
        self.count = count
        self.decoded = 0  # fields of slots read so far (keys, LSNs, flags)
        self.searches = 0

    def _key_end(self, index: int) -> int:
        pos = self.starts[index]
        return pos + _U32.size + _U32.unpack_from(self.item, pos)[0]

    def key(self, index: int) -> bytes:
        self.decoded += 1
        pos = self.starts[index] + _U32.size
        return self.item[pos:self._key_end(index)]

    def lsn(self, index: int) -> LSN:
        self.decoded += 1
        return LSN.unpack(_LSN.unpack_from(self.item, self._key_end(index))[0])

    def known_deleted(self, index: int) -> bool:
        self.decoded += 1
        pos = self._key_end(index) + _LSN.size
        flag = self.item[pos]
        if flag > 1:
            raise ItemFormatError(f"BOOL at item offset {pos} holds {flag}")
        return flag == 1

    def search(self, key: bytes, low: bytes, high: bytes | None) -> tuple[int, bool, bool]:
        """``(index, exact, consistent)``: ``bisect_left`` of ``key`` over the slots' keys, whether the
        slot there holds ``key``, and whether every key probed lay where keys in order would."""
        self.searches += 1
        lo, hi = 0, self.count
        below, above = low, high  # the probes that bound the answer so far (at first the node's range)
        while lo < hi:
            mid = (lo + hi) // 2
            probe = self.key(mid)
            if probe < below or (lo > 0 and probe == below) or (above is not None and probe >= above):
                return mid, False, False
            if probe < key:
                lo, below = mid + 1, probe
            else:
                hi, above = mid, probe
        return lo, lo < self.count and above == key, True


__all__ = ["SlotBytes", "SLOT_OVERHEAD"]
