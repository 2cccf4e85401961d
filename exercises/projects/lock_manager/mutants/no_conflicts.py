"""Wrong: a new request on a lock others hold is granted at once, whatever they hold (compatibility never
consulted): two transactions change the same key, and a rollback undoes what the other one did."""

from minidb.pagestore.lock import manager as reference
from minidb.pagestore.lock.request import LockRequest


class LockManager(reference.LockManager):
    def _acquire(self, st, lock_id, mode, duration, timeout, deadline, implicit=False):
        head = self._table.get(lock_id)
        if lock_id in st.locks or head is None:
            return super()._acquire(st, lock_id, mode, duration, timeout, deadline, implicit)
        request = LockRequest(st, head, mode, duration)
        head.add(request)
        self._hold(st, request)
        self._count_grant(st, lock_id, mode, implicit)
        return ("new", request)
