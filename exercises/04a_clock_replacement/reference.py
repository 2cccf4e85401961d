"""Exercise 04a, reference: minidb's own answer (not a second implementation).

``choose_victim`` is :func:`minidb.pagestore.buffer.clock.choose_victim`, which the
buffer pool calls whenever a miss finds no free frame (see
``BufferPool._free_frame`` in ``minidb/pagestore/buffer/bufferpool.py``). minidb's
version also returns the pass that found the victim and every step the hand
took, which the notebook ``04_buffer_pool.ipynb`` draws.
"""

from __future__ import annotations

from minidb.pagestore.buffer.clock import ClockFrame
from minidb.pagestore.buffer.clock import choose_victim as _choose_victim


def choose_victim(frames: list[tuple[bool, bool, bool]], hand: int) -> tuple[int | None, int, list[int]]:
    choice = _choose_victim([ClockFrame(*frame) for frame in frames], hand)
    return choice.victim, choice.hand, list(choice.cleared)
