"""The course: docs/COURSE.md maps every notebook and exercise, every check-yourself question has an answer.

- every notebook with a "Check yourself" list links, in the same cell, its answers file
  ``docs/answers/NN_topic.md``, which exists and quotes each question, in order, with an answer after it;
- a notebook without such a list may have an answers file for its **Predict** questions: it quotes each of
  them, in order, with an answer after it, and COURSE.md's section for the notebook links it;
- docs/COURSE.md has a section for every notebook, and links every exercise directory from one of them;
- what does not exist yet is listed once, in COURSE.md's section "Coming", and nowhere stays listed there
  once it exists (the test then says to take it out);
- every link of COURSE.md and of the answers resolves to a file (or a heading of the same page);
- every notebook ends by sending the reader on: to one of its exercises, or to the next notebook of the course;
- the pictures COURSE.md names for the lectures (``07_btree-3``) are pictures ``minidb figures`` can draw.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COURSE = ROOT / "docs" / "COURSE.md"
ANSWERS = ROOT / "docs" / "answers"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXERCISES = sorted(p for p in (ROOT / "exercises").iterdir() if re.fullmatch(r"\d\d[a-z]_\w+", p.name))

LINK = re.compile(r"\[([^\]]*)\]\(([^)\s#]*)(?:#([^)\s]*))?\)")
QUESTION = re.compile(r"^(\d+)\. (.*)$")
PREDICT = re.compile(r"(\*\*Predict:\*\*.*?)(?:\n\n|$)", re.S)
PICTURE = re.compile(r"`(\d\d[a-z]?_[a-z0-9_]+-\d+)`")


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"])


def plain(text: str) -> str:
    """Markdown as words: links become their text, whitespace one space (paths differ between folders)."""
    return " ".join(LINK.sub(lambda m: m.group(1), text).split())


def slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def questions(text: str) -> list[str]:
    """The numbered questions after a "## Check yourself" heading, each joined into one line."""
    found: list[str] = []
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("## Check yourself"))
    for line in lines[start + 1:]:
        if m := QUESTION.match(line):
            found.append(m.group(2))
        elif found and line.startswith("   ") and line.strip():
            found[-1] += " " + line.strip()
        elif found and not line.strip():
            break
    return [plain(q) for q in found]


def predictions(path: Path) -> list[str]:
    """The text of every **Predict:** paragraph of a notebook's markdown cells, in order, each as one line."""
    return [plain(m.group(1)) for c in cells(path) if c["cell_type"] == "markdown"
            for m in PREDICT.finditer(source(c))]


def check_yourself_cell(path: Path) -> str | None:
    return next((source(c) for c in cells(path) if c["cell_type"] == "markdown"
                 and "## Check yourself" in source(c)), None)


def answered(text: str) -> list[tuple[str, str]]:
    """(quoted question, the answer after it) for each ``##`` section of an answers file that quotes one."""
    pairs: list[tuple[str, str]] = []
    for body in re.split(r"^## .*$", text, flags=re.M)[1:]:
        lines = body.split("\n")
        quote = [line[1:].strip() for line in lines if line.startswith(">")]
        if quote:
            pairs.append((plain(" ".join(quote)), "\n".join(line for line in lines if not line.startswith(">")).strip()))
    return pairs


def sections(text: str, level: str) -> dict[str, str]:
    """Heading -> body for every heading of the given level (``##``, ``###``), code fences skipped."""
    found: dict[str, str] = {}
    heading, fenced = None, False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and re.match(r"#{1,6} ", line):
            heading = line[len(level) + 1:] if line.startswith(level + " ") else None
            if heading is not None:
                found[heading] = ""
            continue
        if heading is not None:
            found[heading] += line + "\n"
    return found


def link_targets(path: Path, text: str) -> list[tuple[Path, str]]:
    """(resolved file, anchor) of every relative link in ``text``, a markdown file at ``path``."""
    return [((path.parent / target).resolve() if target else path, anchor or "")
            for _, target, anchor in LINK.findall(text) if not target.startswith(("http:", "https:"))]


def coming() -> set[Path]:
    """What COURSE.md lists as not there yet (its section "Coming"): notebook files and exercise folders."""
    body = sections(COURSE.read_text(encoding="utf-8"), "##").get("Coming")
    if body is None:  # everything has landed: the section goes until something new is announced
        return set()
    items = {target.parent if target.name == "README.md" else target for target, _ in link_targets(COURSE, body)}
    assert items, "docs/COURSE.md: the section Coming lists nothing (delete it instead)"
    return items


def exists_or_coming(target: Path) -> bool:
    return target.exists() or target in coming() or target.parent in coming()


def notebook_sections() -> dict[str, str]:
    """Notebook stem -> the body of its ``###`` section in COURSE.md, in the course's order."""
    found: dict[str, str] = {}
    for heading, body in sections(COURSE.read_text(encoding="utf-8"), "###").items():
        first = next((t for t, _ in link_targets(COURSE, body) if t.suffix == ".ipynb"), None)
        assert first is not None, f"docs/COURSE.md: section '{heading}' links no notebook"
        found[first.stem] = body
    return found


def course_order() -> list[str]:
    """The notebooks that exist, in the order COURSE.md presents them."""
    return [stem for stem in notebook_sections() if (ROOT / "notebooks" / f"{stem}.ipynb").exists()]


# -- answers ------------------------------------------------------------------------------------------------

WITH_QUESTIONS = [p for p in NOTEBOOKS if check_yourself_cell(p) is not None]


def test_course_most_notebooks_ask_questions():
    assert len(WITH_QUESTIONS) >= 12, [p.stem for p in WITH_QUESTIONS]
    assert sum(len(questions(check_yourself_cell(p))) for p in WITH_QUESTIONS) >= 40


@pytest.mark.parametrize("path", WITH_QUESTIONS, ids=lambda p: p.stem)
def test_course_questions_link_their_answers_next_to_them(path: Path):
    cell = check_yourself_cell(path)
    link = f"(../docs/answers/{path.stem}.md)"
    assert link in cell, f"{path.name}: its Check yourself cell does not link docs/answers/{path.stem}.md"
    assert (ANSWERS / f"{path.stem}.md").exists(), f"docs/answers/{path.stem}.md does not exist"


@pytest.mark.parametrize("path", WITH_QUESTIONS, ids=lambda p: p.stem)
def test_course_answers_quote_and_answer_every_question(path: Path):
    asked = questions(check_yourself_cell(path))
    answers = ANSWERS / f"{path.stem}.md"
    pairs = answered(answers.read_text(encoding="utf-8")) if answers.exists() else []
    assert [q for q, _ in pairs] == asked, (
        f"docs/answers/{path.stem}.md must quote the {len(asked)} questions of {path.name}, in order, word for word")
    for number, (_, answer) in enumerate(pairs, start=1):
        assert len(answer.split()) >= 30, f"docs/answers/{path.stem}.md: question {number} has no real answer"


WITH_PREDICTIONS_ANSWERED = [p for p in NOTEBOOKS if check_yourself_cell(p) is None
                             and (ANSWERS / f"{p.stem}.md").exists()]


def test_course_notebooks_without_questions_have_their_predictions_answered():
    stems = {p.stem for p in WITH_PREDICTIONS_ANSWERED}
    assert {"07_btree", "10b_je_eviction_bug", "11_cleaner_eraser", "13_feeders_replicas", "16_log_space",
            "18_rtree"} <= stems


@pytest.mark.parametrize("path", WITH_PREDICTIONS_ANSWERED, ids=lambda p: p.stem)
def test_course_answers_quote_and_answer_every_prediction(path: Path):
    asked = predictions(path)
    assert asked, f"{path.name} has an answers file but neither a Check yourself list nor a Predict question"
    pairs = answered((ANSWERS / f"{path.stem}.md").read_text(encoding="utf-8"))
    assert [q for q, _ in pairs] == asked, (
        f"docs/answers/{path.stem}.md must quote the {len(asked)} Predict questions of {path.name}, in order, "
        "word for word")
    for number, (_, answer) in enumerate(pairs, start=1):
        assert len(answer.split()) >= 30, f"docs/answers/{path.stem}.md: prediction {number} has no real answer"


@pytest.mark.parametrize("path", WITH_PREDICTIONS_ANSWERED, ids=lambda p: p.stem)
def test_course_links_the_answers_of_predictions_from_the_notebooks_section(path: Path):
    body = notebook_sections()[path.stem]
    assert (ANSWERS / f"{path.stem}.md").resolve() in {t for t, _ in link_targets(COURSE, body)}, (
        f"docs/COURSE.md: the section of {path.stem} does not link docs/answers/{path.stem}.md")


def test_course_every_answers_file_belongs_to_a_notebook_with_questions():
    stems = {p.stem for p in WITH_QUESTIONS + WITH_PREDICTIONS_ANSWERED}
    assert sorted(p.stem for p in ANSWERS.glob("*.md") if p.stem not in stems) == []


# -- COURSE.md ------------------------------------------------------------------------------------------------

def test_course_maps_every_notebook():
    mapped = set(notebook_sections())
    missing = [p.stem for p in NOTEBOOKS if p.stem not in mapped]
    assert not missing, f"docs/COURSE.md has no section for the notebooks {missing}"


def test_course_maps_every_exercise_to_a_notebook():
    linked = {t.parent.name for body in notebook_sections().values() for t, _ in link_targets(COURSE, body)
              if t.name == "README.md" and t.parent.parent.name == "exercises"}
    missing = [p.name for p in EXERCISES if p.name not in linked]
    assert not missing, f"docs/COURSE.md: no notebook's section links the exercises {missing}"


def test_course_coming_lists_only_what_does_not_exist_yet():
    landed = sorted(str(p.relative_to(ROOT)) for p in coming() if p.exists())
    assert not landed, (f"{landed} exist now: take them out of the section Coming of docs/COURSE.md "
                        "and drop their '(coming)' and '*' marks")


@pytest.mark.parametrize("path", [COURSE, *sorted(ANSWERS.glob("*.md"))], ids=lambda p: p.name)
def test_course_every_link_resolves(path: Path):
    text = path.read_text(encoding="utf-8")
    anchors = {slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}
    for target, anchor in link_targets(path, text):
        assert exists_or_coming(target), f"{path.relative_to(ROOT)}: a link to {target} that does not exist"
        if target == path and anchor:
            assert anchor in anchors, f"{path.relative_to(ROOT)}: no heading for #{anchor}"


def test_course_names_pictures_minidb_figures_can_draw():
    from minidb.viz.gallery import all_figures

    named = set(PICTURE.findall(COURSE.read_text(encoding="utf-8")))
    assert len(named) >= 40, "the lecture plan names the pictures to project"
    assert sorted(named - set(all_figures())) == []


# -- notebook endings -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_course_every_notebook_sends_the_reader_on(path: Path):
    order = course_order()
    tail = "\n".join(source(c) for c in cells(path)[-3:] if c["cell_type"] == "markdown")
    targets = {t for t, _ in link_targets(path, tail)}
    exercises = {t for t, _ in link_targets(COURSE, notebook_sections()[path.stem])
                 if t.name == "README.md" and t.exists()}
    following = order[order.index(path.stem) + 1:order.index(path.stem) + 2]
    next_notebook = {ROOT / "notebooks" / f"{stem}.ipynb" for stem in following}
    if exercises or next_notebook:
        assert targets & (exercises | next_notebook), (
            f"{path.name}: the end links neither one of its exercises nor the next notebook {following}")


# -- the lab ------------------------------------------------------------------------------------------------

def test_course_devcontainer_runs_the_makefiles_setup_and_forwards_jupyters_port():
    config = json.loads((ROOT / ".devcontainer" / "devcontainer.json").read_text(encoding="utf-8"))
    phony = re.search(r"^\.PHONY:(.*)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M).group(1).split()
    command = config["postCreateCommand"].split()
    assert command[0] == "make" and command[1:] and set(command[1:]) <= set(phony), command
    version = re.search(r"python:\S*?(\d+)\.(\d+)", config["image"])
    assert version and (int(version.group(1)), int(version.group(2))) >= (3, 11), config["image"]
    assert 8888 in config["forwardPorts"]
    assert ".devcontainer/devcontainer.json" in COURSE.read_text(encoding="utf-8")
