"""Wrong: a transaction holding any lock on an ancestor (an intention lock IX included) is taken to hold
every lock below it implicitly. Only EX (everything), and SH, SIX, UD (reads), cover what lies below; an
intention lock only says that locks are taken below. Two writers of a store then share every key."""

from minidb.pagestore.lock import manager as reference


class LockManager(reference.LockManager):
    def _missing_ancestors(self, st, lock_id, mode, duration):
        missing = super()._missing_ancestors(st, lock_id, mode, duration)
        if missing is not None and any(ancestor in st.locks for ancestor in lock_id.ancestors()):
            return None  # "covered" by an intention lock
        return missing
