"""Boxes (Shore's ``nbox_t`` in two dimensions): the keys of an R*-tree.

A :class:`Box` is a closed rectangle of integer coordinates, ``xlo <= xhi``
and ``ylo <= yhi``, each a signed 32-bit integer; a point is a box whose
corners coincide. Everything an R*-tree decides is measured on boxes:

- ``area``: (xhi - xlo) * (yhi - ylo), 0 for a point or a segment;
- ``margin``: the half perimeter (xhi - xlo) + (yhi - ylo) (the R*-tree's
  split picks the axis whose distributions have the least total margin);
- ``union``: the smallest box holding both (a node's box is the union of
  its entries' boxes);
- ``overlap``: the area of the intersection (0 if they only touch or miss);
- the four search conditions between an entry's box ``e`` and a query box
  ``q``: ``e.overlaps(q)`` (they share a point: closed boxes that touch
  overlap), ``e.covers(q)`` (q lies in e), ``q.covers(e)`` (e is inside q),
  and ``e == q`` (exact).

**Bytes**, 16, little-endian (``struct`` format ``<iiii``), the first field
of every R-tree page entry (:mod:`minidb.pagestore.rtree.node`)::

    offset size field
       0     4  xlo   signed
       4     4  ylo   signed
       8     4  xhi   signed
      12     4  yhi   signed

Worked example: ``Box(0, 0, 4, 2)`` has area 8 and margin 6; with
``Box(3, 1, 5, 5)`` its union is ``Box(0, 0, 5, 5)`` (area 25) and its
overlap ``Box(3, 1, 4, 2)``'s area, 1; it is packed as
``00000000 00000000 04000000 02000000``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import NamedTuple

from minidb.pagestore.errors import BadRequestError

BOX = struct.Struct("<iiii")
COORD_MIN, COORD_MAX = -(2 ** 31), 2 ** 31 - 1


class Box(NamedTuple):
    """A closed box ``[xlo, xhi] x [ylo, yhi]`` (see the module documentation)."""

    xlo: int
    ylo: int
    xhi: int
    yhi: int

    @property
    def area(self) -> int:
        return (self.xhi - self.xlo) * (self.yhi - self.ylo)

    @property
    def margin(self) -> int:
        return (self.xhi - self.xlo) + (self.yhi - self.ylo)

    def center2(self) -> tuple[int, int]:
        """Twice the centre (integers: no rounding)."""
        return self.xlo + self.xhi, self.ylo + self.yhi

    def union(self, other: "Box") -> "Box":
        return Box(min(self.xlo, other.xlo), min(self.ylo, other.ylo), max(self.xhi, other.xhi),
                   max(self.yhi, other.yhi))

    def overlap(self, other: "Box") -> int:
        """The area of the intersection (0 when the boxes miss or only touch)."""
        w = min(self.xhi, other.xhi) - max(self.xlo, other.xlo)
        h = min(self.yhi, other.yhi) - max(self.ylo, other.ylo)
        return w * h if w > 0 and h > 0 else 0

    def overlaps(self, other: "Box") -> bool:
        """Whether the closed boxes share at least one point."""
        return (self.xlo <= other.xhi and other.xlo <= self.xhi
                and self.ylo <= other.yhi and other.ylo <= self.yhi)

    def covers(self, other: "Box") -> bool:
        """Whether ``other`` lies inside this box (edges included)."""
        return (self.xlo <= other.xlo and other.xhi <= self.xhi
                and self.ylo <= other.ylo and other.yhi <= self.yhi)

    def pack(self) -> bytes:
        return BOX.pack(*self)

    @classmethod
    def unpack(cls, data: bytes | memoryview) -> "Box":
        return cls(*BOX.unpack_from(data))

    def __str__(self) -> str:
        return f"[{self.xlo},{self.ylo} {self.xhi},{self.yhi}]"


def mbr(boxes: Iterable[Box]) -> Box:
    """The union of ``boxes`` (at least one)."""
    xlo, ylo, xhi, yhi = zip(*boxes, strict=True)
    return Box(min(xlo), min(ylo), max(xhi), max(yhi))


def as_box(value: object) -> Box:
    """A :class:`Box` from a Box or four integers, checked (a clear :class:`BadRequestError` if not one)."""
    try:
        xlo, ylo, xhi, yhi = value  # type: ignore[misc]
    except (TypeError, ValueError):
        raise BadRequestError(f"a box is four integers (xlo, ylo, xhi, yhi), not {value!r}") from None
    coords = (xlo, ylo, xhi, yhi)
    if not all(isinstance(c, int) and not isinstance(c, bool) and COORD_MIN <= c <= COORD_MAX for c in coords):
        raise BadRequestError(f"a box's coordinates are 32-bit signed integers, not {coords!r}")
    if xlo > xhi or ylo > yhi:
        raise BadRequestError(f"box {coords!r}: xlo <= xhi and ylo <= yhi are required")
    return Box(*coords)
