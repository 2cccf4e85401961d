"""Helpers shared by the subcommands: argument types and opening a log to inspect.

The argument types turn bad input into argparse usage errors, which
:class:`minidb.cli.Parser` prints as one line before exiting with code 2:
``lsn_arg("0x1/0x26")`` is ``LSN(0x1/0x26)`` (file 1, offset 38), while
``lsn_arg("1/26")`` fails with "bad LSN '1/26': expected the form
0x<file>/0x<offset>, e.g. 0x1/0x26"; ``positive_int("0")`` says "must be at least 1: 0";
``path_arg("")`` says "an empty path". ``seed_arg`` takes a random seed: a non-negative
integer below :data:`SEED_LIMIT` (2**63, what a signed 64-bit integer holds, so a seed prints,
stores and passes to other programs unchanged); ``seed_arg("-1")`` says "must be at least 0: -1".
``seed_count`` bounds how many seeds one run may ask for (:data:`MAX_SEEDS`).

``log_disk(path)`` opens a log's directory read-only: ``printlog`` and
``verify`` never change what they inspect (a torn tail is reported, not cut).
``environment_id(disk)`` is the id the log files must carry when something
other than the log knows it: a page store's volume header (else None: the
log's first file decides, :mod:`minidb.log.check`).
"""

from __future__ import annotations

import argparse

from minidb import impl
from minidb.io import Disk, OSDisk
from minidb.log import LSN
from minidb.pagestore.volume.volfile import volume_env_id


def lsn_arg(text: str) -> LSN:
    """argparse type for ``0x1/0x26``; a bad LSN becomes a one-line usage error."""
    try:
        return LSN.parse(text)
    except Exception as e:  # UserError with the expected form
        raise argparse.ArgumentTypeError(str(e)) from None


def int_at_least(minimum: int, maximum: int | None = None, why: str = ""):
    """An argparse type: an integer from ``minimum`` (to ``maximum``, if given, with the reason
    ``why``), else a one-line usage error."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}: {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum:,}{why}: {value}")
        return value

    return parse


def path_arg(text: str) -> str:
    """argparse type for a file or directory the user names: an empty one is a usage error."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path")
    return text


positive_int = int_at_least(1)
non_negative_int = int_at_least(0)

SEED_LIMIT = 2**63  # every --seed is below it
MAX_SEEDS = 100_000  # every seed is a whole workload (a crash sweep runs for seconds to minutes)
seed_arg = int_at_least(0, SEED_LIMIT - 1, " (a seed is below 2**63)")
seed_count = int_at_least(1, MAX_SEEDS, " (each seed is a whole workload)")


def log_disk(path: str) -> OSDisk:
    """The directory of a log, opened read-only (inspecting never changes it)."""
    return OSDisk(path, readonly=True)


def environment_id(disk: Disk) -> int | None:
    """The environment id a page store's volume records (None for any other log): the arbiter of which
    log files belong (:mod:`minidb.pagestore.volume.volheader`)."""
    return volume_env_id(disk)


def add_impl_option(p) -> None:
    """``--impl`` and ``--exercise`` on a command that runs the engine (``main`` applies them before it runs)."""
    p.add_argument("--impl", choices=impl.MODES, default=None,
                   help="the engine as written to be read (reference), with its accelerated twins from "
                        "minidb/fast/ (fast), or with the exercises' student.py files where an exercise plugs "
                        f"in (student) (default: ${impl.ENV_VAR}, else reference)")
    p.add_argument("--exercise", action="append", metavar="NN", default=None,
                   help="with --impl student: only this exercise's function (e.g. 08a; repeat for more); "
                        "default: every plugged exercise")
    p.add_argument("--project", action="append", metavar="NAME", default=None,
                   help="with --impl student: the engine builds this course project's component from "
                        "exercises/projects/NAME/student.py (e.g. buffer_pool; repeat for more); "
                        "the exercises' functions then run only if named with --exercise")


def apply_impl(args) -> None:
    """Choose the implementation a command's ``--impl``, ``--exercise`` and ``--project`` name (see minidb.impl)."""
    for option in ("exercise", "project"):
        names = getattr(args, option, None)
        if names and (args.impl or impl.mode()) != impl.STUDENT:
            raise impl.ExerciseError(f"--{option} {' '.join(names)}: only with --impl {impl.STUDENT}")
    projects = getattr(args, "project", None) or []
    unknown = [name for name in projects if name not in impl.projects()]
    if unknown:
        raise impl.ExerciseError(f"--project {unknown[0]}: no project {unknown[0]!r} in "
                                 f"{impl.exercises_dir() / impl.PROJECTS} (projects: {', '.join(impl.projects()) or 'none'})")
    impl.use(args.impl, only=(args.exercise or []) + projects or None)
