"""``minidb crashtest ENGINE --seed N --ops N``: crash at every point, check recovery.

:data:`SWEEPS` names each ENGINE (``log``, ``volume``, ``pagestore``,
``btree``, ``rtree``, ``logstore``, ``replication``, ``rollback``, ``group``); the
module :mod:`minidb.crashtest`.ENGINE has the ``crash_sweep(seed, ops)`` that
runs a seeded workload on a :class:`~minidb.io.SimDisk`, crashes a copy of
the disk at every write, truncate and fsync (torn and random variants too),
recovers, and checks the result against what must have survived.
``--seeds K`` runs seeds N .. N+K-1 with a progress bar on stderr. A seed is a
non-negative integer below 2**63 and ``--seeds`` is 1 to 100,000
(:func:`minidb.cli.common.seed_arg`): one line and exit code 2 otherwise. The last
line is the summed :class:`~minidb.crashtest.sweep.SweepResult`, e.g. for
``minidb crashtest log --seed 1 --ops 50``::

    crash points: 228, violations: 0

``--exhaustive`` (``group`` only; the other engines' tests are exhaustive
already) makes the group's test enumerate its crash points instead of
sampling them: each seed is run once without a crash to list each node's disk
events, then again for every node, every event of it and every crash mode,
the node crashing there (:func:`~minidb.crashtest.group.exhaustive_sweep`).
``minidb crashtest group --seed 1 --seeds 2 --ops 30 --exhaustive`` prints,
after about 75 s of one core::

    crash points: 656, violations: 0

``--background`` (``pagestore`` only) runs the workload of each seed with the page
store's checkpoint thread and page cleaner on and crashes the disk live,
while they run, at a seeded point; one crash point per seed
(:mod:`minidb.crashtest.pagestore_background`). ``minidb crashtest pagestore
--background --seeds 20`` prints::

    crash points: 20, violations: 0

``--volumes 2`` (``pagestore`` only) runs the page store's workload on two
volumes, its files on both, its model checking both
(:mod:`minidb.crashtest.pagestore_workload`).

Exit code 0 without violations, 1 with any (the first ``--show`` are printed).
``--impl fast`` runs the engine with its accelerated twins from
``minidb/fast/``, ``--impl student`` with the exercises' ``student.py``
functions where they plug in, and ``--impl student --project NAME`` with a
course project's class wherever the engine builds that component (see
:mod:`minidb.impl`); the reference runs otherwise.
"""

from __future__ import annotations

import importlib
import sys

from tqdm import tqdm

from minidb.cli.common import SEED_LIMIT, add_impl_option, int_at_least, non_negative_int, seed_arg, seed_count
from minidb.crashtest.sweep import SweepResult
from minidb.errors import UserError

# A larger workload crashes at so many points that one seed takes hours.
MAX_OPS = 10_000

# Engine name -> what its crash test crashes; minidb.crashtest.<engine> holds its crash_sweep(seed, ops),
# imported on use.
SWEEPS: dict[str, str] = {
    "log": "appends to the shared log",
    "volume": "the page store's volume and its maps (redo)",
    "pagestore": "the page store's transactions (ARIES restart)",
    "btree": "the page store's B+trees",
    "rtree": "the page store's R*-trees",
    "logstore": "the log store",
    "replication": "the VLSN index of a replicated environment",
    "rollback": "a syncup rollback of a rejoining node",
    "group": "a group of three nodes: failovers, partitions, node crashes",
}

# The engines whose crash test samples its crash points, and can enumerate them all with --exhaustive
# (the module's exhaustive_sweep(seed, ops)).
SAMPLED = ("group",)
# The engines whose crash test can run with background threads, crashed live (minidb.crashtest.<engine>_background).
BACKGROUND = ("pagestore",)


# The engines whose workload can run on several volumes (--volumes), and the most it may ask for.
VOLUMES = ("pagestore",)
MAX_VOLUMES = 4


def sweep(engine: str, seed: int, ops: int, exhaustive: bool = False, background: bool = False,
          volumes: int = 1) -> SweepResult:
    module = importlib.import_module(f"minidb.crashtest.{engine}{'_background' if background else ''}")
    if exhaustive:
        return module.exhaustive_sweep(seed, ops)
    return module.crash_sweep(seed, ops, volumes=volumes) if volumes != 1 else module.crash_sweep(seed, ops)


def register(commands) -> None:
    p = commands.add_parser("crashtest", help="crash a random workload at every write and fsync")
    p.add_argument("engine", choices=sorted(SWEEPS), help="what to crash")
    p.add_argument("--seed", type=seed_arg, default=1, help="seed of the first workload (default 1; 0 to 2**63-1)")
    p.add_argument("--seeds", type=seed_count, default=1,
                   help="how many workloads, seeds N, N+1, ... (default 1, at most 100,000)")
    p.add_argument("--ops", type=int_at_least(1, MAX_OPS, " (every write of the workload is a crash point)"),
                   default=50, help=f"operations per workload (default 50, at most {MAX_OPS:,})")
    p.add_argument("--show", type=non_negative_int, default=5, help="violations to print (default 5)")
    p.add_argument("--exhaustive", action="store_true",
                   help="group only: crash each node at every one of its disk events, in every crash mode, "
                        "instead of the few points a seed draws (a rerun of the group per point)")
    p.add_argument("--background", action="store_true",
                   help="pagestore only: run the checkpoint thread and the page cleaner, and crash the disk "
                        "while they run (one crash point per seed)")
    p.add_argument("--volumes", type=int_at_least(1, MAX_VOLUMES), default=1,
                   help=f"pagestore only: the volumes its workload runs on (default 1, at most {MAX_VOLUMES})")
    add_impl_option(p)
    p.set_defaults(run=run)


def run(args) -> int:
    if args.exhaustive and args.engine not in SAMPLED:
        raise UserError(f"--exhaustive is for {', '.join(SAMPLED)}: the {args.engine} crash test enumerates "
                        "every crash point already")
    if args.background and args.engine not in BACKGROUND:
        raise UserError(f"--background is for {', '.join(BACKGROUND)}: the {args.engine} engine has no "
                        "background threads")
    if args.background and args.exhaustive:
        raise UserError("--background and --exhaustive do not go together: a live crash is one point per seed")
    if args.volumes != 1 and args.engine not in VOLUMES:
        raise UserError(f"--volumes is for {', '.join(VOLUMES)}: the {args.engine} crash test runs on one volume")
    if args.background and args.volumes != 1:
        raise UserError("--background and --volumes do not go together yet: the live crash runs on one volume")
    if args.seed + args.seeds > SEED_LIMIT:
        raise UserError(f"--seed {args.seed} --seeds {args.seeds}: the last seed, {args.seed + args.seeds - 1}, "
                        f"is not below 2**63")
    total = SweepResult()
    seeds = range(args.seed, args.seed + args.seeds)
    for seed in tqdm(seeds, desc=f"crashtest {args.engine}", unit="seed", disable=len(seeds) == 1, file=sys.stderr):
        total.add(sweep(args.engine, seed, args.ops, args.exhaustive, args.background, args.volumes))
    for violation in total.violations[: args.show]:
        print(f"violation: {violation}")
    print(total.summary())
    return 0 if total.ok else 1
