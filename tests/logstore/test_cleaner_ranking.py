"""The cleaner's file choice kept as the counts change (cleaner/selector.py's FileRanking): the same choices as
select_file over every file's summary, without looking at every file for each choice; and a run of the fast
cleaner, with the cyclic collector paused, whose cost per file does not grow with the log either."""

import gc
import random

import pytest

from minidb import impl
from minidb.errors import LogCorruptionError
from minidb.io import SimDisk
from minidb.logstore import Environment
from minidb.logstore.cleaner import select_file
from minidb.logstore.cleaner.selector import FileRanking
from minidb.logstore.cleaner.utilization import FileSummary

from tests.logstore.helpers import collections_during, small_config


def churned_env(name: str, rounds: int = 6, keys: int = 120) -> Environment:
    """Every record rewritten ``rounds`` times, in 2 KiB log files: most of the log obsolete, ~30 files."""
    env = Environment.open(SimDisk(name), small_config(file_max=2048, node_max_entries=16, trace=False))
    db, rng = env.database("t"), random.Random(2010)
    for _ in range(rounds):
        for i in range(keys):
            db.put(f"k{i:04d}", rng.randbytes(8 + rng.randrange(24)))
    env.checkpoint()
    return env


def test_the_ranking_makes_the_choices_select_file_makes_on_a_seeded_workload(monkeypatch):
    env = churned_env("same-choices")
    cleaner, config = env.cleaner, env.config
    chosen_rounds = []
    real_select = cleaner.select

    def checked_select():
        report = [s for s in env.utilization.report() if s.file_number not in cleaner.cleaned]
        expected = select_file(report, cleaner.is_candidate, config.cleaner_min_utilization,
                               config.cleaner_min_file_utilization)
        got = real_select()
        assert got == expected
        return got

    monkeypatch.setattr(cleaner, "select", checked_select)
    rng = random.Random(7)
    db = env.database("t")
    for _ in range(4):  # clean, checkpoint (deleting the cleaned files), churn some more, again
        chosen_rounds.append([c.file_number for c in env.clean_log()])
        env.checkpoint()
        for _ in range(60):
            db.put(f"k{rng.randrange(120):04d}", rng.randbytes(20))
        env.checkpoint()
    chosen = [n for r in chosen_rounds for n in r]
    assert len(chosen) >= 20 and chosen_rounds[0][:3] == sorted(chosen_rounds[0][:3])  # many, least utilized first
    env.close()


def test_a_choice_looks_only_at_the_files_whose_counts_changed(monkeypatch):
    env = churned_env("few-looks")
    files = len(env.utilization.files)
    assert files > 25
    env.clean_log(max_files=1)
    looked = []
    real = FileSummary.live_size.fget
    monkeypatch.setattr(FileSummary, "live_size", property(lambda s: looked.append(s.file_number) or real(s)))
    env.clean_log(max_files=1)  # cleaning one file changes the counts of a few (the versions it migrated)
    assert len(looked) < files // 4, (len(looked), files)  # before: every file, twice
    env.close()


class _WatchedOffsets(dict):
    """A summary's obsolete offsets that note every pass over all of them."""

    passes: list[int] = []

    def items(self):
        self.passes.append(len(self))
        return super().items()

    def values(self):
        self.passes.append(len(self))
        return super().values()


def test_a_files_next_record_and_its_utilization_do_not_go_over_all_its_offsets():
    old = [{"offset": 100 + 40 * i, "size": 40} for i in range(5000)]
    summary = FileSummary.from_values({"file_number": 3, "sequence": 0, "total_count": 5001,
                                       "total_size": 400_000, "node_count": 5000, "node_size": 200_000,
                                       "obsolete": old})
    summary.obsolete = _WatchedOffsets(summary.obsolete)
    summary.note_obsolete(300_000, 64)  # one offset more since the file's last record
    assert summary.next_record()["obsolete"] == [{"offset": 300_000, "size": 64}]
    assert summary.live_size == 400_000 - 5000 * 40 - 64 and summary.utilization == summary.live_size / 400_000
    assert _WatchedOffsets.passes == []  # before: every checkpoint sorted all 5,001, every choice summed them


def test_cleaning_a_file_adds_to_the_cleaner_stats_once_per_counter_not_once_per_entry(monkeypatch):
    env = churned_env("tally")
    adds = []
    real_add = env.cleaner.stats.add
    monkeypatch.setattr(env.cleaner.stats, "add", lambda name, amount=1: adds.append(name) or real_add(name, amount))
    done = env.clean_log(max_files=1)
    read = env.cleaner.stats["nCleanerEntriesRead"]
    assert done and read > 20
    assert len(adds) == len(set(adds)) <= 6, adds  # before: two per entry read
    env.close()


def test_the_files_cleaned_before_a_checkpoint_are_not_looked_at_again_by_each_choice(monkeypatch):
    env = churned_env("left-out", rounds=8, keys=200)
    ranking, looks = env.cleaner.ranking, []
    real = FileRanking._is_current
    monkeypatch.setattr(FileRanking, "_is_current", lambda self, place: looks.append(place[1]) or real(self, place))
    real_select = env.cleaner.select
    per_choice = []

    def counted_select():
        looks.clear()
        chosen = real_select()
        per_choice.append(len(looks))
        return chosen

    monkeypatch.setattr(env.cleaner, "select", counted_select)
    cleaned = [c.file_number for c in env.clean_log()]  # no checkpoint: every file cleaned stays, waiting
    assert len(cleaned) > 30
    assert max(per_choice) < 5, per_choice  # before: each choice passed over every file cleaned so far
    assert ranking.left_out == set(cleaned) and ranking.total == sum(
        s.total_size for s in env.utilization.report() if s.file_number not in cleaned)
    env.close()


def test_the_fast_cleaner_runs_with_the_collector_paused():
    """Each file's entries and each file's verdicts live through the run: with the collector on, it walks the
    whole heap (the tree, the utilization records: the size of the log) again every few dozen files."""
    with impl.using(impl.FAST):
        env = churned_env("paused", rounds=8, keys=200)
        done, collections = collections_during(env.clean_log)
    assert len(done) > 30
    assert len(collections) <= 1, collections  # the one after the pause, at most; before: one every few files
    assert gc.isenabled()
    env.close()


def test_the_collector_is_back_on_after_a_run_that_fails(monkeypatch):
    with impl.using(impl.FAST):
        env = churned_env("fails")

    def damaged(number):
        assert not gc.isenabled()
        raise LogCorruptionError("00000003.jdb", 64, "bad checksum")

    monkeypatch.setattr(env.cleaner, "clean_file", damaged)
    with pytest.raises(LogCorruptionError):
        env.clean_log()
    assert gc.isenabled()
    monkeypatch.undo()
    env.close()
