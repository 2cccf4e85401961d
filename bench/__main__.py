"""Run benchmarks and rewrite their sections of ``BENCHMARKS.md``.

Usage: ``python -m bench [--impl fast|reference] [--out PATH] [NAME...]``
from the repository root (``make bench``); with no names, every benchmark
runs. Each name is a section of ``BENCHMARKS.md`` (or ``--out``) between
``<!-- bench:NAME begin -->`` and ``<!-- bench:NAME end -->``; only the
sections that ran are rewritten, the others are kept, and a section not yet
in the file is appended.

Without ``--impl`` (``make bench``) the main rows measure minidb's fast
implementation and every minidb path is measured again under the reference,
for each section's *fast ÷ reference* table. ``--impl fast`` or ``--impl
reference`` measures that one implementation only, in half the time (while
writing a twin, say), and leaves the comparison out.

A benchmark is a module with ``run() -> str`` returning its Markdown. Modules
are imported only when their section runs, so a benchmark with heavy
dependencies (Spark) costs nothing to the others.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

from bench import report

# Section name -> module; the order is the order of a full run.
SECTIONS = {
    "log": "bench.log_bench",
    "pagestore": "bench.pagestore_bench",
    "btree": "bench.btree_bench",
    "rtree": "bench.rtree_bench",
    "locks": "bench.locks_bench",
    "logstore": "bench.logstore_bench",
    "cleaner": "bench.cleaner_bench",
    "spark": "bench.spark_bench",
    "transactions": "bench.txn_bench",
    "logspace": "bench.logspace_bench",
    "vlsn": "bench.vlsn_bench",
    "replication": "bench.replication_bench",
    "bulkload": "bench.bulkload_bench",
    "commits": "bench.commit_bench",
    "lockwaits": "bench.lockwait_bench",
    "peers": "bench.peers_bench",
    "scaling": "bench.scaling_bench",
}
# Sections about minidb against other engines, or about how its costs grow, not about its twins: they
# measure the main implementation only, and have no fast ÷ reference table.
MAIN_ONLY = ("peers", "scaling")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description="Run benchmarks and rewrite their sections of BENCHMARKS.md.")
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"sections to run (default: all of {', '.join(SECTIONS)})")
    parser.add_argument("--impl", choices=(report.FAST, report.REFERENCE),
                        help=f"measure only this implementation of minidb (default: {report.MAIN_DEFAULT}, "
                             f"and every minidb path again under {report.REFERENCE} for the ratio)")
    parser.add_argument("--out", default=report.BENCHMARKS_MD, metavar="PATH",
                        help="the Markdown file whose sections are rewritten (default: BENCHMARKS.md)")
    args = parser.parse_args(argv)
    args.names = args.names or list(SECTIONS)
    unknown = [n for n in args.names if n not in SECTIONS]
    if unknown:
        parser.error(f"unknown section {', '.join(unknown)}; known: {', '.join(SECTIONS)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    report.configure(args.impl or report.MAIN_DEFAULT, compare=args.impl is None)
    for name in args.names:
        start = time.perf_counter()
        # Untimed setup (logs generated to be read, say) runs under the main implementation too.
        with report.running(report.main_impl()):
            markdown = importlib.import_module(SECTIONS[name]).run()
        # Written after each section, so a later failure keeps the earlier results.
        report.write_section(name, markdown, args.out)
        print(markdown)
        print(f"[bench {name}: {time.perf_counter() - start:.1f} s, "
              f"section written to {args.out}]", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
