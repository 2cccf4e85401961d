"""Reading a quiz's text back: its Markdown tables as rows of cells, and its numbered steps."""

from __future__ import annotations

import re


def md_tables(text: str) -> list[list[dict[str, str]]]:
    """Every Markdown table of ``text``, in order, each as a list of {header: cell} rows."""
    found, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("| ") and i + 1 < len(lines) and lines[i + 1].startswith("|-"):
            header = [c.strip() for c in lines[i].strip("|").split("|")]
            rows, i = [], i + 2
            while i < len(lines) and lines[i].startswith("| "):
                rows.append(dict(zip(header, (c.strip() for c in lines[i].strip("|").split("|")), strict=True)))
                i += 1
            found.append(rows)
        else:
            i += 1
    return found


def steps(text: str) -> list[str]:
    """The numbered lines ``1. ...`` of ``text``, without their numbers."""
    return [m.group(1) for m in re.finditer(r"^\d+\. (.*)$", text, re.MULTILINE)]
