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

:func:`select_file` states the choice over every file's summary; the cleaner
asks :class:`FileRanking`, which gives the same answer (the same file, the same
reason) from a heap it keeps as files' counts change, without a pass over every
file per choice (a log of many files is cleaned file after file).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from minidb.logstore.cleaner.utilization import FileSummary, UtilizationTracker


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
    """The file to clean next (thresholds in percent), from every file's summary: the definition
    :class:`FileRanking` answers the same as without looking at every file each time."""
    total = total_utilization(summaries)
    candidates = sorted((s for s in summaries if s.total_size and is_candidate(s.file_number)),
                        key=lambda s: (s.utilization, s.file_number))
    best = (candidates[0].utilization, candidates[0].file_number) if candidates else None
    return decide(total, best, min_utilization, min_file_utilization)


def decide(total: float, best: tuple[float, int] | None, min_utilization: int, min_file_utilization: int) -> Selection:
    """JE's two thresholds, given the total utilization and the least utilized candidate ``(utilization, file)``."""
    if best is None:
        return Selection(None, f"total utilization {total:.0%}; no file may be cleaned")
    utilization, number = best
    if total * 100 < min_utilization:
        return Selection(number, f"total utilization {total:.0%} < {min_utilization}%: file "
                                 f"{number} has the lowest ({utilization:.0%})")
    if utilization * 100 < min_file_utilization:
        return Selection(number, f"file {number} utilization {utilization:.0%} < "
                                 f"{min_file_utilization}% (total {total:.0%})")
    return Selection(None, f"total utilization {total:.0%} >= {min_utilization}% and no file under "
                           f"{min_file_utilization}%")


class FileRanking:
    """The files by ``(utilization, number)``, kept as their counts change: :func:`select_file`'s answer
    without a pass over every file per choice.

    The tracker names the files whose live or total bytes changed since the
    ranking last looked (``UtilizationTracker.changed``; a file's sums are
    kept as its offsets come, :class:`FileSummary`). Before a choice the
    ranking takes each of those files' ``(live, total)`` anew: the totals of
    all files change by the difference, and the file goes into a heap at its
    new utilization. The heap keeps old places too; a place is current when
    it is the file's utilization now, and others are dropped as they reach the
    top. The least utilized candidate is the first current place whose file
    may be cleaned; files passed over on the way (not candidates now) go back.
    So a choice costs the files changed since the last one (a log n each) plus
    the files passed over, not a sum over every file.

    A cleaned file is *left out* (:meth:`leave_out`): its bytes leave the
    totals and its places stop being current, so it is dropped once from the
    heap, and changes to its counts (its live LNs copied out make their old
    versions obsolete) do not rank it again. Were it only passed over, every
    choice would pass over every file cleaned since the last checkpoint (the
    least utilized of all, at the top of the heap), and a log of n files
    would be cleaned in n² steps.

    Example: files 1, 2, 3 at 20%, 90%, 3%: the heap's top is (3%, 3). The
    cleaner takes file 3; file 1's count changes (a live LN copied out of
    file 3 made its old version in file 1 obsolete), so (12%, 1) is pushed;
    (20%, 1) is no longer current and is dropped when it comes up.
    """

    def __init__(self, tracker: UtilizationTracker):
        self.tracker = tracker
        self.counted: dict[int, tuple[int, int]] = {}  # file -> (live, total) as ranked
        self.live = 0  # sums of counted
        self.total = 0
        self.heap: list[tuple[float, int]] = []
        self.left_out: set[int] = set()  # cleaned files, not ranked until they are deleted
        self.files_ranked = 0  # files taken anew, over the ranking's life

    def _take_changes(self) -> None:
        files, counted = self.tracker.files, self.counted
        for number in self.tracker.changed:
            live, total = counted.pop(number, (0, 0))
            self.live -= live
            self.total -= total
            summary = files.get(number)
            if summary is None:  # deleted
                self.left_out.discard(number)
                continue
            if number in self.left_out:
                continue
            live, total = counted[number] = summary.live_size, summary.total_size
            self.live += live
            self.total += total
            self.files_ranked += 1
            if total:
                heapq.heappush(self.heap, (live / total, number))
        self.tracker.changed.clear()
        if len(self.heap) > 2 * len(counted) + 64:  # mostly old places: start again from the current ones
            self.heap = [(live / total, n) for n, (live, total) in counted.items() if total]
            heapq.heapify(self.heap)

    def leave_out(self, number: int) -> None:
        """File ``number`` was cleaned: no longer a choice, nor counted in the total utilization."""
        live, total = self.counted.pop(number, (0, 0))
        self.live -= live
        self.total -= total
        self.left_out.add(number)

    def _is_current(self, place: tuple[float, int]) -> bool:
        live, total = self.counted.get(place[1], (0, 0))
        return total > 0 and live / total == place[0]

    def least_utilized(self, eligible: Callable[[int], bool]) -> tuple[float, int] | None:
        """The current place ``(utilization, file)`` first in order whose file is ``eligible``."""
        heap, passed, seen = self.heap, [], set()
        found = None
        while heap:
            place = heap[0]
            if not self._is_current(place) or place[1] in seen:
                heapq.heappop(heap)
                continue
            if eligible(place[1]):
                found = place
                break
            seen.add(place[1])
            passed.append(heapq.heappop(heap))
        for place in passed:
            heapq.heappush(heap, place)
        return found

    def select(self, is_candidate: Callable[[int], bool], min_utilization: int, min_file_utilization: int) -> Selection:
        """:func:`select_file` over every file not left out (whose bytes the total leaves out too)."""
        self._take_changes()
        best = self.least_utilized(is_candidate)
        return decide(self.live / self.total if self.total else 1.0, best, min_utilization, min_file_utilization)


__all__ = ["FileRanking", "Selection", "decide", "select_file", "total_utilization"]
