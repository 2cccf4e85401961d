"""``minidb figures``: regenerate every picture in figures/."""

from __future__ import annotations


def register(commands) -> None:
    p = commands.add_parser("figures", help="regenerate the pictures in figures/")
    p.add_argument("--out", default="figures", help="directory to write into (default figures)")
    p.set_defaults(run=run)


def run(args) -> int:
    from minidb.viz.gallery import write_figures

    for path in write_figures(args.out):
        print(f"wrote {path}")
    return 0
