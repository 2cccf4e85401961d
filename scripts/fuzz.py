"""The full corruption harness (`make fuzz`): every case of every engine, a table of outcomes.

Builds each engine's state (tests/corruption), applies every case of the
full list (every bit of every header, every boundary cut, every file
deleted, seeded samples of item and page bytes) to a fresh copy, runs
`minidb verify` and the engine's open on it, and prints, per engine and
kind of damage, how many cases were detected, intact, a crash-like prefix,
refused, missed, WRONG, LOST or CRASH (see tests/corruption/classify.py).
Then the first bad cases, each with its engine, file, offset, kind and what
was returned. Exit status 1 if any case was WRONG, LOST or CRASH.

The table also goes, as Markdown, between the fuzz markers of
``RELIABILITY.md`` (``--out``), with what was run and how long it took
(the rest of the file is kept; ``--out -`` writes nowhere).

    python scripts/fuzz.py                       # everything
    python scripts/fuzz.py --engine pagestore    # one engine (repeat for more)
    python scripts/fuzz.py --per-group 50        # a seeded sample of each (engine, kind, file)
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sweep import write_table  # noqa: E402  (scripts/sweep.py, beside this file)

from tests.corruption import BUILDERS  # noqa: E402
from tests.corruption.cases import SEED, all_cases, sample  # noqa: E402
from tests.corruption.classify import BAD, run_cases, table  # noqa: E402

BEGIN = "<!-- fuzz table: written by `make fuzz` (scripts/fuzz.py); edits between these lines are lost -->"
END = "<!-- end of fuzz table -->"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fuzz", description=__doc__.splitlines()[0])
    parser.add_argument("--engine", action="append", choices=sorted(BUILDERS),
                        help="only this engine's state (repeatable; default: all)")
    parser.add_argument("--per-group", type=int, default=None,
                        help="a seeded sample of at most this many cases per (engine, kind, file)")
    parser.add_argument("--seed", type=int, default=SEED, help="seed of the sampled bytes and of --per-group")
    parser.add_argument("--show", type=int, default=30, help="how many bad cases to list (default 30)")
    parser.add_argument("--out", default="RELIABILITY.md",
                        help="the file to write the table to, between its fuzz markers ('-': none)")
    args = parser.parse_args(argv)
    started = time.perf_counter()

    work = []
    for engine in args.engine or list(BUILDERS):
        state = BUILDERS[engine]()
        cases = all_cases(state, args.seed)
        if args.per_group is not None:
            cases = sample(cases, args.per_group, args.seed)
        work.append((state, cases))
    results = []
    with tempfile.TemporaryDirectory(prefix="minidb-fuzz-") as tmp, \
            tqdm(total=sum(len(cases) for _, cases in work), unit="case") as bar:
        for state, cases in work:
            bar.set_description(state.engine)
            results += run_cases(state, cases, Path(tmp) / "case", bar.update)
    print(table(results))
    bad = [result for result in results if result.outcome in BAD]
    if args.out != "-":
        which = "Every case" if args.per_group is None else f"A seeded sample of at most {args.per_group} cases per group"
        engines = "every engine" if not args.engine else ", ".join(args.engine)
        write_table(Path(args.out), table(results, markdown=True) + f"\n\n{which} of {engines} (seed {args.seed}), "
                    f"{time.perf_counter() - started:,.0f} s of wall-clock time; {len(bad)} WRONG, LOST or CRASH.",
                    BEGIN, END)
    for result in bad[:args.show]:
        print(result)
    if len(bad) > args.show:
        print(f"... and {len(bad) - args.show} more")
    print(f"{len(bad)} bad cases of {len(results)}" if bad else f"no bad case in {len(results)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
