"""``make slides`` (scripts/slides.py): a deck per lecture of COURSE.md's plan, that loads nothing from the network.

- the plan in docs/COURSE.md reads as lectures, each with a deck named after it, at least 14 of them;
- together the lectures project every numbered section of every notebook once (00, the orientation, only
  in part), and the reviews ask every notebook's *Check yourself* questions that exist;
- a plan naming a section or a notebook that does not exist is refused with a sentence, not a deck;
- one deck, built from the committed notebooks: every script, style sheet, picture and font it loads is a
  local file that exists (or data inside the page), never ``http://`` or ``https://``; its code is hidden, its
  pictures are there, and the controls' widgets (which need a kernel) are not.

tests/browser/test_slides_in_browser.py opens a deck in Chromium.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "slides.py"
DECK_LECTURE = 19  # feeders and replicas: one small notebook, pictures, a control


def load_script():
    spec = importlib.util.spec_from_file_location("minidb_slides_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def slides():
    module = load_script()
    yield module
    del sys.modules["minidb_slides_script"]


def build_deck(slides, lecture_number: int, out: Path) -> Path:
    lecture = next(lecture for lecture in slides.read_plan() if lecture.number == lecture_number)
    [deck] = slides.build([lecture], out, out / "work")
    return deck


def read_notebook(path: Path):
    """The notebook at ``path``; nbformat is imported here, not at the top, so collecting the suite (the
    student editions' is, without nbval) does not pay for its import."""
    import nbformat

    return nbformat.read(path, as_version=4)


def work_notebook(deck: Path) -> Path:
    """The notebook a deck was made from, as the build left it."""
    return deck.parent / "work" / deck.name.replace(".slides.html", ".ipynb")


@pytest.fixture(scope="module")
def deck(slides, tmp_path_factory) -> Path:
    return build_deck(slides, DECK_LECTURE, tmp_path_factory.mktemp("slides"))


# -- the plan ------------------------------------------------------------------------------------------------

def test_slides_every_lecture_of_the_plan_has_a_deck(slides):
    lectures = slides.read_plan()
    assert len(lectures) >= 14
    decks = [lecture.deck for lecture in lectures]
    assert len(set(decks)) == len(decks)
    assert all(re.fullmatch(r"L\d\d_[a-z0-9_]+\.slides\.html", deck) for deck in decks), decks
    assert decks[0] == "L01_shared_log.slides.html"


def test_slides_the_lectures_project_every_numbered_section_once(slides):
    taken: dict[str, list[int]] = {}
    asked: set[str] = set()
    for lecture in slides.read_plan():
        for part in lecture.parts:
            notebook = slides.read_notebook(part.number)
            sections = slides.chosen_sections(notebook, part)
            if part.questions_only:
                asked.add(notebook.stem)
            else:
                taken.setdefault(notebook.stem, []).extend(  # a numbered workload comes with either half
                    s.number for s in sections if s.number is not None and (part.every or s.number in part.numbers))
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        numbers = slides.read_notebook(path.stem.split("_")[0]).numbers
        projected = sorted(taken.get(path.stem, []))
        if path.stem == "00_start_here":  # the orientation: its layers and its controls
            assert projected and set(projected) < set(numbers)
        else:
            assert projected == numbers, f"{path.stem}: the lectures project sections {projected} of {numbers}"
    with_questions = {path.stem for path in (ROOT / "notebooks").glob("*.ipynb")
                      if any(s.kind == "check" for s in slides.read_notebook(path.stem.split("_")[0]).sections)}
    assert asked == with_questions - {"00_start_here"}


@pytest.mark.parametrize("plan, refusal", [
    ("1. **Volumes.** 03 sections 1 to 12. Project nothing.",
     "notebook 03_volume_extents has no sections [10, 11, 12]"),
    ("1. **Nothing.** 99, every section.", "the plan names notebook 99, but notebooks/ has 0 99_*.ipynb"),
    ("1. **Vague.** 03 mostly.", "cannot read '03 mostly'"),
    ("2. **Second.** 03, every section.", "the lectures are numbered [2], not 1 to 1"),
])
def test_slides_a_plan_naming_what_does_not_exist_is_refused(slides, plan, refusal):
    with pytest.raises(slides.PlanError, match=re.escape(refusal)):
        for lecture in slides.parse_plan(plan):
            slides.lecture_notebook(lecture)


def test_slides_main_exits_2_with_one_line_for_an_unknown_lecture(slides, tmp_path, capsys):
    assert slides.main(["--only", "99", "--out", str(tmp_path / "out"), "--work", str(tmp_path / "work")]) == 2
    assert capsys.readouterr().err.startswith("slides: the plan has no lectures [99]")
    assert not (tmp_path / "out").exists()


# -- a lecture's notebook ------------------------------------------------------------------------------------

def test_slides_a_lectures_notebook_is_marked_for_slides_without_code_or_widgets(slides):
    [lecture] = [lecture for lecture in slides.read_plan() if lecture.number == DECK_LECTURE]
    notebook = slides.lecture_notebook(lecture)
    kinds = [cell.metadata["slideshow"]["slide_type"] for cell in notebook.cells]
    headings = [cell.source.split("\n")[0] for cell in notebook.cells if cell.source.startswith(("# ", "## "))]
    assert kinds[0] == "slide" and kinds.count("slide") == len(headings) >= 5
    assert "## 5 · Catching up" in headings
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert all(cell.outputs for cell in notebook.cells if cell.cell_type == "code")
    assert not any(slides.WIDGET in output.get("data", {}) for output in outputs)
    assert sum("image/png" in output.get("data", {}) for output in outputs) == 3


# -- a deck --------------------------------------------------------------------------------------------------

class Loads(HTMLParser):
    """What a page loads: (tag, URL) for scripts, style sheets, pictures and frames; inline scripts and styles."""

    LOADING = {("script", "src"), ("link", "href"), ("img", "src"), ("iframe", "src"), ("source", "src"),
               ("video", "src"), ("audio", "src"), ("embed", "src"), ("object", "data")}

    def __init__(self):
        super().__init__()
        self.urls: list[tuple[str, str]] = []
        self.inline: dict[str, list[str]] = {"script": [], "style": []}
        self.sections = 0
        self._open: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.urls += [(tag, attrs[name]) for t, name in self.LOADING if t == tag and attrs.get(name)]
        self.sections += tag == "section"
        if tag in self.inline and not attrs.get("src"):
            self._open = tag
            self.inline[tag].append("")

    def handle_data(self, data):
        if self._open:
            self.inline[self._open][-1] += data

    def handle_endtag(self, tag):
        if tag == self._open:
            self._open = None


CSS_URL = re.compile(r"""url\(\s*['"]?([^'")]+)['"]?\s*\)|@import\s+['"]([^'"]+)['"]""")


def local_file(base: Path, url: str) -> Path | None:
    """The file a reference names, relative to ``base``; None for data inside the page. Fails for the network."""
    parts = urlsplit(url)
    assert parts.scheme in ("", "data") and not parts.netloc, f"{url} is loaded from the network"
    return None if parts.scheme == "data" else (base / unquote(parts.path)).resolve()


def test_slides_a_deck_loads_only_local_files_that_exist(deck):
    page = Loads()
    page.feed(deck.read_text(encoding="utf-8"))
    kinds = {tag for tag, _ in page.urls}
    assert {"script", "link", "img"} <= kinds, page.urls
    style_sheets = []
    for _, url in page.urls:
        path = local_file(deck.parent, url)
        if path is not None:
            assert path.is_file(), f"{deck.name} loads {url}, which is not there"
            if path.suffix == ".css":
                style_sheets.append(path)
    for script in page.inline["script"]:
        assert not re.search(r"https?://", script), f"an inline script names the network: {script[:200]}"
    for css, base in [(text, deck.parent) for text in page.inline["style"]] + \
                     [(path.read_text(encoding="utf-8"), path.parent) for path in style_sheets]:
        for match in CSS_URL.finditer(re.sub(r"/\*.*?\*/", "", css, flags=re.S)):
            url = match.group(1) or match.group(2)
            path = local_file(base, url)
            assert path is None or path.is_file(), f"a style sheet loads {url}, which is not there"
    assert page.sections > 3


def test_slides_the_stock_reveal_template_would_load_from_the_network(slides, deck):
    """The check above catches nbconvert's own template, which fetches require.js and more from CDNs."""
    from nbconvert import SlidesExporter

    notebook = read_notebook(work_notebook(deck))
    html, _ = SlidesExporter(reveal_url_prefix=slides.REVEAL_DIR).from_notebook_node(notebook)
    stock = deck.with_name("stock.slides.html")
    stock.write_text(html, encoding="utf-8")
    with pytest.raises(AssertionError, match="is loaded from the network"):
        test_slides_a_deck_loads_only_local_files_that_exist(stock)


def test_slides_reveal_js_is_copied_beside_the_decks(deck, slides):
    reveal = deck.parent / slides.REVEAL_DIR
    assert (reveal / "dist" / "reveal.js").read_text(encoding="utf-8").lstrip().startswith("/*!\n * reveal.js ")
    assert (reveal / "plugin" / "notes" / "notes.js").is_file() and (reveal / "LICENSE").is_file()
    assert read_notebook(work_notebook(deck)).metadata["title"] == "Lecture 19 · Feeders and replicas"
