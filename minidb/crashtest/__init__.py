"""Crash tests: a seeded workload crashed at every write and fsync, recovered, and checked against a model.

A crash test runs a workload chosen by a seed on a
:class:`~minidb.io.SimDisk`, which records every write, truncate and fsync.
A model follows the workload: what it wrote, what each transaction saw,
which commits and syncs had returned (promises: what they made durable must
survive any later crash). Then, for every event of the disk's history and
every way a crash can treat the writes not yet fsynced (none kept, all
kept, the last one torn, a random subset: :func:`~minidb.io.crash_points`),
a copy of the disk is crashed there, the engine opens it (which recovers),
and the result is compared with what the model says must have survived.
Anything else, an exception included, is a *violation*; ``minidb
crashtest ENGINE`` prints how many points were crashed and what was
violated. The same seed runs the same workload and crashes it at the same
points, so a violation is reproduced by its seed.

One module per crash test, named after the ``minidb crashtest`` ENGINE that
runs its ``crash_sweep(seed, ops)``::

    log          the shared log: what survives is a prefix of the appended entries holding every
                 synced one, and the log takes new entries after the crash
    volume       the page store's volume under a buffer pool: after redo, every map page is byte for
                 byte the model's (the write-ahead rule)
    pagestore    the page store's transactions and ARIES restart: the surviving commits are a prefix,
                 the files exactly their records, prepared transactions in doubt, torn pages repaired,
                 restart idempotent (a second crash during it)
    btree        the page store's B+trees: exactly the committed entries, a well-formed tree, whatever
                 split or logical undo the crash cut
    rtree        the page store's R*-trees: exactly the committed boxes, every box the union of its
                 child's, whatever split, forced reinsertion or condensing the crash cut
    logstore     the log store's recovery: exactly the committed state of the surviving log, sound
                 trees and utilization, the cleaner's and the eraser's promises kept
    replication  a replicated environment: VLSNs 1..n without gaps, the VLSN index agreeing with the log
    rollback     a syncup rollback of a rejoining node: finished or never started
    group        three nodes with failovers, partitions and node crashes: no commit a majority
                 acknowledged lost, equal records and VLSN streams (sampled, or --exhaustive)

Beside them: :mod:`.sweep` (the result of a sweep, the loop over the crash
points, a second crash during restart), :mod:`.pagestore_workload` (the page
store's workload and model) and :mod:`.script_locking` (a lock table that
refuses instead of waiting, for a single-threaded workload).

This package sits above the engines and replication, which it drives
through their public interfaces, and below the front ends (the CLI's
``crashtest`` and ``tour``, ``scripts/sweep.py``); no engine imports it.
"""
