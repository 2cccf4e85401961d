"""Python's cyclic garbage collector, paused while an engine recovers.

Opening a database after a crash reads tens of thousands of log entries into
small objects (headers, decoded values, the entries kept for redo) that live
until recovery ends and are never part of a reference cycle. The cyclic
collector would walk all of them again each time its allocation counters fill
up, about a quarter of recovery's time in both engines. Reference counting
still frees everything as usual; only the cycle search waits until the block
ends, and the collector is then left as it was found (off stays off).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block, then back as it was."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
