"""``minidb crashtest ENGINE --seed N --ops N``: crash at every point, check recovery."""

from __future__ import annotations

import sys
from collections.abc import Callable

from tqdm import tqdm

from minidb.cli.common import positive_int
from minidb.io.sweep import SweepResult


def _log_sweep(seed: int, ops: int) -> SweepResult:
    from minidb.log.crashtest import crash_sweep

    return crash_sweep(seed, ops)


def _volume_sweep(seed: int, ops: int) -> SweepResult:
    from minidb.pagestore.crashtest import crash_sweep

    return crash_sweep(seed, ops)


def _logstore_sweep(seed: int, ops: int) -> SweepResult:
    from minidb.logstore.crashtest import crash_sweep

    return crash_sweep(seed, ops)


def _replication_sweep(seed: int, ops: int) -> SweepResult:
    from minidb.replication.crashtest import crash_sweep

    return crash_sweep(seed, ops)


SWEEPS: dict[str, Callable[[int, int], SweepResult]] = {
    "log": _log_sweep, "volume": _volume_sweep, "logstore": _logstore_sweep, "replication": _replication_sweep,
}


def register(commands) -> None:
    p = commands.add_parser("crashtest", help="crash a random workload at every write and fsync")
    p.add_argument("engine", choices=sorted(SWEEPS), help="what to crash")
    p.add_argument("--seed", type=int, default=1, help="seed of the first workload (default 1)")
    p.add_argument("--seeds", type=positive_int, default=1, help="how many workloads, seeds N, N+1, ... (default 1)")
    p.add_argument("--ops", type=positive_int, default=50, help="operations per workload (default 50)")
    p.add_argument("--show", type=int, default=5, help="violations to print (default 5)")
    p.set_defaults(run=run)


def run(args) -> int:
    total = SweepResult()
    seeds = range(args.seed, args.seed + args.seeds)
    for seed in tqdm(seeds, desc=f"crashtest {args.engine}", unit="seed", disable=len(seeds) == 1, file=sys.stderr):
        total.add(SWEEPS[args.engine](seed, args.ops))
    for violation in total.violations[: args.show]:
        print(f"violation: {violation}")
    print(total.summary())
    return 0 if total.ok else 1
