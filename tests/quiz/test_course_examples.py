"""docs/COURSE.md's examples of ``minidb quiz`` stay true: every line they show is in today's output."""

import re
from pathlib import Path

import pytest

from minidb.quiz import TOPICS, quiz

COURSE = Path(__file__).resolve().parents[2] / "docs" / "COURSE.md"


def example(name: str) -> list[str]:
    text = COURSE.read_text(encoding="utf-8")
    m = re.search(rf"^\*\*{re.escape(name)}\*\*, `minidb quiz --topic {re.escape(name)} --seed 1 --answers`.*?\n"
                  r"```text\n(.*?)```", text, re.MULTILINE | re.DOTALL)
    assert m, f"docs/COURSE.md has no example of {name}"
    return m.group(1).splitlines()


@pytest.mark.parametrize("name", TOPICS)
def test_every_line_of_the_course_example_is_in_the_output(name):
    output = quiz(name, 1).text(answers=True).splitlines()
    shown = [line for line in example(name) if line not in ("...", "| ... |")]
    assert len(shown) > 10
    missing = [line for line in shown if line not in output]
    assert not missing, f"docs/COURSE.md's example of {name} is out of date: {missing[:3]}"
