"""Exercise 14a, reference: minidb's own answer (not a second implementation).

``find_matchpoint`` is :func:`minidb.replication.syncup.syncup.search_matchpoint`,
the function the engine's syncup (``ReplicaFeederSyncup.pump``) calls; this
adapter turns the exercise's tuples into its ``Candidate`` and
``FeederEntry`` (LSNs given as integers are packed LSNs) and its
``MatchpointSearchResults`` back into ``(vlsn or None, examined)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from minidb.log import LSN
from minidb.replication.syncup.syncup import Candidate, FeederEntry, search_matchpoint
from minidb.replication.vlsn.range import SYNC_TYPES

__all__ = ["SYNC_TYPES", "find_matchpoint"]


def find_matchpoint(candidates: Iterable[tuple[int, str, int, int]],
                    feeder: Callable[[int], tuple[str, int, int] | None]) -> tuple[int | None, int]:
    def theirs(vlsn: int) -> FeederEntry | None:
        answer = feeder(vlsn)
        return None if answer is None else FeederEntry(answer[0], answer[1], LSN.unpack(answer[2]))

    mine = (Candidate(vlsn, type_name, checksum, LSN.unpack(lsn)) for vlsn, type_name, checksum, lsn in candidates)
    result = search_matchpoint(mine, theirs)
    return (None if result.network_restore else result.matchpoint_vlsn), result.examined
