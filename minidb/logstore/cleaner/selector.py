"""Choosing the file to clean, from utilization alone (JE's ``FileSelector``).

A file's *utilization* is the share of its bytes still live (see
:mod:`minidb.logstore.cleaner.utilization`); the *total* utilization is the live
bytes of every file over all their bytes. JE's two thresholds decide:

- while the total is under ``cleaner_min_utilization`` (50%), clean the
  candidate with the lowest utilization;
- whatever the total, a candidate under ``cleaner_min_file_utilization`` (5%)
  is cleaned (the lowest first), so a nearly empty file never lingers.

Only *candidates* are chosen: files the caller allows (never the file being
written, never a protected file, never one inside the recovery interval,
never one cleaned already). Example, three files of 1000 bytes with 200, 900
and 30 live bytes: the total is 1130/3000 = 38% < 50%, so file 3 (3%) goes
first; after it, 1100/2000 = 55%: file 1 (20%) is left alone, being over 5%.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from minidb.logstore.cleaner.utilization import FileSummary


@dataclass(frozen=True)
class Selection:
    file_number: int | None  # None: nothing to clean
    reason: str


def total_utilization(summaries: Iterable[FileSummary]) -> float:
    summaries = list(summaries)
    total = sum(s.total_size for s in summaries)
    return sum(s.live_size for s in summaries) / total if total else 1.0


def select_file(summaries: list[FileSummary], is_candidate: Callable[[int], bool], min_utilization: int,
                min_file_utilization: int) -> Selection:
    """The file to clean next (thresholds in percent)."""
    total = total_utilization(summaries)
    candidates = sorted((s for s in summaries if s.total_size and is_candidate(s.file_number)),
                        key=lambda s: (s.utilization, s.file_number))
    if not candidates:
        return Selection(None, f"total utilization {total:.0%}; no file may be cleaned")
    best = candidates[0]
    if total * 100 < min_utilization:
        return Selection(best.file_number, f"total utilization {total:.0%} < {min_utilization}%: file "
                                           f"{best.file_number} has the lowest ({best.utilization:.0%})")
    if best.utilization * 100 < min_file_utilization:
        return Selection(best.file_number, f"file {best.file_number} utilization {best.utilization:.0%} < "
                                           f"{min_file_utilization}% (total {total:.0%})")
    return Selection(None, f"total utilization {total:.0%} >= {min_utilization}% and no file under "
                           f"{min_file_utilization}%")


__all__ = ["Selection", "select_file", "total_utilization"]
