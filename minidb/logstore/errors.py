"""The errors of the log store, each a :class:`~minidb.errors.MinidbError`.

Messages name what and where (database, key, transaction, LSN) so the CLI can
print them as one line. An operation that raises one has changed nothing.
"""

from __future__ import annotations

from minidb.errors import CorruptionError, LogError, MinidbError, UserError


class EnvironmentClosedError(UserError):
    """The environment was closed (or crashed); reopen it."""


class EnvironmentKindError(UserError):
    """A replicated environment opened as a plain one, or the reverse (nothing was written)."""


class ReadOnlyEnvironmentError(UserError):
    """A write (a put, a delete, a checkpoint, cleaning, erasing, a new database) asked of an environment
    opened read-only; nothing was written."""


class DatabaseNotFoundError(UserError):
    """No database of that name exists in the environment."""


class TransactionStateError(UserError):
    """A committed or aborted transaction was used again."""


class AbortNotLoggedError(MinidbError):
    """A transaction's Abort could not be logged (a full disk, a failed log).

    The transaction is aborted all the same: undone in memory, its locks
    released. It never committed, so recovery undoes it too.
    """


class LockConflictError(MinidbError):
    """A record is write-locked by another transaction (JE's LockConflictException).

    Raised at once when the lock timeout is 0 (no waiting), and as the base of
    the two ways a wait ends without the lock: :class:`LockTimeoutError` and
    :class:`DeadlockError`. The conflicting operation changed nothing; the
    caller aborts its transaction and may retry.
    """

    def __init__(self, db_name: str, key: bytes, owner: int, requester: str, message: str | None = None):
        self.db_name = db_name
        self.key = key
        self.owner = owner
        super().__init__(message or
                         f"record {key!r} of database {db_name!r} is write-locked by txn {owner}; {requester} cannot use it")


class LockTimeoutError(LockConflictError):
    """A lock wait outlasted the lock timeout (JE's LockTimeoutException); ``waited`` is in seconds."""

    def __init__(self, db_name: str, key: bytes, owner: int, requester: str, waited: float, timeout: float):
        self.waited = waited
        super().__init__(db_name, key, owner, requester,
                         f"{requester} waited {waited:.3f} s for record {key!r} of database {db_name!r}, "
                         f"write-locked by txn {owner}: lock timeout ({timeout:g} s)")


class DeadlockError(LockConflictError):
    """A lock wait would close a cycle of waits (JE's DeadlockException); the requester is the victim.

    ``cycle`` names each wait, as ``txn 3 waits for txn 5 (db 'a' key b'x')``.
    """

    def __init__(self, db_name: str, key: bytes, owner: int, requester: str, cycle: list[str]):
        self.cycle = cycle
        super().__init__(db_name, key, owner, requester,
                         f"deadlock: {', '.join(cycle)}; {requester} is the victim (abort it)")


class TreeError(LogError, CorruptionError):
    """A node read from the log is not what its parent's slot says it is."""


class EnvironmentFailureError(LogError, CorruptionError):
    """The tree refers to a log entry that is gone (JE's EnvironmentFailureException).

    Raised when a BIN slot points at an entry the data eraser erased (its
    type byte is LOG_ERASED): the record's data is lost, so the read fails,
    naming the LSN, instead of returning an empty record.
    """


class LogFileNotFound(LogError, CorruptionError):
    """The tree refers to an entry of a log file that was deleted (JE's LogFileNotFoundException)."""
