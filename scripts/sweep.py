"""``make sweep``: every engine's crash test over many seeds, on every core, into RELIABILITY.md.

For each engine of ``minidb crashtest`` (log, volume, pagestore, btree, rtree,
logstore, replication, group) this runs ``crash_sweep(seed, ops)`` for seeds 1 .. N (1,000 by
default), the page store's with its background threads crashed live (``pagestore-background``,
``minidb crashtest pagestore --background``: one crash point a seed), the page store's workload on two
volumes (``pagestore-volumes``, ``minidb crashtest pagestore --volumes 2``) for as many, and the group's exhaustive mode (``group-exhaustive``, ``minidb crashtest
group --exhaustive``: every node crashed at every one of its disk events) for a few
seeds, in a pool of worker processes (one per core), shows one progress bar
over all the workloads, and writes a table (per engine: seeds, ops per
workload, crash points, violations, the seconds its seeds took in the
workers) between the two marker lines of ``RELIABILITY.md``, keeping the rest
of the file. ``SEEDS_PER_1000`` scales N for the runs whose seeds cost
differently: the group's sampled mode, about 2.5 crash points a seed, runs 8.5
times as many seeds (over 20,000 points); its exhaustive mode, a whole group
run per point (about 35 s a seed), one seed in 50. The workloads are handed
out in proportion, every engine's in turn, so an interrupted sweep (Ctrl-C)
has swept every engine alike: it still writes the table, saying how many
workloads it ran. Exit code 0 without violations; 1 with any, after printing
the first few with their seed and crash point; 130 when interrupted without any.

    python scripts/sweep.py [--seeds N] [--workers K] [--only ENGINE ...] [--out RELIABILITY.md]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from minidb.cli.crashtest import sweep

# Operations per workload: chosen so that 1,000 seeds of every engine take about a quarter of an
# hour on two cores (RELIABILITY.md gives the times measured).
OPS = {"log": 40, "volume": 40, "pagestore": 12, "pagestore-background": 50, "pagestore-volumes": 12, "btree": 20,
       "rtree": 15, "logstore": 12, "replication": 6, "group": 30, "group-exhaustive": 30}
# The runs that are not simply an engine's crash_sweep: run name -> (engine, exhaustive, background, volumes).
RUNS = {"group-exhaustive": ("group", True, False, 1), "pagestore-background": ("pagestore", False, True, 1),
        "pagestore-volumes": ("pagestore", False, False, 2)}
# Seeds per 1,000 of --seeds, where not 1,000.
SEEDS_PER_1000 = {"group": 8_500, "group-exhaustive": 20}
BEGIN = "<!-- sweep table: written by `make sweep` (scripts/sweep.py); edits between these lines are lost -->"
END = "<!-- end of sweep table -->"
SHOW = 5


@dataclass
class EngineTotal:
    engine: str
    ops: int
    seeds: int = 0
    points: int = 0
    violations: list[str] = field(default_factory=list)
    seconds: float = 0.0


def run_seed(name: str, seed: int, ops: int) -> tuple[str, int, list[str], float]:
    """One workload's sweep, in a worker process: (run name, crash points, violations, seconds)."""
    started = time.perf_counter()
    engine, exhaustive, background, volumes = RUNS.get(name, (name, False, False, 1))
    result = sweep(engine, seed, ops, exhaustive, background, volumes)
    return name, result.points, result.violations, time.perf_counter() - started


def seeds_for(name: str, seeds: int) -> int:
    """How many seeds run ``name`` runs when every engine runs ``seeds``."""
    return max(1, round(seeds * SEEDS_PER_1000.get(name, 1000) / 1000))


def plan(names: list[str], seeds: int) -> list[tuple[str, int]]:
    """Every (run, seed) in the order handed out: by the share of its run's seeds done, then as listed."""
    order = {name: i for i, name in enumerate(names)}
    work = [(name, seed) for name in names for seed in range(1, seeds_for(name, seeds) + 1)]
    return sorted(work, key=lambda w: ((w[1] - 1) / seeds_for(w[0], seeds), order[w[0]]))


@dataclass
class Sweep:
    totals: dict[str, EngineTotal]
    planned: int
    wall: float = 0.0
    interrupted: bool = False

    @property
    def violations(self) -> list[str]:
        return [v for t in self.totals.values() for v in t.violations]


def run(engines: list[str], seeds: int, workers: int) -> Sweep:
    work = plan(engines, seeds)
    sweep = Sweep({engine: EngineTotal(engine, OPS[engine]) for engine in engines}, len(work))
    started = time.perf_counter()
    pool = ProcessPoolExecutor(max_workers=workers)
    try:
        futures = [pool.submit(run_seed, engine, seed, OPS[engine]) for engine, seed in work]
        for future in tqdm(as_completed(futures), total=len(futures), desc="crash sweeps", unit="seed",
                           file=sys.stderr):
            engine, points, violations, seconds = future.result()
            total = sweep.totals[engine]
            total.seeds += 1
            total.points += points
            total.violations.extend(violations)
            total.seconds += seconds
    except KeyboardInterrupt:
        sweep.interrupted = True
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    sweep.wall = time.perf_counter() - started
    return sweep


def table(sweep: Sweep, workers: int) -> str:
    lines = ["| engine | seeds | ops per workload | crash points | violations | time (s) |",
             "|---|---:|---:|---:|---:|---:|"]
    for t in sweep.totals.values():
        lines.append(f"| {t.engine} | {t.seeds:,} | {t.ops} | {t.points:,} | {len(t.violations)} | {t.seconds:,.0f} |")
    lines.append("")
    lines.append(f"Time is the seconds the engine's workloads took in the workers; the whole sweep took "
                 f"{sweep.wall:,.0f} s of wall-clock time on {workers} worker processes.")
    if sweep.interrupted:
        done = sum(t.seeds for t in sweep.totals.values())
        lines.append(f"The sweep was interrupted after {done:,} of its {sweep.planned:,} workloads.")
    return "\n".join(lines)


def write_table(path: Path, text: str, begin: str = BEGIN, end: str = END) -> None:
    """Put ``text`` between the markers ``begin`` and ``end`` of ``path`` (added at the end when missing).

    ``make fuzz`` (scripts/fuzz.py) writes its table into the same file between markers of its own."""
    old = path.read_text() if path.exists() else "# Reliability\n"
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        tail = rest.split(end, 1)[1]
    else:
        head, tail = old.rstrip("\n") + "\n\n", "\n"
    path.write_text(f"{head}{begin}\n{text}\n{end}{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1000,
                        help="workloads per engine (default 1000; scaled for the group's runs, see SEEDS_PER_1000)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="worker processes (default: cores)")
    parser.add_argument("--only", nargs="+", choices=sorted(OPS), help="these engines (or runs) only")
    parser.add_argument("--out", type=Path, default=Path("RELIABILITY.md"), help="the file to write the table to")
    args = parser.parse_args(argv)
    if args.seeds < 1 or args.workers < 1:
        parser.error("--seeds and --workers must be at least 1")
    engines = args.only or list(OPS)
    sweep = run(engines, args.seeds, args.workers)
    text = table(sweep, args.workers)
    write_table(args.out, text)
    print(text)
    for violation in sweep.violations[:SHOW]:
        print(f"violation: {violation}")
    return 1 if sweep.violations else 130 if sweep.interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
