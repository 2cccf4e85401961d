"""Run benchmarks and rewrite their sections of ``BENCHMARKS.md``.

Usage: ``python -m bench [NAME...]`` from the repository root (``make
bench``); with no names, every benchmark runs. Each name is a section of
``BENCHMARKS.md`` between ``<!-- bench:NAME begin -->`` and ``<!-- bench:NAME
end -->``; only the sections that ran are rewritten, the others are kept, and
a section not yet in the file is appended.

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
}


def parse_args(argv: list[str]) -> list[str]:
    parser = argparse.ArgumentParser(prog="python -m bench", description="Run benchmarks and rewrite their sections of BENCHMARKS.md.")
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"sections to run (default: all of {', '.join(SECTIONS)})")
    names = parser.parse_args(argv).names or list(SECTIONS)
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        parser.error(f"unknown section {', '.join(unknown)}; known: {', '.join(SECTIONS)}")
    return names


def main(argv: list[str] | None = None) -> int:
    names = parse_args(sys.argv[1:] if argv is None else argv)
    for name in names:
        start = time.perf_counter()
        markdown = importlib.import_module(SECTIONS[name]).run()
        # Written after each section, so a later failure keeps the earlier results.
        report.write_section(name, markdown)
        print(markdown)
        print(f"[bench {name}: {time.perf_counter() - start:.1f} s, "
              f"section written to {report.BENCHMARKS_MD}]", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
