"""Store descriptors (Shore's ``sinfo_s``): what the store directory says of each store.

Shore keeps, for each store, metadata the volume's maps do not hold: what
kind of structure uses it, for a file which store holds its large records,
for an index its root page, whether it is unique, its key type and its
locking protocol. This is the store's *descriptor*, the element of its
entry in the *store directory*, the B+tree of store 1 keyed by store number
(:mod:`minidb.pagestore.directory`). Only the descriptor's bytes live here,
beside the file manager that writes descriptors of files; the directory
itself is a B+tree and so sits above :mod:`minidb.pagestore.btree`.

One descriptor, little-endian (``struct`` format ``<BBBBIIH``, 14 bytes, then
the key descriptor)::

    offset size field
       0     1  version  1 (a descriptor of another version is refused as damage)
       1     1  kind     StoreKind: FILE (small-record store of a file),
                         LGFILE (large-record store of a file), INDEX,
                         RTREE (an R*-tree)
       2     1  cc       LockProtocol: RECORD for a file (record locks),
                         NONE for an index today (latches and the store lock
                         only), KVL for key-value locking, FILE for an
                         R*-tree (one lock on the whole store)
       3     1  unique   an INDEX's: 1 unique keys, 0 duplicate keys allowed
       4     4  large    a FILE's: the store number of its large records (0 otherwise)
       8     4  root     an INDEX's or RTREE's: its root page (0 otherwise)
      12     2  dlen     length of the key descriptor (0 but for an INDEX)
      14  dlen  kdesc    an INDEX's key descriptor, ASCII (e.g. ``i4,str``)

    0    1    2    3    4        8        12     14
    +----+----+----+----+--------+--------+------+---------------+
    |vers|kind| cc |uniq| large  |  root  | dlen | kdesc ...     |
    +----+----+----+----+--------+--------+------+---------------+

The store number is the entry's key, not part of the descriptor. A store's
logging property (REGULAR, TMP, LOAD, INSERT) is not here but in its store
node (:mod:`minidb.pagestore.volume.stores`): a LOAD file becomes REGULAR at
its loader's commit, after the last change the transaction could log in
the directory.

Worked example: the first file of a fresh volume (512-byte pages,
``ext_sz`` 4) is ``s(1.3)`` with its large records in ``s(1.4)``; its
descriptor is ``01 01 01 00 | 04 00 00 00 | 00 00 00 00 | 00 00``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

from minidb.pagestore.errors import PageStoreCorruptionError

SINFO = struct.Struct("<BBBBIIH")
SINFO_VERSION = 1


class StoreKind(IntEnum):
    FILE = 1
    LGFILE = 2
    INDEX = 3
    RTREE = 4


class LockProtocol(IntEnum):
    """How transactions lock what is in the store (Shore's ``concurrency_t``, the ones minidb has)."""

    NONE = 0  # latches and the store lock only
    RECORD = 1  # record locks (files)
    KVL = 2  # key-value locking (indexes)
    FILE = 3  # the whole store locked at once (R*-trees)


@dataclass(frozen=True)
class SInfo:
    snum: int
    kind: StoreKind
    large: int = 0
    root: int = 0
    unique: bool = False  # an INDEX's
    kdesc: bytes = b""  # an INDEX's key descriptor
    cc: LockProtocol = LockProtocol.NONE

    def pack(self) -> bytes:
        return SINFO.pack(SINFO_VERSION, int(self.kind), int(self.cc), int(self.unique), self.large, self.root,
                          len(self.kdesc)) + self.kdesc

    @classmethod
    def unpack(cls, snum: int, data: bytes, where: str = "the store directory") -> "SInfo":
        """The descriptor of store ``snum`` from its bytes; damage is a :class:`PageStoreCorruptionError`."""
        try:
            version, kind, cc, unique, large, root, dlen = SINFO.unpack_from(data)
            if version != SINFO_VERSION:
                raise ValueError(f"version {version}, not {SINFO_VERSION}")
            if len(data) != SINFO.size + dlen or unique > 1:
                raise ValueError(f"{len(data)} bytes, unique {unique}, a key descriptor of {dlen} bytes")
            return cls(snum, StoreKind(kind), large, root, bool(unique), bytes(data[SINFO.size:]), LockProtocol(cc))
        except (struct.error, ValueError) as e:
            raise PageStoreCorruptionError(f"{where}: the descriptor of store {snum} ({bytes(data).hex()}) "
                                           f"does not decode: {e}") from None
