"""Refresh the image-regression baselines in tests/viz/baseline/ (`make figures` runs it).

Every picture ``minidb figures --list`` names is drawn at the baselines' dpi;
a baseline is rewritten only when its picture differs beyond the tolerance
(see minidb/viz/baseline.py), missing ones are added, and those of pictures
that no longer exist are deleted. It prints how many changed, by name, so a
refresh is a knowing one: look at what changed before committing it.
"""

import sys
from pathlib import Path

from minidb.viz.baseline import refresh
from minidb.viz.gallery import all_figures

BASELINES = Path(__file__).resolve().parents[1] / "tests" / "viz" / "baseline"

if __name__ == "__main__":
    directory = Path(sys.argv[1]) if len(sys.argv) > 1 else BASELINES
    print(refresh(str(directory), all_figures()).summary())
