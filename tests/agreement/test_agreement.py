"""The agreement test: every accelerated twin in ``minidb/fast/`` does what its reference does.

For each hot spot with a twin (a piece of the reference declared with
:func:`minidb.impl.hot_spot`), every scenario that covers it runs twice on
the same seeds: once with the reference alone, once with that one twin in
its place (``--impl fast:NAME``), and once more with every twin at once
(``--impl fast``, how ``make bench`` and the fast crash sweeps run). The
results, the files' bytes, the disk's write and fsync events, the answers
and counters the scenario collects, must be equal. CPython tests
``_pydecimal`` and ``_decimal`` the same way: one test, both modules.

The test also keeps the registry honest: every module under ``minidb/fast/``
is a twin of some declared hot spot, every hot spot's twin exists, and every
hot spot with a twin is covered by at least one scenario (a component declared
without one, as the VLSN index, has nothing to agree with).
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

import minidb
from minidb import impl

from tests.agreement.scenarios import all_scenarios

FAST = Path(minidb.__file__).parent / "fast"
FRONT_ENDS = ("minidb.cli", "minidb.viz", "minidb.spark", "minidb.fast", "minidb.__main__")


def import_the_engine() -> None:
    """Import every engine module, so that every hot spot is declared."""
    for info in pkgutil.walk_packages(minidb.__path__, "minidb."):
        if not info.name.startswith(FRONT_ENDS):
            importlib.import_module(info.name)


import_the_engine()
SCENARIOS = all_scenarios()
SPOTS = sorted((spot for spot in impl.hot_spots() if spot.has_twin), key=lambda spot: spot.name)
CASES = [(spot.name, scenario) for spot in SPOTS for scenario in SCENARIOS if spot.name in scenario.covers]
CASES += [("every twin", scenario) for scenario in SCENARIOS]


def run(scenario, seed, which, only=None):
    with impl.using(which, only=only):
        return scenario.run(seed)


@pytest.mark.parametrize("spot, scenario", CASES, ids=[f"{name}-{s.name}" for name, s in CASES])
def test_the_twin_does_what_the_reference_does(spot, scenario):
    only = None if spot == "every twin" else [spot]
    for seed in scenario.seeds:
        reference = run(scenario, seed, impl.ENGINE)
        fast = run(scenario, seed, impl.FAST, only)
        assert fast == reference, f"{spot}: {scenario.name} seed {seed}: the twin differs from the reference"


def test_every_fast_module_is_a_declared_twin_and_every_twin_exists():
    twins = {spot.fast_module for spot in SPOTS}
    modules = {info.name for info in pkgutil.walk_packages([str(FAST)], "minidb.fast.") if not info.ispkg}
    assert modules <= twins, f"modules under minidb/fast/ that stand in for no hot spot: {sorted(modules - twins)}"
    for spot in SPOTS:
        assert spot.twin() is not spot.reference, f"{spot.name}: its twin is the reference itself"


def test_every_hot_spot_is_covered_by_a_scenario():
    covered = set().union(*(s.covers for s in SCENARIOS)) if SCENARIOS else set()
    assert {spot.name for spot in SPOTS} <= covered, \
        f"hot spots no scenario exercises: {sorted({spot.name for spot in SPOTS} - covered)}"
    assert covered <= {spot.name for spot in SPOTS}, f"scenarios name unknown hot spots: {sorted(covered - {s.name for s in SPOTS})}"
