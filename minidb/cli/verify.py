"""``minidb verify DIR``: check every entry of every log file."""

from __future__ import annotations

import sys

from minidb.cli.common import log_disk
from minidb.log.verify import verify_log


def register(commands) -> None:
    p = commands.add_parser("verify", help="check a log; exit 1 at the first problem")
    p.add_argument("dir", help="the log's directory")
    p.set_defaults(run=run)


def run(args) -> int:
    import minidb.cli.engines  # noqa: F401  (registers every engine's entry types)

    report = verify_log(log_disk(args.dir))
    for note in report.notes:
        print(f"note: {note}")
    if report.problem is not None:
        print(f"problem: {report.problem}")
        return 1
    print(f"ok: {report.files} files, {report.entries} entries, the log ends at {report.end}")
    return 0
