"""Lock escalation: many fine locks under one parent become one coarse lock.

Shore's lock manager escalates up the hierarchy by default, with thresholds
set by run-time options and controllable (set, disabled) per object, per
transaction or for the whole server. In minidb:

- a transaction's **long-duration** locks directly under a page (its record
  locks) are counted, and so are those directly under a store (its page
  locks and key-value locks); volumes are not escalation targets;
- when, after a grant, the count under a page or store reaches the
  threshold, the transaction converts its lock on that parent to SH (if it
  held IS there: its children were all read locks) or to EX (if it held IX
  or SIX), and releases the long-duration child locks below it, which the
  parent now covers implicitly. Short and instant locks are left alone: their
  holder will unlock them;
- the conversion is tried **without waiting**: if another transaction holds
  the parent in a conflicting mode (another writer's IX on the page), the
  escalation is refused (``nEscalationsRefused``) and tried again at the next
  child lock. So escalation never blocks and never causes a deadlock;
- the threshold comes from the most specific setting: the object's (e.g.
  ``set_escalation(LockId.store(sid), None)`` disables escalation to that store,
  "when increased concurrency is desired"), else the transaction's, else the
  manager's ``escalation_threshold`` (None: no escalation).

Worked example, threshold 4: T1 reads records r(1.3.50.0) .. r(1.3.50.3):
v(1), s(1.3) and p(1.3.50) are held IS, and the fourth record lock brings the
count under p(1.3.50) to 4: T1 converts p(1.3.50) to SH and releases the four
record locks. A fifth read, r(1.3.50.4), is then covered by the page's SH and
takes no lock at all.
"""

from __future__ import annotations

from minidb.pagestore.lock.lockid import LockId

DEFAULT_ESCALATION_THRESHOLD = 64

_UNSET = object()
ESCALATION_TARGETS = ("p", "s")  # pages (records below) and stores (pages, key locks below)


def escalation_target(lock_id: LockId) -> LockId | None:
    """The parent a lock counts towards for escalation: a record's page, a page's or key's store."""
    parent = lock_id.parent()
    if parent is not None and parent.code in ESCALATION_TARGETS:
        return parent
    return None


class EscalationPolicy:
    """Thresholds: per object, per transaction, and the default."""

    def __init__(self, default: int | None):
        self.default = _check(default)
        self._objects: dict[LockId, int | None] = {}
        self._owners: dict[int, int | None] = {}

    def set_object(self, lock_id: LockId, threshold: int | None) -> None:
        self._objects[lock_id] = _check(threshold)

    def set_owner(self, txn_id: int, threshold: int | None) -> None:
        self._owners[txn_id] = _check(threshold)

    def forget_owner(self, txn_id: int) -> None:
        self._owners.pop(txn_id, None)

    def threshold(self, target: LockId, txn_id: int) -> int | None:
        value = self._objects.get(target, _UNSET)
        if value is _UNSET:
            value = self._owners.get(txn_id, _UNSET)
        if value is _UNSET:
            value = self.default
        return value  # type: ignore[return-value]


def _check(threshold: int | None) -> int | None:
    if threshold is None:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1:
        from minidb.pagestore.lock.errors import BadLockRequest

        raise BadLockRequest(f"an escalation threshold must be a positive integer or None, not {threshold!r}")
    return threshold
