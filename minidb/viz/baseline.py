"""Image regression: every picture, compared with a committed baseline PNG.

A picture that breaks (a label moved onto another, a box gone, a legend
lost) still draws without an error, so the tests that run the code do not
see it. Each picture named by :func:`minidb.viz.gallery.all_figures` (those
of ``figures/`` and every notebook's, ``NN_topic-K``) is therefore kept as a
small PNG, its *baseline* (``tests/viz/baseline/NAME.png``, at
:data:`BASELINE_DPI`), and ``tests/viz/test_image_regression.py`` draws it
again and compares the two with matplotlib's ``compare_images``: the root
mean square of the pixel differences (0..255 per channel) must stay within
:data:`TOLERANCE`.

Invariants:

- a re-render on the same versions of matplotlib and graphviz gives the same
  pixels (RMS 0): the pictures are seeded and :func:`minidb.viz.style.save`
  writes no volatile metadata;
- one damaged element is well above the tolerance: in ``log_files`` at 40
  dpi a label moved onto its neighbour measures about 2.2, one entry's box
  missing 1.6, the legend gone 7.5;
- baselines only change knowingly: :func:`refresh` (``make figures``)
  rewrites a baseline only when its picture is no longer within the
  tolerance, adds the missing ones, deletes those whose picture is gone, and
  says how many of each.

Graphviz pictures are rendered to PNG by dot like the rest; a different dot
version may lay a graph out differently, and then ``make figures`` refreshes
them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from matplotlib.testing.compare import compare_images
from matplotlib.testing.exceptions import ImageComparisonFailure

from minidb.viz.style import Picture, save

BASELINE_DPI = 40  # small files (about 13 KiB a picture); text is still a few pixels tall
TOLERANCE = 0.5  # RMS; a re-render measures 0, one misplaced label about 2
REFRESH = "run make figures if the change is intended"


def render(picture: Picture, path: str, dpi: int = BASELINE_DPI) -> str:
    """Write ``picture`` as the PNG a baseline is compared with; return the path."""
    return save(picture, path, dpi=dpi)


def compare(name: str, actual: str, baseline: str, tolerance: float = TOLERANCE) -> str | None:
    """Why the PNG ``actual`` of picture ``name`` differs from ``baseline`` (None if within ``tolerance``).

    On a difference matplotlib writes ``<actual>-failed-diff.png`` beside ``actual``; the message names
    the picture, the RMS and that file.
    """
    if not os.path.exists(baseline):
        return f"no baseline for {name}: run make figures"
    try:
        result = compare_images(baseline, actual, tolerance, in_decorator=True)
    except ImageComparisonFailure as e:  # not the same size: no pixel-wise RMS
        return f"{name}: the picture's size changed ({str(e).strip().splitlines()[0]}); {REFRESH}"
    if result is None:
        return None
    return (f"{name}: differs from its baseline {baseline} by RMS {result['rms']:.2f} (tolerance {tolerance}); "
            f"the difference is drawn in {result['diff']}; {REFRESH}")


def check(name: str, make: Callable[[], Picture], baseline_dir: str, diff_dir: str,
          tolerance: float = TOLERANCE) -> str | None:
    """Draw picture ``name`` into ``diff_dir`` and compare it with its baseline; keep files only on a failure."""
    os.makedirs(diff_dir, exist_ok=True)
    actual = os.path.join(diff_dir, f"{name}.png")
    render(make(), actual)
    problem = compare(name, actual, os.path.join(baseline_dir, f"{name}.png"), tolerance)
    if problem is None:
        os.remove(actual)
    return problem


@dataclass
class RefreshReport:
    directory: str
    changed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0

    def summary(self) -> str:
        lines = [f"baselines in {self.directory}: {len(self.changed)} changed, {len(self.added)} new, "
                 f"{len(self.removed)} removed, {self.unchanged} unchanged"]
        for what, names in (("changed", self.changed), ("new", self.added), ("removed", self.removed)):
            if names:
                lines.append(f"  {what}: {', '.join(names)}")
        return "\n".join(lines)


def stale(baseline_dir: str, names: Iterable[str]) -> list[str]:
    """Baselines in ``baseline_dir`` whose picture no longer exists, by name."""
    if not os.path.isdir(baseline_dir):
        return []
    known = set(names)
    return sorted(f[:-4] for f in os.listdir(baseline_dir) if f.endswith(".png") and f[:-4] not in known)


def refresh(baseline_dir: str, pictures: dict[str, Callable[[], Picture]],
            tolerance: float = TOLERANCE) -> RefreshReport:
    """Make ``baseline_dir`` hold one baseline per picture of ``pictures``, changing only what differs."""
    os.makedirs(baseline_dir, exist_ok=True)
    report = RefreshReport(baseline_dir)
    with tempfile.TemporaryDirectory(prefix="minidb-baseline-") as scratch:
        for name, make in pictures.items():
            actual = render(make(), os.path.join(scratch, f"{name}.png"))
            baseline = os.path.join(baseline_dir, f"{name}.png")
            existed = os.path.exists(baseline)
            if existed and compare(name, actual, baseline, tolerance) is None:
                report.unchanged += 1
                continue
            shutil.copyfile(actual, baseline)
            (report.changed if existed else report.added).append(name)
    for name in stale(baseline_dir, pictures):
        os.remove(os.path.join(baseline_dir, f"{name}.png"))
        report.removed.append(name)
    return report
