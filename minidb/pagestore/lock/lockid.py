"""Lock ids (Shore's ``lockid_t``) and the two lock hierarchies.

A lock id names what is locked and, by its kind (Shore's *lock space*), where
it sits in a hierarchy. It is built from the page store's ids
(:mod:`minidb.pagestore.ids`) and prints like them::

    LockId.volume(VolumeId(1))             v(1)
    LockId.store(StoreId(1, 3))            s(1.3)
    LockId.page(PageId(1, 3, 48))          p(1.3.48)
    LockId.record(RecordId(1, 3, 48, 2))   r(1.3.48.2)
    LockId.kvl(StoreId(1, 3), b"apple")    k(1.3.'apple')     (a key-value lock of an index)
    LockId.end_of_index(StoreId(1, 3))     k(1.3.EOF)         (the key past an index's last key)
    LockId.extent(ExtentId(1, 6))          x(1.6)
    LockId.user(7)                         u(7)

The lock manager enforces two hierarchies::

    volume - store - page - record          v(1) > s(1.3) > p(1.3.48) > r(1.3.48.2)
    volume - store - key-value              v(1) > s(1.3) > k(1.3.'apple')

Extent locks and user locks are in no hierarchy: an extent is found by
arithmetic from a page number, its store is immaterial, and ``x(1.6)`` has no
parent. :meth:`LockId.parent` walks up one level, :meth:`LockId.ancestors`
lists the path from the volume down. The lock manager does not insist that
a lock id names an existing object: ids are opaque except for this walk.

Lock ids sort in the order of the hierarchy (a volume, then its stores, each
store followed by its pages, each page by its records, then the store's key
locks, ``EOF`` last), then extents, then user locks: the order of the lock
table dump. A key-value lock's key is opaque bytes (printed as ASCII when it
is printable, else in hex); the empty key, which no index entry has, names
the end of the index (:meth:`LockId.end_of_index`).
"""

from __future__ import annotations

import enum
import re
from typing import NamedTuple

from minidb.pagestore.ids import ExtentId, PageId, RecordId, StoreId, VolumeId, parse_id
from minidb.pagestore.lock.errors import BadLockRequest


class LockSpace(enum.Enum):
    """The kind of a lock id (Shore's ``lockid_t::name_space_t``)."""

    VOLUME = "v"
    STORE = "s"
    PAGE = "p"
    KVL = "k"
    RECORD = "r"
    EXTENT = "x"
    USER = "u"


_LIMIT = 1 << 32
_KVL_LAST = 1 << 40  # sorts a store's key locks after all its pages
_SORT_GROUP = {"x": 1, "u": 2}
_SPACES = {space.value: space for space in LockSpace}
_USER_ID = re.compile(r"^\s*u\((\d+)\)\s*$")


def _number(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < _LIMIT:
        raise BadLockRequest(f"bad lock id: {what} must be an integer from 0 to {_LIMIT - 1}, not {value!r}")
    return value


def _expect(value: object, cls: type, what: str) -> None:
    if not isinstance(value, cls):
        article = "an" if cls.__name__[0] in "AEIOU" else "a"
        raise BadLockRequest(f"bad lock id: {what} needs {article} {cls.__name__}, not {type(value).__name__} "
                             f"{value!r}")


class LockId(NamedTuple):
    """What a lock is on: a kind, its numbers (volume first) and, for a key-value lock, the key.

    A named tuple of plain values (the kind as its one-letter code): two ids
    of the same thing are equal and hash alike, so an id is a dictionary key.
    """

    code: str
    numbers: tuple[int, ...]
    key: bytes = b""

    @property
    def space(self) -> LockSpace:
        return _SPACES[self.code]

    # -- constructors -----------------------------------------------------------------
    @classmethod
    def volume(cls, vid: VolumeId | int) -> "LockId":
        vol = vid.vol if isinstance(vid, VolumeId) else vid
        return cls("v", (_number(vol, "the volume number"),))

    @classmethod
    def store(cls, sid: StoreId) -> "LockId":
        _expect(sid, StoreId, "a store lock")
        return cls("s", (_number(sid.vol, "the volume"), _number(sid.store, "the store")))

    @classmethod
    def page(cls, pid: PageId) -> "LockId":
        _expect(pid, PageId, "a page lock")
        return cls("p", (_number(pid.vol, "the volume"), _number(pid.store, "the store"),
                                    _number(pid.page, "the page")))

    @classmethod
    def record(cls, rid: RecordId) -> "LockId":
        _expect(rid, RecordId, "a record lock")
        return cls("r", (_number(rid.vol, "the volume"), _number(rid.store, "the store"),
                                      _number(rid.page, "the page"), _number(rid.slot, "the slot")))

    @classmethod
    def kvl(cls, sid: StoreId, key: bytes) -> "LockId":
        _expect(sid, StoreId, "a key-value lock")
        if not isinstance(key, (bytes, bytearray)):
            raise BadLockRequest(f"bad lock id: a key-value lock needs the key as bytes, not {type(key).__name__}")
        return cls("k", (_number(sid.vol, "the volume"), _number(sid.store, "the store")), bytes(key))

    @classmethod
    def end_of_index(cls, sid: StoreId) -> "LockId":
        """The key-value lock past an index's last key (ARIES/KVL's "end of file"): the empty key."""
        return cls.kvl(sid, b"")

    @classmethod
    def extent(cls, xid: ExtentId) -> "LockId":
        _expect(xid, ExtentId, "an extent lock")
        return cls("x", (_number(xid.vol, "the volume"), _number(xid.ext, "the extent")))

    @classmethod
    def user(cls, n: int) -> "LockId":
        return cls("u", (_number(n, "a user lock's number"),))

    @classmethod
    def of(cls, ident: LockId | VolumeId | StoreId | PageId | RecordId | ExtentId) -> "LockId":
        """The lock id of a page store id (not a key-value or user lock); a lock id is itself."""
        if isinstance(ident, LockId):
            return ident
        makers = {VolumeId: cls.volume, StoreId: cls.store, PageId: cls.page, RecordId: cls.record,
                  ExtentId: cls.extent}
        maker = makers.get(type(ident))
        if maker is None:
            raise BadLockRequest(f"bad lock id: {ident!r} is not a volume, store, page, record or extent id")
        return maker(ident)  # type: ignore[operator]

    @classmethod
    def parse(cls, text: str) -> "LockId":
        """The lock id printed as ``text``: ``v(1)``, ``s(1.3)``, ``p(1.3.48)``, ``r(1.3.48.2)``, ``x(1.6)``, ``u(7)``."""
        match = _USER_ID.match(text)
        if match:
            return cls.user(int(match.group(1)))
        try:
            return cls.of(parse_id(text))
        except BadLockRequest:
            raise
        except Exception as e:  # the ids module's UserError, reworded for locks
            raise BadLockRequest(f"bad lock id {text!r}: {e}") from None

    # -- the hierarchy ----------------------------------------------------------------
    @property
    def vid(self) -> VolumeId | None:
        if self.code == "u":
            return None
        return VolumeId(self.numbers[0])

    @property
    def in_hierarchy(self) -> bool:
        return self.code not in ("x", "u")

    def parent(self) -> "LockId | None":
        """One level up: record -> page -> store -> volume; key-value -> store; else None."""
        code = self.code
        if code == "r":
            return LockId("p", self.numbers[:3])
        if code == "p" or code == "k":
            return LockId("s", self.numbers[:2])
        if code == "s":
            return LockId("v", self.numbers[:1])
        return None

    def ancestors(self) -> tuple["LockId", ...]:
        """Every ancestor, from the volume down to the parent (empty outside the hierarchies)."""
        path = []
        parent = self.parent()
        while parent is not None:
            path.append(parent)
            parent = parent.parent()
        return tuple(reversed(path))

    def is_ancestor_of(self, other: "LockId") -> bool:
        return self in other.ancestors()

    def sort_key(self) -> tuple:
        group = _SORT_GROUP.get(self.code, 0)
        if group:
            return (group, self.numbers, b"")
        nums = self.numbers
        if self.code == "k":
            return (0, (nums[0], nums[1], _KVL_LAST if self.key else _KVL_LAST + 1), self.key)
        return (0, nums, b"")

    def __lt__(self, other: "LockId") -> bool:  # type: ignore[override]
        return self.sort_key() < other.sort_key()

    def __gt__(self, other: "LockId") -> bool:  # type: ignore[override]
        return self.sort_key() > other.sort_key()

    def __le__(self, other: "LockId") -> bool:  # type: ignore[override]
        return self.sort_key() <= other.sort_key()

    def __ge__(self, other: "LockId") -> bool:  # type: ignore[override]
        return self.sort_key() >= other.sort_key()

    def __str__(self) -> str:
        body = ".".join(str(n) for n in self.numbers)
        if self.code == "k":
            body += "." + _key_text(self.key)
        return f"{self.code}({body})"

    def __repr__(self) -> str:
        return str(self)


def _key_text(key: bytes) -> str:
    if not key:
        return "EOF"
    if key and all(32 <= b < 127 and b not in (0x27, 0x5C) for b in key):
        return f"'{key.decode('ascii')}'"
    return "0x" + key.hex()
