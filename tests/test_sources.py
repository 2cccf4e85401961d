"""docs/sources.md and what cites it: every source a student reads is inside the repository.

The notebooks' markdown, the exercises (READMEs and tests), README.md and docs/ name the original
documents (Shore's documentation, JE's class documentation, the ARIES and Dreadlocks papers) through
``docs/sources.md``, by anchor: ``../docs/sources.md#vlsn-bucket``. These tests check that every
such link names a section that exists, that every notebook and exercise cites the page, and that
none of these texts points at files students do not have.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "docs" / "sources.md"

LINK = re.compile(r"\]\(([^)\s#]*)(?:#([^)\s]*))?\)")
PLAIN_REFERENCE = re.compile(r"docs/sources\.md#([\w-]+)")
NOT_VISIBLE = re.compile(
    r"shared/seeds|\.\./shared|/work/|\d{3}_[0-9a-f]{16}\.txt"  # paths outside the repository
    r"|\bthe seed\b|\bseed's\b|\bour seeds?\b|\bseeds? `\d|\bseed (?:text|case|file)s?\b"  # "the seed"
    r"|\bseed 0\d\d\b",  # a document by its number ("seed 000"), where its name belongs
    re.IGNORECASE)


def slug(heading: str) -> str:
    """The anchor GitHub and JupyterLab give a markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def sections(text: str) -> dict[str, str]:
    """Anchor -> body of every heading of a markdown text (code fences skipped)."""
    found: dict[str, str] = {}
    anchor, fenced = None, False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.+)", line)):
            anchor = slug(m.group(1))
            assert anchor not in found, f"docs/sources.md: two headings give the anchor #{anchor}"
            found[anchor] = ""
            continue
        if anchor is not None:
            found[anchor] += line + "\n"
    return found


def notebook_markdown(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def student_texts() -> dict[Path, str]:
    """What a student reads: notebook prose, the exercises, README.md and docs/."""
    texts = {p: notebook_markdown(p) for p in sorted((ROOT / "notebooks").glob("*.ipynb"))}
    for pattern in ("exercises/**/*.md", "exercises/**/test_*.py", "README.md", "docs/**/*.md"):
        texts.update({p: p.read_text(encoding="utf-8") for p in sorted(ROOT.glob(pattern))})
    return texts


def test_sources_every_link_names_a_section_of_docs_sources():
    anchors = sections(SOURCES.read_text(encoding="utf-8"))
    checked = 0
    for path, text in student_texts().items():
        for target, anchor in LINK.findall(text):
            if target.startswith(("http:", "https:")):
                continue
            resolved = (path.parent / target).resolve() if target else path
            if resolved != SOURCES or not anchor:  # another file, or the page as a whole
                continue
            assert anchor in anchors, f"{path.relative_to(ROOT)}: docs/sources.md has no section #{anchor}"
            checked += 1
        for anchor in PLAIN_REFERENCE.findall(text):
            assert anchor in anchors, f"{path.relative_to(ROOT)}: docs/sources.md has no section #{anchor}"
            checked += 1
    assert checked >= 100, f"only {checked} references to docs/sources.md sections"


def test_sources_every_concept_names_its_document_and_module():
    concepts = {a: body for a, body in sections(SOURCES.read_text(encoding="utf-8")).items()
                if "- **Source:**" in body or "- **In minidb:**" in body}
    assert len(concepts) >= 60
    # each has an explicit anchor too, equal to GitHub's: JupyterLab's heading ids keep the case ("VLSN-bucket")
    explicit = re.findall(r'<a id="([^"]+)"></a>\n\n### (.+)', SOURCES.read_text(encoding="utf-8"))
    assert [a for a, _ in explicit] == [slug(h) for _, h in explicit]
    assert {a for a, _ in explicit} == set(concepts)
    for anchor, body in concepts.items():
        assert "- **Source:**" in body and "- **In minidb:**" in body, f"#{anchor}: Source and In minidb lines"
        for module in re.findall(r"`(minidb/[\w/]+(?:\.py)?)`", body):
            assert (ROOT / module).exists(), f"#{anchor} names {module}, which does not exist"
        for notebook in re.findall(r"\]\(\.\./(notebooks/[\w.]+)\)", body):
            assert (ROOT / notebook).exists(), f"#{anchor} links {notebook}, which does not exist"


def test_sources_cited_by_every_notebook_and_exercise():
    readers = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "exercises").glob("*/README.md"))
    assert len(readers) >= 10
    for path in readers:
        text = notebook_markdown(path) if path.suffix == ".ipynb" else path.read_text(encoding="utf-8")
        assert "docs/sources.md#" in text, f"{path.relative_to(ROOT)} does not cite docs/sources.md"


def test_sources_students_are_never_sent_outside_the_repository():
    for path, text in student_texts().items():
        for number, line in enumerate(text.splitlines(), 1):
            m = NOT_VISIBLE.search(line)
            assert m is None, f"{path.relative_to(ROOT)}:{number} cites what students cannot see: {m.group(0)!r}"


def test_sources_code_calls_the_documents_by_their_names():
    """Code, tests and what notebooks print name the documents (JE's, Shore's), never "the seed"."""
    texts = {p: p.read_text(encoding="utf-8") for pattern in ("minidb/**/*.py", "scripts/*.py", "tests/**/*.py",
                                                              "tests/golden/*", "exercises/**/*.py")
             for p in sorted(ROOT.glob(pattern)) if p != Path(__file__).resolve() and p.is_file()}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        texts[path] = "\n".join("".join(c["source"]) + "".join("".join(o.get("text", "")) for o in c.get("outputs", []))
                                for c in cells if c["cell_type"] == "code")
    assert len(texts) > 200
    for path, text in texts.items():
        for number, line in enumerate(text.splitlines(), 1):
            m = NOT_VISIBLE.search(line) or re.search(r"Seed(?:Recovery)?Case|seed_(?:case|bucket|recovery)", line)
            assert m is None, f"{path.relative_to(ROOT)}:{number} names a source document as 'seed': {m.group(0)!r}"
