"""Exercise 12a: a VLSN bucket's offsets, holes, and LTE/GTE lookups.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/12a_vlsn_bucket --exercise-impl=student
"""

from __future__ import annotations

from minidb.log import LSN


def offset_array(first: int, stride: int, max_mappings: int, puts: list[tuple[int, int]]) -> list[int]:
    """The ``file_offsets`` of a bucket (first VLSN ``first``) after the puts ``(vlsn, offset)``, in order.

    A VLSN on a stride is stored at index ``(vlsn - first) // stride`` (the
    array grows with holes, 0, as needed; a hole is filled when its VLSN
    arrives); a stride VLSN whose index is ``max_mappings`` or more is
    refused; any other VLSN, or one before ``first``, stores nothing.
    """
    raise NotImplementedError("exercise 12a: implement offset_array (see exercises/12a_vlsn_bucket/README.md)")


def get_lte_lsn(file_number: int, first: int, stride: int, file_offsets: list[int], last: int, last_lsn: LSN,
                vlsn: int) -> LSN | None:
    """The LSN of the nearest kept mapping at or below ``vlsn`` (None if ``vlsn < first``).

    ``last_lsn`` when ``vlsn >= last``; else the nearest stored offset at or
    below ``vlsn``, skipping holes (0), as ``LSN(file_number, offset)``.
    """
    raise NotImplementedError("exercise 12a: implement get_lte_lsn (see exercises/12a_vlsn_bucket/README.md)")


def get_gte_lsn(file_number: int, first: int, stride: int, file_offsets: list[int], last: int, last_lsn: LSN,
                vlsn: int) -> LSN | None:
    """The LSN of the nearest kept mapping at or above ``vlsn`` (None if ``vlsn > last``).

    The nearest stored offset at or above ``vlsn`` (skipping holes), else
    the last mapping, ``last_lsn``.
    """
    raise NotImplementedError("exercise 12a: implement get_gte_lsn (see exercises/12a_vlsn_bucket/README.md)")
