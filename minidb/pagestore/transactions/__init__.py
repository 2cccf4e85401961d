"""Transactions: state and log chain, the lock step, rollback with CLRs, freeing space at commit, two-phase commit.

=================  ============================================================
``xct.py``         a transaction: tid, state, log chain, undo-next, space it frees
``xctmgr.py``      begin, commit (durable or not), abort, savepoints, the table
``rollback.py``    undo an entry, log its CLR; roll back to a savepoint or all
``freespace.py``   commit-time store destruction and extent freeing
``loadstores.py``  LOAD and INSERT stores made regular at commit, their pages forced
``locking.py``     the lock step of the protocol: NoLocking, ShoreLocking; the
                   allocation protocol's locks (AllocationLocks)
``quark.py``       quarks: release the locks taken in a block (Shore's sm_quark_t)
``prepare.py``     two-phase commit: the prepare entries, reading them back
=================  ============================================================
"""
