"""``minidb figures``: regenerate every picture in figures/.

Every picture is listed once, in :data:`minidb.viz.gallery.FIGURES` (file
name -> a function that builds it from a small deterministic workload); this
command draws each and writes it as a PNG (``--out DIR``, default
``figures``), printing one line per file, e.g. ``wrote figures/log_files.png``.
``make figures`` runs it, and ``minidb tour`` ends with it. The directory is
claimed as :mod:`minidb.cli.output` describes (``figures/`` carries the marker
of this command), so a run replaces only the pictures an earlier run wrote.
"""

from __future__ import annotations

from minidb.cli.common import path_arg
from minidb.cli.output import owned_output

OWNER = "minidb figures"


def register(commands) -> None:
    p = commands.add_parser("figures", help="regenerate the pictures in figures/")
    p.add_argument("--out", type=path_arg, default="figures", help="directory to write into (default figures)")
    p.set_defaults(run=run)


def run(args) -> int:
    from minidb.viz.gallery import write_figures

    with owned_output(args.out, OWNER):
        for path in write_figures(args.out):
            print(f"wrote {path}")
    return 0
