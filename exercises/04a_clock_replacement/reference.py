"""Exercise 04a, reference: minidb's own answer (not a second implementation).

``choose_victim`` is :func:`minidb.pagestore.buffer.clock.exercise_form`, which
calls :func:`minidb.pagestore.buffer.clock.choose_victim`, the function the
buffer pool calls whenever a miss finds no free frame (see
``BufferPool._free_frame`` in ``minidb/pagestore/buffer/bufferpool.py``), with
the exercise's tuples. minidb's version also returns the pass that found the
victim and every step the hand took, which the notebook ``04_buffer_pool.ipynb``
draws. The same module turns a student's ``choose_victim`` into the buffer
pool's (``VICTIM``, see ``minidb/impl.py``).
"""

from __future__ import annotations

from minidb.pagestore.buffer.clock import exercise_form as choose_victim

__all__ = ["choose_victim"]
