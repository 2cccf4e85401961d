"""The topics: at least eight, each deterministic per seed and different across seeds; bad requests are
user errors."""

import pytest

from minidb.errors import UserError
from minidb.quiz import TOPICS, quiz, topic_lines

SEEDS = (1, 2, 3)


def test_at_least_eight_topics_each_listed_on_one_line():
    assert len(TOPICS) >= 8
    lines = topic_lines()
    assert [line.split()[0] for line in lines] == list(TOPICS)
    assert all(len(line.split()) > 3 for line in lines)


@pytest.mark.parametrize("name", TOPICS)
def test_the_same_seed_gives_the_same_text_and_two_seeds_differ(name):
    texts = [quiz(name, seed).text(answers=True) for seed in SEEDS]
    assert texts[0] == quiz(name, SEEDS[0]).text(answers=True)
    problems = {quiz(name, seed).problem for seed in SEEDS}
    assert len(problems) == len(SEEDS)
    assert all(text.count("\n| ") >= 3 for text in texts)  # the problem has a table to read


@pytest.mark.parametrize("name", TOPICS)
def test_a_problem_is_small_enough_to_solve_by_hand(name):
    for seed in SEEDS:
        rows = quiz(name, seed).problem.count("\n| ")
        assert rows <= 60, (name, seed, rows)


@pytest.mark.parametrize("seed", [-1, 2**63, True, "1"])
def test_a_bad_seed_is_a_user_error(seed):
    with pytest.raises(UserError, match="bad seed"):
        quiz("vlsn-bucket", seed)


def test_an_unknown_topic_is_a_user_error_naming_the_topics():
    with pytest.raises(UserError, match="unknown topic 'aries'.*aries-analysis"):
        quiz("aries", 1)


def test_the_extreme_seeds_work():
    assert quiz("aries-analysis", 0).problem != quiz("aries-analysis", 2**63 - 1).problem
