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



def arrows_through_boxes(fig, inset_px: float = 2.0) -> list[str]:
    """Arrows (FancyArrowPatch) of ``fig`` that pass through a box (a Rectangle patch), in pixels: each
    arrow's drawn outline, flattened and sampled, against every rectangle shrunk by ``inset_px`` (an arrow
    may start and end on a box's edge)."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.patches import FancyArrowPatch, Rectangle

    FigureCanvasAgg(fig)
    fig.canvas.draw()
    found = []
    for ax in fig.axes:
        boxes = [p.get_window_extent() for p in ax.patches if isinstance(p, Rectangle) and p.get_visible()]
        for arrow in (p for p in ax.patches if isinstance(p, FancyArrowPatch)):
            points = []
            for polygon in arrow.get_transform().transform_path(arrow.get_path()).to_polygons(closed_only=False):
                for a, b in zip(polygon[:-1], polygon[1:], strict=True):
                    points.extend(a + (b - a) * t for t in np.linspace(0, 1, 20))
            for box in boxes:
                if any(box.x0 + inset_px < x < box.x1 - inset_px and box.y0 + inset_px < y < box.y1 - inset_px
                       for x, y in points):
                    found.append(f"an arrow crosses the box at ({box.x0:.0f}, {box.y0:.0f}) px")
    return found
