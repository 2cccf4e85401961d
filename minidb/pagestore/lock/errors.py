"""The lock manager's errors.

:class:`LockTimeout` and :class:`DeadlockVictim` are what a transaction
expects and handles (Shore's ``eLOCKTIMEOUT`` and ``eDEADLOCK``): the request
was not granted and nothing changed, except that a conversion keeps the mode
held before it. The caller usually aborts, which releases every lock of the
transaction. :class:`BadLockRequest` is a request that is wrong in itself
(an owner without a ``txn_id``, unlocking a long lock, a malformed lock id);
it is also a :class:`~minidb.errors.UserError`.
"""

from __future__ import annotations

from minidb.errors import UserError
from minidb.pagestore.errors import PageStoreError


class LockError(PageStoreError):
    """Base class of the lock manager's errors."""


class LockTimeout(LockError):
    """The request could not be granted within its timeout (at once, for timeout 0)."""


class DeadlockVictim(LockError):
    """Dreadlocks found a cycle through this transaction and chose it as the victim.

    ``txn_id`` is the victim, ``other`` the transaction in whose digest the
    cycle was seen, ``false_positive`` whether the exact waits-for graph had no
    cycle at that moment (fingerprints shared bits).
    """

    def __init__(self, message: str, txn_id: int, other: int, false_positive: bool = False):
        super().__init__(message)
        self.txn_id = txn_id
        self.other = other
        self.false_positive = false_positive


class BadLockRequest(LockError, UserError):
    """The request is wrong in itself; nothing was changed."""
