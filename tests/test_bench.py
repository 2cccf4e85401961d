"""The benchmark harness (bench/): which implementation of minidb each measurement runs, and what the report says.

``python -m bench`` measures the main rows under the fast implementation and
every minidb path again under the reference; ``--impl`` runs one of them
only. These tests run the harness on a fake section (no timing is asserted,
only which code ran and what the Markdown contains), and check that every
real section goes through the same two helpers.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest

from bench import __main__ as harness, report
from minidb import impl

FAKE = "bench.fake_section_for_tests"


def probe() -> str:
    """The function a fake hot spot stands for: its twin answers differently."""
    return "reference code"


@pytest.fixture
def fake_section(monkeypatch):
    """A section named ``fake`` whose one minidb path records, at each run, the implementation chosen in this
    process, the one a child process would inherit, and which of the probe's two versions runs."""
    monkeypatch.setattr(report, "_main", report._main)  # the harness's choice is put back afterwards
    monkeypatch.setattr(report, "_compare", report._compare)
    monkeypatch.setattr(impl, "_hot_spots", {})
    monkeypatch.setattr(probe, "__module__", "minidb.bench_probe")
    twin = types.ModuleType("minidb.fast.bench_probe")
    twin.probe = lambda: "twin code"
    monkeypatch.setitem(sys.modules, "minidb.fast.bench_probe", twin)
    spot = impl.hot_spot(probe)
    runs: list[tuple[str, str | None, str]] = []

    def measure() -> float:
        runs.append((impl.mode(), os.environ.get(impl.ENV_VAR), impl.current(probe)()))
        return 2.0 if impl.mode() == impl.FAST else 4.0  # seconds: the fast run "twice as fast"

    def run() -> str:
        main, reference = report.both(measure)
        return "\n".join([
            "## Fake section",
            "",
            f"Measured {report.run_date()} on {report.machine_line()}.",
            "",
            report.speedup_table([report.Speedup("(a) the probe", "s", main, reference, higher_is_faster=False)]),
        ])

    module = types.ModuleType(FAKE)
    module.run = run
    monkeypatch.setitem(sys.modules, FAKE, module)
    monkeypatch.setitem(harness.SECTIONS, "fake", FAKE)
    assert spot.reference is probe
    return runs


def run_harness(tmp_path: Path, *args: str) -> str:
    """The fake section as the harness wrote it into a new ``--out`` file."""
    out = tmp_path / "BENCHMARKS.md"
    assert harness.main([*args, "--out", str(out), "fake"]) == 0
    begin, end = report.markers("fake")
    return out.read_text(encoding="utf-8").split(begin)[1].split(end)[0]


def test_default_run_measures_each_minidb_path_under_fast_and_reference(fake_section, tmp_path):
    before = os.environ.get(impl.ENV_VAR)
    text = run_harness(tmp_path)
    assert sorted(fake_section) == [("fast", "fast", "twin code"), ("reference", "reference", "reference code")]
    assert "minidb's fast implementation (`--impl fast`)" in text  # the intro line names the main rows' implementation
    assert "| minidb path | fast | reference | fast ÷ reference |" in text
    assert "| (a) the probe | 2 s | 4 s | 2.00× |" in text  # a speed ratio: the fast run took half the time
    assert os.environ.get(impl.ENV_VAR) == before


def test_impl_reference_measures_the_reference_only(fake_section, tmp_path):
    text = run_harness(tmp_path, "--impl", "reference")
    assert fake_section == [("reference", "reference", "reference code")]
    assert "minidb's reference implementation (`--impl reference`)" in text
    assert report.SPEEDUP_COLUMN not in text


def test_impl_fast_measures_the_fast_implementation_only(fake_section, tmp_path):
    text = run_harness(tmp_path, "--impl", "fast")
    assert fake_section == [("fast", "fast", "twin code")]
    assert report.SPEEDUP_COLUMN not in text


def test_the_mode_and_environment_are_restored_after_a_measurement(fake_section, tmp_path, monkeypatch):
    monkeypatch.setenv(impl.ENV_VAR, "reference")
    with impl.using("reference"):
        run_harness(tmp_path)
        assert impl.mode() == "reference"
    assert os.environ[impl.ENV_VAR] == "reference"


def test_both_alternates_which_implementation_runs_first(monkeypatch):
    monkeypatch.setattr(report, "_main", report.FAST)
    monkeypatch.setattr(report, "_compare", True)
    order: list[str] = []
    for _ in range(2):
        report.both(lambda: order.append(impl.mode()))
    assert order in (["fast", "reference", "reference", "fast"], ["reference", "fast", "fast", "reference"])


def test_speedup_is_how_many_times_faster_fast_ran():
    assert report.Speedup("rate", "ops/s", 300.0, 100.0).ratio == 3.0
    assert report.Speedup("time", "s", 1.0, 3.0, higher_is_faster=False).ratio == 3.0
    assert report.Speedup("only fast", "s", 1.0, None).ratio is None


def test_every_section_measures_minidb_under_both_and_reports_the_ratio():
    root = Path(report.REPO_ROOT)
    for name, module in harness.SECTIONS.items():
        source = (root / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8")
        assert "report.machine_line()" in source, f"section {name} does not say which machine it ran on"
        if name in harness.MAIN_ONLY:
            assert "report.both" not in source and "Only the main implementation" in source, name
            continue
        assert "report.both" in source, f"section {name} measures no minidb path under both implementations"
        assert "report.speedup_table(" in source, f"section {name} reports no fast ÷ reference table"


def test_the_rtree_section_measures_three_systems_that_agree_on_every_window(tmp_path):
    """The R*-tree bench compares rates only after checking that minidb, sqlite3's R*Tree and the brute force
    return as many boxes for every window; here on a small workload, with the windows large enough to hold
    some boxes."""
    import random

    from bench import rtree_bench

    boxes, windows = rtree_bench._workload(random.Random(1))
    boxes, windows = boxes[:300], [w._replace(xhi=w.xhi + 2000, yhi=w.yhi + 2000) for w in windows[:20]]
    mine = rtree_bench._minidb(str(tmp_path), boxes, windows)
    theirs = rtree_bench._sqlite(str(tmp_path), boxes, windows)
    brute = rtree_bench._brute(boxes, windows)
    assert mine["answers"] == theirs["answers"] == brute["answers"] and sum(brute["answers"]) > 20
    assert 1 <= mine["pages"] < 300 // 224 + 2


def test_interleaved_runs_each_system_once_per_round():
    order: list[str] = []
    results = report.interleaved({name: (lambda name=name: order.append(name) or len(order)) for name in "abc"},
                                 repeats=3)
    assert order == list("abcabcabc")
    assert results == {"a": [1, 4, 7], "b": [2, 5, 8], "c": [3, 6, 9]}
    assert report.REPEATS >= 5


@pytest.fixture
def tiny(monkeypatch):
    """Sections whose sizes read ``$MINIDB_BENCH_SCALE``, reloaded at a tiny scale with one run per figure;
    reloaded at their own sizes afterwards."""
    import importlib

    from bench import peers_bench, scaling_bench
    monkeypatch.setenv(report.SCALE_VAR, "0.001")
    monkeypatch.setattr(report, "REPEATS", 1)
    modules = [importlib.reload(peers_bench), importlib.reload(scaling_bench)]
    yield modules
    monkeypatch.undo()
    for module in modules:
        importlib.reload(module)


def test_the_peers_section_runs_tiny_and_notes_the_peers_it_could_not_import(tiny, monkeypatch):
    """Durus and LMDB made impossible to import (as where the bench extra is not installed): their rows are
    replaced by a one-line note each, and the targets that need Durus say it was not measured."""
    from bench import peers
    peers_bench = tiny[0]
    monkeypatch.setitem(sys.modules, "durus", None)
    monkeypatch.setitem(sys.modules, "lmdb", None)
    markdown = peers_bench.run()
    assert "Durus skipped: `import durus` failed" in markdown and "LMDB skipped: `import lmdb` failed" in markdown
    rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    for name in (peers.LOGSTORE, peers.PAGESTORE, peers.SQLITE):
        assert any(row.startswith(f"| {name} |") for row in rows), name
    assert not any(row.startswith(("| Durus |", "| LMDB |")) for row in rows)
    assert "| puts, log store |" in markdown and "| gets, page-store B+tree |" in markdown
    assert "| minidb log store: gets ÷ Durus | ≥ 1× | — | not measured |" in markdown
    target = next(row for row in rows if row.startswith("| minidb log store: gets ÷ sqlite3 |"))
    assert ("✓" in target) != ("✗" in target)


def test_the_scaling_section_runs_tiny_and_checks_its_targets(tiny, monkeypatch):
    scaling_bench = tiny[1]
    monkeypatch.setattr(scaling_bench, "FRAMES", (16, 64))
    markdown = scaling_bench.run()
    assert "| keys | page-store B+tree get µs |" in markdown
    assert "| frames | clean pool µs | dirty pool µs |" in markdown and "| 64 |" in markdown
    assert "entries read/s" in markdown and "cleaned MB/s" in markdown
    assert "| engine | N | points at N | s at N | points at 2N | s at 2N | 2N ÷ N |" in markdown
    assert all(f"| {engine} | {ops} |" in markdown for engine, ops in scaling_bench.SWEEP_OPS.items())
    targets = [line for line in markdown.splitlines() if line.startswith(("| clean miss", "| dirty miss",
                                                                          "| recovery", "| cleaner", "| crash sweep"))]
    assert len(targets) == 5 + len(scaling_bench.SWEEP_OPS) and all(("✓" in row) != ("✗" in row) for row in targets)


def test_the_scaling_section_runs_only_the_parts_named(tiny, monkeypatch):
    """``MINIDB_SCALING_PARTS=c``: recovery alone, its table and its two targets; an unknown letter is refused."""
    scaling_bench = tiny[1]
    monkeypatch.setenv(scaling_bench.PARTS_VAR, "c")
    for part in ("operations", "misses", "cleanings", "sweeps"):
        monkeypatch.setattr(scaling_bench, part, lambda progress, part=part: pytest.fail(f"{part} ran"))
    markdown = scaling_bench.run()
    assert "entries read/s" in markdown and "Only part c ran here." in markdown
    assert "page-store B+tree get µs" not in markdown and "clean pool µs" not in markdown
    targets = [line for line in markdown.splitlines() if line.startswith(("| clean miss", "| recovery", "| cleaner",
                                                                          "| crash sweep"))]
    assert [row.split(" |")[0] for row in targets] == ["| recovery entries/s at 0.02 MB ÷ at 0.001 MB",
                                                       "| recovery entries/s at 0.02 MB"]
    monkeypatch.setenv(scaling_bench.PARTS_VAR, "cx")
    with pytest.raises(SystemExit, match="MINIDB_SCALING_PARTS"):
        scaling_bench.parts()
