"""``make sweep`` (scripts/sweep.py): workloads in worker processes, a table in RELIABILITY.md, exit 1 on violations."""

import importlib.util
import sys
from pathlib import Path

import pytest

import minidb.crashtest.log

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "sweep.py"


@pytest.fixture(scope="module")
def sweep_script():
    spec = importlib.util.spec_from_file_location("minidb_sweep_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # the worker processes find run_seed by this name
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_item10_sweep_writes_the_table_between_the_markers(sweep_script, tmp_path, capsys):
    out = tmp_path / "RELIABILITY.md"
    out.write_text("# Reliability\n\nBefore.\n\n" + sweep_script.BEGIN + "\nold table\n" + sweep_script.END
                   + "\n\nAfter.\n")
    assert sweep_script.main(["--seeds", "3", "--workers", "2", "--only", "log", "volume", "--out", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("# Reliability\n\nBefore.\n\n") and text.endswith("\n\nAfter.\n")
    assert "old table" not in text
    rows = {line.split(" | ")[0]: line.split(" | ") for line in text.splitlines() if line.startswith("| log")
            or line.startswith("| volume")}
    points = sum(minidb.crashtest.log.crash_sweep(seed, 40).points for seed in (1, 2, 3))
    assert rows["| log"][1:5] == ["3", "40", f"{points:,}", "0"]  # the same points as the crashtest command
    assert rows["| volume"][1:3] == ["3", "40"]
    assert "on 2 worker processes" in text and "| log |" in capsys.readouterr().out


def test_item10_sweep_exits_1_and_shows_violations_with_seed_and_point(sweep_script, tmp_path, capsys, monkeypatch):
    # A log whose checker believes more entries were synced than ever were: every point is a violation.
    monkeypatch.setattr(minidb.crashtest.log, "_promised_at", lambda workload, index: 10 ** 6)
    out = tmp_path / "RELIABILITY.md"
    assert sweep_script.main(["--seeds", "2", "--workers", "2", "--only", "log", "--out", str(out)]) == 1
    shown = [line for line in capsys.readouterr().out.splitlines() if line.startswith("violation: ")]
    assert len(shown) == sweep_script.SHOW
    assert all(line.startswith("violation: seed ") and "crash after #" in line and "were synced" in line
               for line in shown)
    assert sweep_script.BEGIN in out.read_text() and "| log | 2 | 40 |" in out.read_text()


def test_item10_an_interrupted_sweep_still_writes_what_it_ran(sweep_script, tmp_path, capsys, monkeypatch):
    real = sweep_script.as_completed

    def interrupted_after_two(futures):
        for n, future in enumerate(real(futures)):
            if n == 2:
                raise KeyboardInterrupt
            yield future

    monkeypatch.setattr(sweep_script, "as_completed", interrupted_after_two)
    out = tmp_path / "RELIABILITY.md"
    assert sweep_script.main(["--seeds", "50", "--workers", "1", "--only", "log", "--out", str(out)]) == 130
    assert "interrupted after 2 of its 50 workloads" in out.read_text()
    assert "| log | 2 | 40 |" in out.read_text()


def test_the_group_runs_20_exhaustive_seeds_and_sampled_seeds_for_20_000_points_in_proportion(sweep_script):
    assert sweep_script.seeds_for("group-exhaustive", 1000) == 20 and sweep_script.seeds_for("log", 1000) == 1000
    # about 2.5 sampled crash points a seed (RELIABILITY.md: 2,483 over 1,000 seeds)
    assert sweep_script.seeds_for("group", 1000) * 2.4 >= 20_000
    assert sweep_script.seeds_for("group-exhaustive", 3) == 1  # every run runs at least one seed
    work = sweep_script.plan(["log", "group-exhaustive"], 100)
    assert len(work) == 102 and work[:3] == [("log", 1), ("group-exhaustive", 1), ("log", 2)]
    assert work[51:53] == [("log", 51), ("group-exhaustive", 2)]  # halfway through both
    assert {name for name, _ in work} <= set(sweep_script.OPS)


def test_the_sweep_runs_the_group_s_exhaustive_mode_as_the_crashtest_command_does(sweep_script, tmp_path,
                                                                                   monkeypatch):
    from minidb.crashtest.group import exhaustive_sweep

    monkeypatch.setitem(sweep_script.OPS, "group-exhaustive", 2)  # a short workload: few crash points
    out = tmp_path / "RELIABILITY.md"
    assert sweep_script.main(["--seeds", "50", "--workers", "2", "--only", "group-exhaustive",
                              "--out", str(out)]) == 0
    points = exhaustive_sweep(1, 2).points
    assert points > 20 and f"| group-exhaustive | 1 | 2 | {points:,} | 0 |" in out.read_text()


def test_the_sweep_runs_the_page_store_with_its_threads_crashed_live(sweep_script, tmp_path, monkeypatch):
    monkeypatch.setitem(sweep_script.OPS, "pagestore-background", 10)
    out = tmp_path / "RELIABILITY.md"
    assert sweep_script.main(["--seeds", "2", "--workers", "1", "--only", "pagestore-background",
                              "--out", str(out)]) == 0
    assert "| pagestore-background | 2 | 10 | 2 | 0 |" in out.read_text()  # one crash point a seed
