"""The twin of :class:`minidb.log.entry.LogEntry`: an entry made, and its values decoded, in fewer steps.

Readers make one entry per entry read, and recovery, gets and the cleaner
ask most of them for their values or their transaction, so the few steps
of making an entry and decoding it once are paid tens of thousands of times.
This twin skips three of the reference's:

- **the frozen dataclass's** ``__init__``, which sets each field through
  ``object.__setattr__``: the three fields go straight into the instance's
  ``__dict__``. It is frozen all the same (assigning an attribute raises);
- **``functools.cached_property``'s lock** (on Python 3.11 one lock for the
  whole class, taken on every first access, which costs more than decoding
  a small item): ``values`` is kept by a descriptor without it. Being a
  non-data descriptor, it is not consulted again once the instance holds the
  value; two threads racing on a first access both decode the same immutable
  bytes and one result is kept, which is harmless. The item is decoded by the
  type's generated codec (:mod:`minidb.fast.log.codec`) directly;
- **the whole item for** ``txn_id``: a transactional item begins with its
  ``txn_id`` (I64, :mod:`minidb.log.types`), so while the values are not yet
  decoded, only those 8 bytes are read. Safe because an entry a reader hands
  out passed its checksum: its item is the bytes the codec of its type wrote.

Equal to the reference's in every field and answer (the dataclass's
equality, hash and ``repr`` are inherited); the agreement scenarios
``scn_log`` and ``scn_codec`` compare the entries read, their values and
their transactions.
"""

from __future__ import annotations

import struct
from typing import Any

from minidb.fast.log.codec import codec_of
from minidb.log import entry as reference
from minidb.log.header import EntryHeader
from minidb.log.lsn import LSN
from minidb.log.types import type_by_code

_TXN_ID = struct.Struct("<q")  # a transactional item's first field


class _DecodedOnce:
    """A value computed on first use and then kept in the instance's ``__dict__`` (no lock)."""

    def __init__(self, compute):
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.compute(obj)  # a frozen dataclass still has a __dict__
        return value


class LogEntry(reference.LogEntry):
    """:class:`minidb.log.entry.LogEntry`, made without the dataclass's ``__init__``, decoded without a lock."""

    def __init__(self, lsn: LSN, header: EntryHeader, item: bytes):
        fields = self.__dict__
        fields["lsn"], fields["header"], fields["item"] = lsn, header, item

    @_DecodedOnce
    def values(self) -> dict[str, Any]:
        """The item decoded by its entry type's fields ({} if erased or unknown)."""
        entry_type = type_by_code(self.header.type_code)
        if entry_type is None:
            return {}
        return codec_of(entry_type).decode(self.item)

    @property
    def txn_id(self) -> int | None:
        entry_type = type_by_code(self.header.type_code)
        if entry_type is None or not entry_type.transactional:
            return None
        if "values" not in self.__dict__ and len(self.item) >= _TXN_ID.size:
            return _TXN_ID.unpack_from(self.item)[0]
        return self.values["txn_id"]
