"""Exercise 08c: redo's test, whether a logged change must be applied to its page again.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/08c_redo_test --exercise-impl=student
"""

from __future__ import annotations

from typing import Callable


def redo_test(lsn: int, kind: str, page: int | None, dirty: dict[int, int],
              read_page_lsn: Callable[[], int]) -> str:
    """What redo does with the entry at ``lsn`` of ``kind`` that changes ``page``.

    ``dirty`` is analysis' dirty page table (page number -> recovery LSN).
    ``read_page_lsn()`` reads the page from disk and returns its page LSN
    (0: never written); call it only when you must (see README.md).

    Return ``"not redoable"``, ``"not dirty"``, ``"before rec_lsn"``,
    ``"page newer"`` or ``"redo"``.
    """
    raise NotImplementedError("redo_test: your code here")
