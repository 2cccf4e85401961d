"""The errors of replication, each a :class:`~minidb.errors.MinidbError`.

Messages name what and where (VLSN, LSN, bucket, database) so the CLI can
print them as one line. An operation that raises one has changed nothing.
"""

from __future__ import annotations

from minidb.errors import CorruptionError, MinidbError, UserError


class VLSNIndexError(MinidbError):
    """The VLSN index cannot do what was asked (not attached to a log, no recovery under way)."""


class VLSNIndexCorruptionError(VLSNIndexError, CorruptionError):
    """The VLSN index and the log disagree (a gap, a VLSN the log does not hold, a bad record)."""


class VLSNRangeError(UserError):
    """A VLSN outside the range the index holds was asked for, or an impossible truncation."""


class WaitTimeoutError(MinidbError):
    """``wait_for_vlsn`` gave up: the VLSN was not logged within the timeout (JE's WaitTimeOutException)."""

    def __init__(self, vlsn: int, timeout: float, last: int):
        self.vlsn = vlsn
        self.timeout = timeout
        self.last = last
        super().__init__(f"VLSN {vlsn} was not logged within {timeout:g} s (the range ends at VLSN {last})")


class IndexClosedError(MinidbError):
    """The VLSN index was closed (its environment closed or crashed) while a feeder waited on it."""


__all__ = ["VLSNIndexError", "VLSNIndexCorruptionError", "VLSNRangeError", "WaitTimeoutError", "IndexClosedError"]
