"""The ``minidb`` command line.

Subcommands (``minidb COMMAND --help`` for each)::

    tour       exercise every part of minidb, print what happens, write figures
    printlog   print log entries, one line each, like JE's DbPrintLog
    verify     check every entry of a log; exit 1 at the first problem
    crashtest  crash a random workload at every write and fsync, check recovery
    figures    regenerate the pictures in figures/
    generate   write environments with seeded random workloads (for the pipeline)
    spark      the data pipeline on Apache Spark: minidb spark analyze PATH
    grade      grade student.py of an exercise or a project: every test, its points, why it failed
    group      a replication group of processes over TCP: minidb group demo
    quiz       practice and exam problems from seeded runs, answered by the engine
    course     course projects: minidb course export --project NAME --out DIR

Exit codes: 0 success; 1 a check failed (corruption found, a crash-test
violation); 2 a user error (a missing directory, not a minidb log, a bad
LSN). Errors are printed as one line on stderr, never as a traceback.
"""

from __future__ import annotations

import argparse
import sys

from minidb.errors import CorruptionError, MinidbError
from minidb.impl import ExerciseError, StudentCodeError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> Parser:
    from minidb.cli import course, crashtest, figures, generate, grade, group, printlog, quiz, spark, tour, verify

    parser = Parser(prog="minidb", description="minidb, a teaching storage engine")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands.required = True
    for module in (tour, printlog, verify, crashtest, figures, generate, spark, grade, group, quiz, course):
        module.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if hasattr(args, "impl"):
            from minidb.cli.common import apply_impl
            apply_impl(args)
        return args.run(args)
    except ExerciseError as e:  # the student's code cannot be used (see minidb.impl)
        print(f"minidb {args.command}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except StudentCodeError as e:  # the student's code failed inside the engine
        print(f"minidb {args.command}: failed: {e}", file=sys.stderr)
        return EXIT_FAILED
    except CorruptionError as e:
        print(f"minidb {args.command}: corrupt: {e}", file=sys.stderr)
        return EXIT_FAILED
    except MinidbError as e:
        print(f"minidb {args.command}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        sys.stderr.close()  # the reader (e.g. `head`) went away; nothing to report
        return EXIT_OK
    except OSError as e:
        # Outside the disk layer (figures, Parquet output): a path the user gave cannot be written.
        where = f"{e.filename}: " if e.filename else ""
        print(f"minidb {args.command}: error: {where}{e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"minidb {args.command}: interrupted", file=sys.stderr)
        return 130
