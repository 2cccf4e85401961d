"""``minidb figures``: write the pictures of figures/ and of the notebooks, for a page or a slide.

Every picture has a name: those of ``figures/`` are listed once in
:data:`minidb.viz.gallery.FIGURES` (``log_files``, ``locks_deadlock``, ...),
those of the notebooks in :mod:`minidb.viz.notebook_figures` (``02_pages-3``
is the third picture of ``02_pages.ipynb``). ``--list`` prints every name;
``minidb figures`` writes the pictures of ``figures/``, ``minidb figures
NAME...`` the named ones, each as ``--format png`` (default) or ``svg`` at
``--dpi`` (default 150), into ``--out DIR`` (default ``figures``), printing
one line per file, e.g. ``wrote figures/log_files.png``. The same call
writes the same bytes. ``make figures`` runs it, and ``minidb tour`` ends
with it. An unknown name is a usage error (exit 2), and nothing is written.
The directory is claimed as :mod:`minidb.cli.output` describes (``figures/``
carries the marker of this command); a run overwrites the pictures it writes
and deletes nothing, so writing one picture by name keeps the others.
"""

from __future__ import annotations

import sys

from minidb.cli.common import int_at_least, path_arg
from minidb.cli.output import owned_output
from minidb.viz.style import FORMATS, SAVE_DPI

OWNER = "minidb figures"


def register(commands) -> None:
    p = commands.add_parser("figures", help="write the pictures of figures/ and of the notebooks")
    p.add_argument("names", nargs="*", metavar="NAME", help="pictures to write (default: those of figures/)")
    p.add_argument("--list", action="store_true", help="print the name of every picture and stop")
    p.add_argument("--out", type=path_arg, default="figures", help="directory to write into (default figures)")
    p.add_argument("--format", choices=FORMATS, default="png", help="file format (default png)")
    p.add_argument("--dpi", type=int_at_least(10, 1200), default=SAVE_DPI,
                   help=f"dots per inch of a PNG (default {SAVE_DPI})")
    p.set_defaults(run=run)


def run(args) -> int:
    from minidb.viz.gallery import all_figures, unknown, write_figures

    if args.list:
        print("\n".join(all_figures()))
        return 0
    problem = unknown(args.names)
    if problem:
        print(f"minidb figures: error: {problem}", file=sys.stderr)
        return 2
    with owned_output(args.out, OWNER, replace=False):
        for path in write_figures(args.out, args.names or None, fmt=args.format, dpi=args.dpi):
            print(f"wrote {path}")
    return 0
