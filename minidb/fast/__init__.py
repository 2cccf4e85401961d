"""Accelerated twins: code that exists only for speed, apart from the reference it speeds up.

Each module here mirrors the path of the reference module it accelerates
(``minidb/fast/pagestore/lock/manager.py`` beside
``minidb/pagestore/lock/manager.py``) and defines, under the same names, the
hot spots that module declares with :func:`minidb.impl.hot_spot`. Each one
opens with what it skips and why skipping it is safe. Nothing imports these
modules directly: :mod:`minidb.impl` loads a twin when ``--impl fast`` (or
``MINIDB_IMPL=fast``) chooses it, and ``tests/agreement/`` proves each one
equal to its reference, byte for byte on the log and the volume.

A twin may import the engine it accelerates (it sits just above it); the
engine never imports a twin, and a page-store twin never imports the log
store, as the engines themselves never do.
"""

from typing import Any


def held_counts(stats: Any) -> dict[str, int]:
    """The counters of ``stats`` (a :class:`minidb.stats.Stats`) by name, for a twin to change in place (``counts["nEntries"] += 1``).

    The reference counts with :meth:`Stats.add <minidb.stats.Stats.add>`, under the stats' own lock.
    A twin may skip that lock for a counter that changes only under a lock the twin holds already
    (the log manager's latch, the environment latch): the one lock orders every change of it, and a
    reader of the stats sees a value that was true at some moment, as with the reference."""
    return stats._values
