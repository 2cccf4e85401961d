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
- there is a threshold per *level*, as Shore's run-time options
  ``sm_lock_escalate_to_page_threshold`` and ``..._to_store_threshold``: the
  *page* level (record locks under one page escalate to the page) and the
  *store* level (page and key-value locks under one store escalate to the
  store). 0 or None disables a level;
- the threshold comes from the most specific setting: the object's (e.g.
  ``set_escalation(LockId.store(sid), None)`` disables escalation to that store,
  "when increased concurrency is desired"), else, for a page, its store's
  page-level setting (``set_escalation_thresholds(store=..., to_page=...)``),
  else the transaction's, else the manager's for the level
  (``escalation_threshold`` for both levels until
  ``set_escalation_thresholds(to_page=..., to_store=...)`` changes one).

Worked example, threshold 4: T1 reads records r(1.3.50.0) .. r(1.3.50.3):
v(1), s(1.3) and p(1.3.50) are held IS, and the fourth record lock brings the
count under p(1.3.50) to 4: T1 converts p(1.3.50) to SH and releases the four
record locks. A fifth read, r(1.3.50.4), is then covered by the page's SH and
takes no lock at all.
"""

from __future__ import annotations

from typing import Any

from minidb.pagestore.lock.lockid import LockId

DEFAULT_ESCALATION_THRESHOLD = 64

_UNSET = object()
KEEP: Any = _UNSET  # "leave this threshold as it is" (set_escalation_thresholds)
ESCALATION_TARGETS = ("p", "s")  # pages (records below) and stores (pages, key locks below)


def escalation_target(lock_id: LockId) -> LockId | None:
    """The parent a lock counts towards for escalation: a record's page, a page's or key's store."""
    parent = lock_id.parent()
    if parent is not None and parent.code in ESCALATION_TARGETS:
        return parent
    return None


class EscalationPolicy:
    """Thresholds: per object, per store for its pages, per transaction, and per level."""

    def __init__(self, default: int | None):
        default = _check(default)
        self.levels: dict[str, int | None] = {"p": default, "s": default}  # the manager's, per level
        self._objects: dict[LockId, int | None] = {}
        self._store_pages: dict[LockId, int | None] = {}  # store -> the page level of its pages
        self._owners: dict[int, int | None] = {}

    @property
    def default(self) -> int | None:
        return self.levels["p"]

    def set_object(self, lock_id: LockId, threshold: int | None) -> None:
        self._objects[lock_id] = _check(threshold)

    def set_levels(self, to_page: Any = KEEP, to_store: Any = KEEP, store: LockId | None = None) -> None:
        """The page and store levels' thresholds, of the manager or (``store``) of one store."""
        for code, value in (("p", to_page), ("s", to_store)):
            if value is KEEP:
                continue
            if store is None:
                self.levels[code] = _check(value)
            elif code == "p":
                self._store_pages[store] = _check(value)
            else:
                self._objects[store] = _check(value)

    def set_owner(self, txn_id: int, threshold: int | None) -> None:
        self._owners[txn_id] = _check(threshold)

    def forget_owner(self, txn_id: int) -> None:
        self._owners.pop(txn_id, None)

    def threshold(self, target: LockId, txn_id: int) -> int | None:
        value = self._objects.get(target, _UNSET)
        if value is _UNSET and target.code == "p":
            value = self._store_pages.get(target.parent(), _UNSET)  # type: ignore[arg-type]
        if value is _UNSET:
            value = self._owners.get(txn_id, _UNSET)
        if value is _UNSET:
            value = self.levels[target.code]
        return value  # type: ignore[return-value]


def _check(threshold: int | None) -> int | None:
    """A threshold as kept: a positive count, or None for "never" (0 also means never)."""
    if threshold is None or threshold == 0 and not isinstance(threshold, bool):
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1:
        from minidb.pagestore.lock.errors import BadLockRequest

        raise BadLockRequest(f"an escalation threshold must be a positive integer, or 0 or None (never), "
                             f"not {threshold!r}")
    return threshold
