"""What the agreement test runs: seeded workloads, each naming the hot spots it exercises.

A scenario is a function of a seed that runs a small workload on a simulated
disk and returns everything an implementation could get wrong, as plain
values: the bytes of every file on the disk (log and volume, byte for byte),
the answers the workload got, the counters, the dumps. The agreement test
runs it once with the reference and once with a twin from ``minidb/fast/``
and requires the two results to be equal.

Scenarios live in the modules ``tests/agreement/scn_*.py``; each declares
its scenarios with :func:`scenario`, naming the hot spots
(:attr:`minidb.impl.HotSpot.name`) whose twins it exercises.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from minidb.io import SimDisk

SEEDS = range(1, 6)  # each scenario, each hot spot, these seeds


@dataclass(frozen=True)
class Scenario:
    name: str
    covers: frozenset[str]
    run: Callable[[int], Any]
    seeds: range = SEEDS


_scenarios: dict[str, Scenario] = {}


def scenario(*covers: str, seeds: range = SEEDS) -> Callable[[Callable[[int], Any]], Callable[[int], Any]]:
    """Declare ``run(seed)`` a scenario that exercises the twins of the hot spots ``covers``."""
    def declare(run: Callable[[int], Any]) -> Callable[[int], Any]:
        name = f"{run.__module__.rsplit('.', 1)[-1]}.{run.__name__}"
        _scenarios[name] = Scenario(name, frozenset(covers), run, seeds)
        return run
    return declare


def all_scenarios() -> list[Scenario]:
    """Every scenario of every ``scn_*.py`` module beside this one."""
    for path in sorted(Path(__file__).parent.glob("scn_*.py")):
        importlib.import_module(f"tests.agreement.{path.stem}")
    return sorted(_scenarios.values(), key=lambda s: s.name)


def disk_state(disk: SimDisk) -> dict[str, Any]:
    """What ``disk`` holds and what was done to it: every file's bytes (as read now, and as a crash would
    leave them) and the disk's events in order (each write, fsync and truncate: the crash points)."""
    files = {name: (disk.open(name).read_all(), disk.durable_bytes(name)) for name in sorted(disk.list())}
    events = [(e.kind, e.name, e.offset, e.data, e.size, e.new_name) for e in disk.events]
    return {"files": files, "events": events}
