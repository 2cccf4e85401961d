"""Markdown tables for the problems and answers: a header row, a rule, one row per item."""

from __future__ import annotations

from typing import Any, Iterable, Sequence


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """``table(("VLSN", "LSN"), [(9, "0xa/0x64")])`` is a Markdown table with columns padded to one width."""
    body = [[str(cell) for cell in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(header)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"  # noqa: E731
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, body)])


def numbered(lines: Iterable[str]) -> str:
    """Steps of a worked answer, numbered 1., 2., ..."""
    return "\n".join(f"{i}. {line}" for i, line in enumerate(lines, 1))
