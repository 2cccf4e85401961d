"""Lecture slides (`make slides`): one reveal.js deck per lecture of the course's plan, shown without a network.

The plan is the section "A plan of 14 weeks" of docs/COURSE.md. Each numbered lecture there opens with its title
in bold and a first sentence naming what it projects, notebook by notebook, separated by semicolons:

    8. **B+trees.** 07, every section. Project ...
    16. **Provisional logging and recovery.** 10 sections 5 and 6; 10b sections 1 and 2. Project ...
    24. **Review: the log store.** 09 and 10, their Check yourself questions. Then ...

``NN, every section`` takes every ``##`` section of notebook NN; ``NN sections 1 to 4 and 6`` takes the
numbered sections ("## 4 · Undo", "## 4. ..."), plus the notebook's workload and, when the lecture reaches the
notebook's last numbered section, its *Check yourself* questions and the text of its control; a review takes
the notebooks' *Check yourself* questions only. Exams are not numbered lectures and have no deck.

For each lecture a notebook is assembled in build/slides/ from the committed, executed notebooks (they are
never run again) and nbconvert's slides exporter turns it into slides/LNN_topic.slides.html:

- a ``#`` or ``##`` heading starts a slide (a markdown cell holding several headings is split at each);
- a code cell with output starts a vertical slide below, so a picture gets the screen, and the markdown that
  comments it follows on the same slide; the code itself is hidden (the lecturer runs it in JupyterLab);
- cells without output, and the controls' widgets (they need a running kernel), are left out.

The decks load nothing from the network. reveal.js (its dist/ files and the notes plugin) is copied into
slides/reveal.js/ from the pinned Python package sphinx-revealjs, used only as the carrier of those files
(nothing imports it or Sphinx); the template scripts/slides_template/minidb_reveal leaves out what nbconvert's
own reveal template fetches from CDNs (require.js, jQuery, MathJax, mermaid, the widget manager). Pictures are
embedded in the deck. slides/ is rebuilt whole by this script and not committed.

    .venv/bin/python scripts/slides.py              # every lecture's deck
    .venv/bin/python scripts/slides.py --only 1 9   # lectures 1 and 9
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
COURSE = ROOT / "docs" / "COURSE.md"
NOTEBOOKS = ROOT / "notebooks"
TEMPLATES = Path(__file__).resolve().parent / "slides_template"
PLAN_HEADING = "## A plan of 14 weeks"
REVEAL_PACKAGE = "sphinx-revealjs"
REVEAL_IN_PACKAGE = "sphinx_revealjs/_static/revealjs"
REVEAL_PARTS = ("dist", "plugin/notes", "LICENSE")  # what a deck loads, and reveal.js's licence
REVEAL_DIR = "reveal.js"
WIDGET = "application/vnd.jupyter.widget-view+json"
CHECK = "Check yourself"

LECTURE = re.compile(r"^(\d+)\. \*\*(.+?)\.?\*\*\s*(.*)$")
NUMBERED = re.compile(r"^(\d+)\s*[·.]\s")
NOTEBOOK = re.compile(r"\b(\d\d[a-z]?)\b")


class PlanError(Exception):
    """The plan names a notebook or a section that does not exist, or cannot be read."""


@dataclass
class Section:
    """One ``##`` section of a notebook: its heading, its number (None when unnumbered) and its cells."""

    heading: str
    number: int | None
    cells: list = field(default_factory=list)

    @property
    def kind(self) -> str:
        if "workload" in self.heading.lower():
            return "workload"  # taken with any part of its notebook (13's and 14's are numbered too)
        if self.number is not None:
            return "numbered"
        if self.heading.startswith(CHECK):
            return "check"
        return "other"


@dataclass
class Notebook:
    stem: str  # 08_aries_recovery
    intro: list  # the cells before the first ``##`` heading: the title and what the reader will see
    sections: list[Section]

    @property
    def numbers(self) -> list[int]:
        return [s.number for s in self.sections if s.number is not None]


@dataclass
class Part:
    """What a lecture takes from one notebook: every section, some numbered ones, or its questions only."""

    number: str  # the plan's name of the notebook: 08, 05b
    every: bool = False
    numbers: tuple[int, ...] = ()
    questions_only: bool = False

    def describe(self) -> str:
        if self.questions_only:
            return f"{CHECK.lower()} questions"
        if self.every:
            return "every section"
        return "sections " + ", ".join(map(str, self.numbers))


@dataclass
class Lecture:
    number: int
    title: str
    parts: list[Part]

    @property
    def deck(self) -> str:
        """``L09_aries_analysis_redo.slides.html``: the number, then the title's words without the small ones."""
        words = [w for w in re.findall(r"[a-z0-9]+", self.title.lower().replace("+", ""))
                 if w not in ("the", "a", "an", "and")]
        return f"L{self.number:02d}_{'_'.join(words)}.slides.html"


# -- the plan ------------------------------------------------------------------------------------------------

def plan_text(course: Path = COURSE) -> str:
    """The body of COURSE.md's plan: from its heading to the next ``##`` heading."""
    text = course.read_text(encoding="utf-8")
    start = text.find("\n" + PLAN_HEADING)
    if start < 0:
        raise PlanError(f"{course}: no section '{PLAN_HEADING}'")
    body = text[start + 1:].split("\n", 1)[1]
    end = re.search(r"^## ", body, re.M)
    return body[:end.start()] if end else body


def parse_numbers(text: str) -> tuple[int, ...]:
    """``1 to 4 and 6`` -> (1, 2, 3, 4, 6); ``1, 3 and 5`` -> (1, 3, 5)."""
    numbers: list[int] = []
    for piece in re.split(r",\s*|\s+and\s+", text.strip()):
        if m := re.fullmatch(r"(\d+)\s+to\s+(\d+)", piece):
            numbers += range(int(m.group(1)), int(m.group(2)) + 1)
        elif piece.isdigit():
            numbers.append(int(piece))
        else:
            raise PlanError(f"cannot read the sections '{text}'")
    return tuple(numbers)


def parse_part(text: str) -> list[Part]:
    text = text.strip()
    if CHECK in text:
        return [Part(number, questions_only=True) for number in NOTEBOOK.findall(text.split(CHECK)[0])]
    if m := re.fullmatch(r"(\d\d[a-z]?),? every section", text):
        return [Part(m.group(1), every=True)]
    if m := re.fullmatch(r"(\d\d[a-z]?),? sections? (.+)", text):
        return [Part(m.group(1), numbers=parse_numbers(m.group(2)))]
    raise PlanError(f"cannot read '{text}': write 'NN, every section', 'NN sections 1 to 4' or "
                    f"'NN and MM, their {CHECK} questions'")


def parse_plan(text: str) -> list[Lecture]:
    """The numbered lectures of the plan, each with what it takes from which notebook."""
    items: list[list[str]] = []
    for line in text.splitlines():
        if LECTURE.match(line):
            items.append([line])
        elif items and line.startswith("   ") and line.strip():
            items[-1].append(line.strip())
        elif items and not line.strip():
            items.append([])  # a blank line ends an item
    lectures = []
    for lines in filter(None, items):
        m = LECTURE.match(" ".join(lines))
        selection = m.group(3).split(".")[0]
        parts = [part for piece in selection.split(";") for part in parse_part(piece)]
        lectures.append(Lecture(int(m.group(1)), m.group(2).rstrip("."), parts))
    numbers = [lecture.number for lecture in lectures]
    if numbers != list(range(1, len(lectures) + 1)):
        raise PlanError(f"the lectures are numbered {numbers}, not 1 to {len(lectures)}")
    return lectures


def read_plan(course: Path = COURSE) -> list[Lecture]:
    return parse_plan(plan_text(course))


# -- notebooks into sections ---------------------------------------------------------------------------------

def split_markdown(cell) -> list:
    """A markdown cell cut before each ``#``/``##`` heading, so that every heading opens a cell of its own."""
    pieces: list[list[str]] = [[]]
    for line in cell.source.split("\n"):
        if re.match(r"#{1,2} ", line) and any(s.strip() for s in pieces[-1]):
            pieces.append([])
        pieces[-1].append(line)
    return [nbformat.v4.new_markdown_cell("\n".join(p).strip("\n")) for p in pieces if "".join(p).strip()]


def notebook_path(number: str) -> Path:
    """notebooks/NN_topic.ipynb for the plan's ``NN`` (``05b`` is not ``05``)."""
    found = sorted(NOTEBOOKS.glob(f"{number}_*.ipynb"))
    if len(found) != 1:
        raise PlanError(f"the plan names notebook {number}, but notebooks/ has {len(found)} {number}_*.ipynb")
    return found[0]


def read_notebook(number: str) -> Notebook:
    path = notebook_path(number)
    notebook = nbformat.read(path, as_version=4)
    intro: list = []
    sections: list[Section] = []
    for cell in notebook.cells:
        for piece in split_markdown(cell) if cell.cell_type == "markdown" else [cell]:
            first = piece.source.split("\n", 1)[0]
            if piece.cell_type == "markdown" and first.startswith("## "):
                heading = first[3:].strip()
                m = NUMBERED.match(heading)
                sections.append(Section(heading, int(m.group(1)) if m else None))
            (sections[-1].cells if sections else intro).append(piece)
    return Notebook(path.stem, intro, sections)


def chosen_sections(notebook: Notebook, part: Part) -> list[Section]:
    """The sections of ``notebook`` that ``part`` takes, in the notebook's order."""
    if part.questions_only:
        found = [s for s in notebook.sections if s.kind == "check"]
        if not found:
            raise PlanError(f"notebook {notebook.stem} has no {CHECK} section")
        return found
    if part.every:
        return list(notebook.sections)
    missing = sorted(set(part.numbers) - set(notebook.numbers))
    if missing:
        raise PlanError(f"notebook {notebook.stem} has no sections {missing} (it has {notebook.numbers})")
    ends = max(part.numbers) == max(notebook.numbers)
    return [s for s in notebook.sections if s.number in part.numbers or s.kind == "workload"
            or (ends and s.kind in ("check", "other"))]


# -- a lecture's notebook ------------------------------------------------------------------------------------

def slide_cells(cells: list) -> list:
    """Copies of ``cells`` marked for the slides exporter; cells with nothing to show are left out."""
    marked = []
    for cell in cells:
        cell = nbformat.from_dict(cell)
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.get("outputs", []) if WIDGET not in o.get("data", {})]
            if not cell.outputs:
                continue
            slide_type = "subslide"
        elif cell.cell_type == "markdown":
            slide_type = "slide" if re.match(r"#{1,2} ", cell.source) else "-"
        else:
            continue
        cell.metadata["slideshow"] = {"slide_type": slide_type}
        marked.append(cell)
    return marked


def lecture_notebook(lecture: Lecture):
    """One notebook holding what the lecture projects, notebook after notebook, marked for slides."""
    title = f"Lecture {lecture.number} · {lecture.title}"
    notebooks = [read_notebook(part.number) for part in lecture.parts]
    sources = "\n".join(f"- notebooks/{notebook.stem}.ipynb, {part.describe()}"
                        for part, notebook in zip(lecture.parts, notebooks, strict=True))
    cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\n{sources}\n\nRun it live: `make lab`.")]
    for part, notebook in zip(lecture.parts, notebooks, strict=True):
        chosen = chosen_sections(notebook, part)
        if part.questions_only:  # each notebook's questions under its own title
            name = notebook.intro[0].source.split("\n", 1)[0].lstrip("# ") if notebook.intro else notebook.stem
            for section in chosen:
                first, *rest = section.cells
                body = first.source.split("\n", 1)[1] if "\n" in first.source else ""
                cells += [nbformat.v4.new_markdown_cell(f"## {name}: {CHECK.lower()}\n{body}"), *rest]
        else:
            cells += notebook.intro
            for section in chosen:
                cells += section.cells
    deck = nbformat.v4.new_notebook(cells=slide_cells(cells))
    deck.metadata["title"] = title
    deck.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    deck.metadata["language_info"] = {"name": "python"}
    return deck


# -- building ------------------------------------------------------------------------------------------------

def reveal_source() -> Path:
    """reveal.js's files as the pinned package installed them."""
    try:
        root = Path(distribution(REVEAL_PACKAGE).locate_file(REVEAL_IN_PACKAGE))
    except PackageNotFoundError:
        raise PlanError(f"reveal.js comes from the Python package {REVEAL_PACKAGE}, which is not installed: "
                        "make setup installs it (the slides extra)") from None
    if not (root / "dist" / "reveal.js").exists():
        raise PlanError(f"{root}: no dist/reveal.js in the installed {REVEAL_PACKAGE}")
    return root


def copy_reveal(out: Path) -> Path:
    source, target = reveal_source(), out / REVEAL_DIR
    shutil.rmtree(target, ignore_errors=True)
    for part in REVEAL_PARTS:
        if (source / part).is_dir():
            shutil.copytree(source / part, target / part, ignore=shutil.ignore_patterns("*.map", "*.esm.js"))
        else:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / part, target / part)
    return target


def exporter():
    from nbconvert import SlidesExporter

    return SlidesExporter(template_name="minidb_reveal", extra_template_basedirs=[str(TEMPLATES)],
                          reveal_url_prefix=REVEAL_DIR, reveal_theme="white", reveal_transition="none",
                          reveal_number="c/t", reveal_width="1280", reveal_height="800", exclude_input=True,
                          exclude_input_prompt=True, exclude_output_prompt=True)


def build(lectures: list[Lecture], out: Path, work: Path) -> list[Path]:
    """Write the decks of ``lectures`` into ``out`` (with reveal.js beside them); their notebooks into ``work``."""
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    copy_reveal(out)
    slides = exporter()
    written = []
    for lecture in lectures:
        notebook = lecture_notebook(lecture)
        stem = lecture.deck.removesuffix(".slides.html")
        nbformat.write(notebook, work / f"{stem}.ipynb")
        html, _ = slides.from_notebook_node(notebook, resources={"metadata": {"name": stem}})
        (out / lecture.deck).write_text(html, encoding="utf-8")
        written.append(out / lecture.deck)
        print(f"{out.name}/{lecture.deck}")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "slides", help="where the decks go (default slides/)")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "slides",
                        help="where the lectures' notebooks go (default build/slides/)")
    parser.add_argument("--only", type=int, nargs="+", metavar="N", help="build only these lectures")
    args = parser.parse_args(argv)
    try:
        lectures = read_plan()
        if args.only:
            unknown = sorted(set(args.only) - {lecture.number for lecture in lectures})
            if unknown:
                raise PlanError(f"the plan has no lectures {unknown} (it has 1 to {len(lectures)})")
            lectures = [lecture for lecture in lectures if lecture.number in args.only]
        elif args.out.exists():
            for old in args.out.glob("L*.slides.html"):  # a lecture renamed or dropped leaves no stale deck
                old.unlink()
        build(lectures, args.out, args.work)
    except PlanError as error:
        print(f"slides: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
