"""Helpers for the picture and widget tests: what a committed notebook shows."""

import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def notebook_scripts(stem: str) -> dict[str, list]:
    """The literal lists a notebook assigns (``script = [...]``, ``upgrade = [...]``), by name."""
    notebook = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    found = {}
    for cell in notebook["cells"]:
        text = "".join(cell["source"])
        if cell["cell_type"] != "code" or text.startswith("%"):
            continue
        for node in ast.parse(text).body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
                found[node.targets[0].id] = ast.literal_eval(node.value)
    return found

