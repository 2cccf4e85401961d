"""Running one case and saying what came of it.

For each :class:`~tests.corruption.cases.Case`, on a fresh copy of the
state's files with the damage applied:

1. ``minidb verify DIR`` runs on a directory holding the damaged files (the
   command itself, in this process; exit 1 means it reported corruption);
2. the engine opens on a simulated disk holding the same files and reads
   every committed item (the state's ``read``), and the files' bytes before
   and after are compared.

Outcomes, the first that applies:

==============  ==============================================================
``CRASH``       verify or open raised an exception that is not a minidb error
                (a traceback), or verify exited with another code than 0, 1, 2
``LOST``        open cut, changed or deleted what it had no right to: a log
                file is append-only, so any byte of it before the end changed
                or removed (but for a tail that a crash could have torn, see
                below), or any other file shrank or vanished
``detected``    verify exited 1, or open raised a corruption error
                (a :class:`~minidb.errors.CorruptionError`, the base of every
                engine's damage errors): the damage was reported, naming where
``refused``     open raised another minidb error (a clear one-line error, but
                not reported as corruption)
``intact``      open returned exactly the committed data
``prefix``      the damage leaves what a crash could leave, a log that ends
                earlier, and open returned exactly the committed data of
                that shorter log (see below)
``missed``      a truncation or deletion that a crash cannot explain went
                unreported, yet what open returned was exact
``WRONG``       open returned data different from the committed data, with
                no error: partial, altered, or more than was committed
==============  ==============================================================

``WRONG``, ``LOST`` and ``CRASH`` are failures (:data:`BAD`).

**Prefix cases.** Cutting the *last* log file at an entry boundary, or
deleting it, leaves exactly the state a crash could leave had those entries
never been written; so does damage inside the last entry of the last file
(it looks like a torn write). No engine can tell such a log from a crash's
without a second durable record of each commit, so for these cases the
engine may treat the damaged part as a torn tail: cutting it is allowed,
and the data it must return is the committed data of the log prefix that
remains (``state.model_at(cut)``: the commits durable before the cut, never
a part of a transaction). A cut before ``state.prefix_floor`` is not such a
case (the page store's master checkpoint, or a page on its volume, is newer
than the cut: no crash leaves that), and must be detected.

**Files from elsewhere.** A ``sibling-file`` (the same-numbered log file of
a sibling environment: same numbers, same ``last_entry_lsn`` chain) must be
detected: its environment id differs, and nothing else does. An
``older-copy`` of the *last* log file that is a prefix of it is the same as
a cut there (a prefix case, detected below ``prefix_floor``); an older copy
of any other log file must be detected (it ends before the next file's
``FileHeader`` says). An older ``master`` or ``loghead`` is judged by what
comes back (an older master checkpoint only sends restart further back:
intact), and an older volume is refused by its checkpoint stamp
(:mod:`minidb.pagestore.volume.volfile`).
"""

from __future__ import annotations

import contextlib
import functools
import io
import shutil
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import minidb.cli
from minidb.errors import CorruptionError, MinidbError
from minidb.log import LSN, file_number

from tests.corruption.cases import KINDS, Case
from tests.corruption.state import State, disk_with, files_of

OUTCOMES = ("detected", "intact", "prefix", "refused", "missed", "WRONG", "LOST", "CRASH")
BAD = ("WRONG", "LOST", "CRASH")
MAX_DETAIL = 160


@dataclass(frozen=True)
class Result:
    case: Case
    outcome: str
    detail: str

    def __str__(self) -> str:
        return f"{self.outcome}: {self.case}: {self.detail}"


def is_corruption_error(error: BaseException) -> bool:
    return isinstance(error, CorruptionError)


def prefix_cut(state: State, case: Case) -> LSN | None:
    """Where the log ends if this damage could be a crash's (see the module documentation), else None."""
    if case.file != state.last_log_file:
        return None
    number = file_number(case.file)
    if case.kind == "sibling-file":
        return None
    if case.kind == "older-copy":  # the file as it was when it ended earlier: a crash's, if a prefix
        if not state.files[case.file].startswith(case.replacement):
            return None
        cut = LSN(number, len(case.replacement))
    elif case.kind in ("truncate-at-boundary", "delete-file"):
        cut = LSN(number, case.offset)
    else:
        last_entry = state.entries(case.file)[-1][0]
        if case.offset < last_entry:
            return None
        cut = LSN(number, last_entry)
    return cut if cut >= state.prefix_floor else None


def must_detect(state: State, case: Case, cut: LSN | None) -> bool:
    if case.kind == "sibling-file":
        return True  # another environment's file: only its environment id tells, and it must
    if case.kind == "older-copy":
        return cut is None and file_number(case.file) is not None  # a log file no crash leaves so
    return cut is None and case.kind in ("truncate-at-boundary", "delete-file")


# The command's parser is built once: building it costs more than verifying a small log.
_parser = functools.cache(minidb.cli.build_parser)


def run_verify(files: dict[str, bytes], workdir: Path) -> tuple[int, str]:
    """``minidb verify`` on a directory holding ``files``: (exit code, the last line it printed)."""
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    for name, data in files.items():
        (workdir / name).write_bytes(data)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), \
            mock.patch.object(minidb.cli, "build_parser", _parser):
        try:
            code = minidb.cli.main(["verify", str(workdir)])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 2
    lines = out.getvalue().strip().splitlines()
    return code, lines[-1] if lines else ""


def lost(before: dict[str, bytes], after: dict[str, bytes], cut_file: str | None, cut_offset: int) -> str | None:
    """What open removed or changed that it had no right to (None: nothing)."""
    for name, old in sorted(before.items()):
        new = after.get(name)
        if new is None:
            return f"{name} was deleted"
        if file_number(name) is None:
            if len(new) < len(old):
                return f"{name} was cut from {len(old)} to {len(new)} bytes"
            continue
        keep = cut_offset if name == cut_file else len(old)
        if new[:keep] != old[:keep]:
            at = next((i for i in range(min(keep, len(new))) if new[i] != old[i]), min(keep, len(new)))
            return f"{name} lost or changed fsynced bytes at offset 0x{at:x} (it had {len(old)}, now {len(new)})"
    return None


def run_case(state: State, case: Case, workdir: Path) -> Result:
    damaged = case.apply(state.files)
    try:
        code, said = run_verify(damaged, workdir)
    except Exception as e:  # a traceback out of the command: never acceptable
        return Result(case, "CRASH", f"verify: {_one_line(e)}")
    if code not in (0, 1, 2):
        return Result(case, "CRASH", f"verify exited {code}: {said}")
    cut = prefix_cut(state, case)
    disk = disk_with(damaged)
    before = files_of(disk)
    got: Any = None
    error: MinidbError | None = None
    try:
        got = state.read(disk)
    except MinidbError as e:
        error = e
    except Exception as e:
        return Result(case, "CRASH", f"open: {_one_line(e)}")
    cut_file, cut_offset = (state.last_log_file, cut.offset) if cut is not None and case.kind != "delete-file" else (None, 0)
    loss = lost(before, files_of(disk), cut_file, cut_offset)
    if loss is not None:
        return Result(case, "LOST", loss)
    if code == 1:
        return Result(case, "detected", f"verify: {said}")
    if error is not None:
        kind = "detected" if is_corruption_error(error) else "refused"
        return Result(case, kind, f"open: {type(error).__name__}: {error}"[:MAX_DETAIL])
    if got == state.model:
        return Result(case, "missed" if must_detect(state, case, cut) else "intact", "the committed data")
    if cut is not None and got == state.model_at(cut):
        return Result(case, "prefix", f"the committed data of the log up to {cut}")
    detail = difference(got, state.model)
    if cut is not None:
        detail = f"{detail}; vs the log up to {cut}: {difference(got, state.model_at(cut))}"
    return Result(case, "WRONG", detail)


def difference(got: Any, want: Any) -> str:
    """A short account of how ``got`` differs from ``want``."""
    if isinstance(got, dict) and isinstance(want, dict):
        for key in sorted(set(got) | set(want), key=repr):
            if key not in got:
                return f"{key!r} missing"[:MAX_DETAIL]
            if key not in want:
                return f"{key!r} not committed: {got[key]!r}"[:MAX_DETAIL]
            if got[key] != want[key]:
                return f"{key!r}: {difference(got[key], want[key])}"[:MAX_DETAIL]
    if isinstance(got, (list, tuple)) and isinstance(want, (list, tuple)) and len(got) != len(want):
        return f"{len(got)} items returned, {len(want)} committed"
    return f"returned {got!r}, committed {want!r}"[:MAX_DETAIL]


def _one_line(error: BaseException) -> str:
    frame = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    where = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    return f"{type(error).__name__}: {error}{where}"[:MAX_DETAIL]


def run_cases(state: State, cases: list[Case], workdir: Path, progress=None) -> list[Result]:
    """Every case on a fresh copy of the state; ``progress`` (if given) is called after each."""
    results = []
    for case in cases:
        results.append(run_case(state, case, workdir))
        if progress is not None:
            progress()
    shutil.rmtree(workdir, ignore_errors=True)
    return results


def table(results: list[Result], markdown: bool = False) -> str:
    """Outcomes per engine and kind of damage, one row each, with a total row (aligned text, or a
    Markdown table for RELIABILITY.md)."""
    counts: dict[tuple[str, str], dict[str, int]] = {}
    for result in results:
        row = counts.setdefault((result.case.engine, result.case.kind), dict.fromkeys(OUTCOMES, 0))
        row[result.outcome] += 1
    order = {kind: i for i, kind in enumerate(KINDS)}
    rows = [[engine, kind, *map(str, row.values())] for (engine, kind), row in counts.items()]
    rows.sort(key=lambda r: (r[0], order[r[1]]))
    total = [sum(1 for r in results if r.outcome == outcome) for outcome in OUTCOMES]
    rows.append(["total", f"{len(results)} cases", *map(str, total)])
    header = ["engine", "damage", *OUTCOMES]
    if markdown:
        return "\n".join(["| " + " | ".join(header) + " |", "|---|---|" + "---:|" * len(OUTCOMES),
                          *("| " + " | ".join(row) + " |" for row in rows)])
    widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]
    lines = [header, ["-" * w for w in widths], *rows]
    return "\n".join("  ".join(cell.ljust(w) if i < 2 else cell.rjust(w)
                               for i, (cell, w) in enumerate(zip(line, widths, strict=True)))
                     for line in lines)
