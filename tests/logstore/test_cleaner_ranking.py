"""The cleaner's file choice kept as the counts change (cleaner/selector.py's FileRanking): the same choices as
select_file over every file's summary, without looking at every file for each choice."""

import random

from minidb.io import SimDisk
from minidb.logstore import Environment
from minidb.logstore.cleaner import select_file
from minidb.logstore.cleaner.utilization import FileSummary

from tests.logstore.helpers import small_config


def churned_env(name: str, rounds: int = 6, keys: int = 120) -> Environment:
    """Every record rewritten ``rounds`` times, in 2 KiB log files: most of the log obsolete, ~30 files."""
    env = Environment.open(SimDisk(name), small_config(file_max=2048, node_max_entries=16, trace=False))
    db, rng = env.database("t"), random.Random(2010)
    for round_ in range(rounds):
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
        for i in range(60):
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
