"""Shore's identifiers: volumes, stores, pages, records and extents.

A volume identifier is a number, printed ``v(1)``. A store identifier is a
volume and a store number, ``s(1.3)``; files and indexes are merely stores,
so a file id or an index id is a store id. A page identifier adds a page
number, ``p(1.3.48)``, and a record identifier a slot number,
``r(1.3.48.2)``. Extents are named by volume and extent number, ``x(1.6)``
(extent locks carry no store number: an extent is found arithmetically, so
its store is immaterial).

From a record id its page and slot are derived without consulting any index,
which is why records cannot move (see :mod:`minidb.pagestore.pages.slotted`). The
extent holding a page is *arithmetic* too: with ``ext_sz`` pages per extent,

    extent of page n      =  n // ext_sz
    pages of extent e     =  e * ext_sz  ...  e * ext_sz + ext_sz - 1

so with the default ``ext_sz = 8``, page 48 lies in extent 6
(``x(1.6)``), whose pages are 48..55; page 48 is its first page (index 0).

Every id parses back from its printed form: ``parse_id("p(1.3.48)") ==
PageId(1, 3, 48)``; a malformed string is a :class:`~minidb.errors.UserError`
naming what was expected.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from minidb.errors import UserError

_ID = re.compile(r"^\s*([vsprx])\((\d+(?:\.\d+)*)\)\s*$")
_PARTS = {"v": 1, "s": 2, "p": 3, "r": 4, "x": 2}
_NAMES = {"v": "volume", "s": "store", "p": "page", "r": "record", "x": "extent"}


class VolumeId(NamedTuple):
    vol: int

    def __str__(self) -> str:
        return f"v({self.vol})"

    def __repr__(self) -> str:
        return str(self)


class StoreId(NamedTuple):
    vol: int
    store: int

    @property
    def volume(self) -> VolumeId:
        return VolumeId(self.vol)

    def page(self, page: int) -> "PageId":
        return PageId(self.vol, self.store, page)

    def __str__(self) -> str:
        return f"s({self.vol}.{self.store})"

    def __repr__(self) -> str:
        return str(self)


class PageId(NamedTuple):
    """A page of a store; the buffer pool finds it by ``(vol, page)`` alone (:attr:`key`)."""

    vol: int
    store: int
    page: int

    @property
    def stid(self) -> StoreId:
        return StoreId(self.vol, self.store)

    @property
    def key(self) -> tuple[int, int]:
        """(volume, page number): where the page is, whatever store it belongs to."""
        return (self.vol, self.page)

    def record(self, slot: int) -> "RecordId":
        return RecordId(self.vol, self.store, self.page, slot)

    def __str__(self) -> str:
        return f"p({self.vol}.{self.store}.{self.page})"

    def __repr__(self) -> str:
        return str(self)


class RecordId(NamedTuple):
    vol: int
    store: int
    page: int
    slot: int

    @property
    def pid(self) -> PageId:
        return PageId(self.vol, self.store, self.page)

    def __str__(self) -> str:
        return f"r({self.vol}.{self.store}.{self.page}.{self.slot})"

    def __repr__(self) -> str:
        return str(self)


class ExtentId(NamedTuple):
    vol: int
    ext: int

    def __str__(self) -> str:
        return f"x({self.vol}.{self.ext})"

    def __repr__(self) -> str:
        return str(self)


AnyId = VolumeId | StoreId | PageId | RecordId | ExtentId
_CLASSES = {"v": VolumeId, "s": StoreId, "p": PageId, "r": RecordId, "x": ExtentId}


def parse_id(text: str) -> AnyId:
    """The id printed as ``text``: ``v(1)``, ``s(1.3)``, ``p(1.3.48)``, ``r(1.3.48.2)`` or ``x(1.6)``."""
    if not isinstance(text, str):
        raise UserError(f"bad id {text!r}: expected a string such as p(1.3.48)")
    match = _ID.match(text)
    if not match:
        raise UserError(f"bad id {text!r}: expected v(1), s(1.3), p(1.3.48), r(1.3.48.2) or x(1.6)")
    kind, body = match.groups()
    numbers = [int(part) for part in body.split(".")]
    if len(numbers) != _PARTS[kind]:
        raise UserError(f"bad {_NAMES[kind]} id {text!r}: {kind}(...) takes {_PARTS[kind]} numbers")
    return _CLASSES[kind](*numbers)


def parse_typed(text: str, cls: type) -> AnyId:
    """Like :func:`parse_id`, but the id must be of class ``cls`` (e.g. PageId)."""
    parsed = parse_id(text)
    if not isinstance(parsed, cls):
        raise UserError(f"{text!r} is a {type(parsed).__name__}, not a {cls.__name__}")
    return parsed


# -- extent arithmetic --------------------------------------------------------
def extent_of(page: int, ext_sz: int) -> int:
    """The extent holding page number ``page``."""
    return page // ext_sz


def first_page_of(ext: int, ext_sz: int) -> int:
    return ext * ext_sz


def pages_of(ext: int, ext_sz: int) -> range:
    """The page numbers of extent ``ext``."""
    return range(ext * ext_sz, ext * ext_sz + ext_sz)


def index_in_extent(page: int, ext_sz: int) -> int:
    """The page's position in its extent (its bit in the extent's page bitmap)."""
    return page % ext_sz
