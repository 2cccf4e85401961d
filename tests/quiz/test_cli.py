"""``minidb quiz``: --list, --topic, --seed, --answers; bad input is one line and exit code 2."""

import pytest

from minidb.cli import main
from minidb.quiz import TOPICS, quiz


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_names_every_topic_one_a_line(capsys):
    code, out, err = run(capsys, "quiz", "--list")
    assert code == 0 and err == ""
    assert [line.split()[0] for line in out.splitlines()] == list(TOPICS)


def test_topic_prints_the_problem_without_the_answer(capsys):
    code, out, err = run(capsys, "quiz", "--topic", "aries-undo", "--seed", 4)
    assert code == 0 and err == ""
    assert out == quiz("aries-undo", 4).text()
    assert "## Answer" not in out and "| LSN" in out


def test_answers_adds_the_worked_answer(capsys):
    code, out, err = run(capsys, "quiz", "--topic", "matchpoint", "--seed", 4, "--answers")
    assert code == 0
    assert out == quiz("matchpoint", 4).text(answers=True)
    assert "## Answer" in out and "matchpoint VLSN" in out


def exit_code(capsys, *argv):
    """The exit code of ``minidb`` (an argparse usage error exits; a user error returns), with stdout, stderr."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv", [
    ("--topic", "nosuch"),
    ("--topic", "vlsn-bucket", "--seed", "-1"),
    ("--topic", "vlsn-bucket", "--seed", str(2**63)),
    ("--topic", "vlsn-bucket", "--seed", "x"),
    (),
], ids=["unknown-topic", "negative-seed", "seed-2**63", "seed-not-a-number", "no-topic"])
def test_bad_input_is_one_line_and_exit_code_2(capsys, argv):
    code, out, err = exit_code(capsys, "quiz", *argv)
    assert code == 2
    assert out == "" and len(err.splitlines()) == 1 and err.startswith("minidb quiz: error: "), err
