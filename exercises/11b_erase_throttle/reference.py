"""Exercise 11b, reference: minidb's own answers (not a second implementation).

All four are in :mod:`minidb.logstore.eraser.throttle`. The eraser estimates a
cycle's work with ``work_estimate`` (``DataEraser._start_throttle``), and its
:class:`~minidb.logstore.eraser.throttle.WorkThrottle` calls ``pace`` after
every piece of work (``WorkThrottle.work``, the one place); ``schedule`` is the
same arithmetic for a whole cycle, which notebook 11 draws.
"""

from __future__ import annotations

from minidb.logstore.eraser.throttle import Planned, file_components, pace, schedule, work_estimate

__all__ = ["Planned", "file_components", "pace", "schedule", "work_estimate"]
