"""Numbers quoted in a notebook's prose are the numbers its outputs show.

Each :class:`Quote` ties a markdown cell to the code cell whose output it
describes (both by cell id): a pattern with named groups finds the numbers in
the prose, another finds the same names in the output's text, and the values
must be equal (``derived`` computes a name the output shows only through
others, e.g. the entries lost as those logged minus those that survived).
Whitespace is folded first, so the prose may wrap anywhere. The committed
outputs are those nbval checks the executed notebook against, so a quote that
passes here matches what a reader sees after running the notebook.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parents[2]
LSN = r"0x\w+/0x\w+"


@dataclass(frozen=True)
class Quote:
    prose_cell: str
    prose: str  # a pattern with named groups, matched in the markdown cell
    output_cell: str
    output: str  # a pattern with the same names (or those ``derived`` needs), matched in the cell's printed text
    derived: Callable[[dict[str, int | str]], dict[str, int]] | None = None


QUOTES: dict[str, list[Quote]] = {
    "08_aries_recovery": [
        Quote("7ca932e5", r"never written: (?P<lost>\d+) of the (?P<total>\d+),",
              "8593c294", r"(?P<survived>\d+) of (?P<total>\d+) page-store entries survived",
              lambda o: {"lost": int(o["total"]) - int(o["survived"])}),
        Quote("f4049d82", rf"The redo LSN is (?P<redo>{LSN}),.*the (?P<read>\d+) entries analysis read",
              "94834a41", rf"(?P<read>\d+) entries read.*redo LSN: (?P<redo>{LSN})"),
        Quote("c2b5328b", r"of the (?P<read>\d+) entries read, (?P<redone>\d+) are redone.*?(?P<skipped>\d+) are skipped",
              "11fc826c", r"(?P<read>\d+) entries read, (?P<redone>\d+) redone, .* (?P<skipped>\d+) skipped \(page LSN"),
        Quote("c2b5328b", r"and the other (?P<rest>\d+) \(",
              "11fc826c", r"(?P<read>\d+) entries read, (?P<redone>\d+) redone, (?P<a>\d+) skipped .* (?P<b>\d+) skipped",
              lambda o: {"rest": int(o["read"]) - int(o["redone"]) - int(o["a"]) - int(o["b"])}),
    ],
    "16_log_space": [
        Quote("35465db6", r"refused after (?P<records>\d+) records, .*? (?P<free>\d+) bytes free: the room left was "
                          r"(?P<room>\d+) bytes, but (?P<reserved>\d+) were reserved for rollbacks .*? and "
                          r"(?P<ckpt>\d+) for a checkpoint\. The error names (?P<oldest>T\d+)",
              "08f973b1", r"created (?P<records>\d+) records; .* only (?P<free>\d+) bytes are free \((?P<room>\d+) bytes "
                          r"of room, (?P<reserved>\d+) reserved for rollbacks, (?P<ckpt>\d+) for a checkpoint\); the "
                          r"oldest transaction holding the log is (?P<oldest>T\d+)"),
        Quote("35465db6", r"T3's own (?P<held>\d+) .* logged its (?P<undone>\d+) CLRs, .* its end, (?P<logged>\d+) bytes, "
                          r"inside the (?P<held2>\d+) it held",
              "2780013c", r"(?P<undone>\d+) entries undone, .* the rollback logged (?P<logged>\d+) bytes of the "
                          r"(?P<held>\d+) it held",
              lambda o: {"held2": int(o["held"])}),
        Quote("5a419893", rf"T2's first entry \((?P<first>{LSN})\) .* (?P<tid>T\d+) alone keeps (?P<files>\d+) log files",
              "7891c92b", rf"(?P<tid>T\d+) \(first LSN (?P<first>{LSN})\) alone keeps (?P<files>\d+) log files"),
        Quote("5a419893", r"step 15 removes files (?P<a>\d+) and (?P<b>\d+)",
              "0fee3868", r"removed 0*(?P<a>\d+)\.jdb, 0*(?P<b>\d+)\.jdb"),
    ],
}


def fold(text: str) -> str:
    return " ".join(text.split())


def cell_texts(stem: str) -> dict[str, tuple[str, str]]:
    """Cell id -> (kind, text): a markdown cell's source, a code cell's printed output."""
    cells = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
    texts = {}
    for cell in cells:
        if cell["cell_type"] == "markdown":
            texts[cell["id"]] = ("markdown", "".join(cell["source"]))
        elif cell["cell_type"] == "code":
            printed = "".join("".join(o.get("text", "")) for o in cell.get("outputs", []))
            texts[cell["id"]] = ("code", printed)
    return texts


def disagreements(quote: Quote, prose: str, output: str) -> dict[str, tuple]:
    """The names whose quoted value differs from the output's (name -> (quoted, shown)); a pattern not found
    is a disagreement too."""
    said = re.search(quote.prose, fold(prose))
    shown = re.search(quote.output, fold(output))
    if said is None or shown is None:
        return {"pattern": ("found" if said else "not found in the prose", "found" if shown else "not found "
                            "in the output")}
    values: dict[str, int | str] = dict(shown.groupdict())
    if quote.derived:
        values |= quote.derived(values)
    return {name: (value, values.get(name)) for name, value in said.groupdict().items()
            if str(values.get(name)) != value}


@pytest.mark.parametrize("stem, quote", [(stem, q) for stem, quotes in QUOTES.items() for q in quotes],
                         ids=lambda v: v if isinstance(v, str) else v.prose_cell)
def test_quoted_numbers_match_the_outputs_they_describe(stem, quote):
    texts = cell_texts(stem)
    (prose_kind, prose), (output_kind, output) = texts[quote.prose_cell], texts[quote.output_cell]
    assert (prose_kind, output_kind) == ("markdown", "code")
    assert disagreements(quote, prose, output) == {}


def test_quoted_numbers_the_check_catches_a_wrong_number():
    # 08 once said "6 of 55" lost where its output said 46 of 53 survived: both numbers are caught.
    quote = QUOTES["08_aries_recovery"][0]
    output = "crash after write 28 of 38: 46 of 53 page-store entries survived"
    assert disagreements(quote, "The faded entries were never written: 7 of the 53, T5's", output) == {}
    assert disagreements(quote, "The faded entries were never written: 6 of the 55, T5's", output) == {
        "lost": ("6", 7), "total": ("55", "53")}
    assert "pattern" in disagreements(quote, "The faded entries: six of them", output)


def test_quoted_numbers_cover_the_notebooks_named_here():
    assert {"08_aries_recovery", "16_log_space"} <= set(QUOTES)
