"""A cleaned file deleted from the middle of the log while a file below it is protected (for notebook 11).

The cleaner demo (:mod:`minidb.viz.cleaner_demo`) keeps the head-only rule,
so a cleaned file above a file in use waits there. This scenario runs the
engine's default rule instead: a backup protects file 1, the cleaner cleans
files above it, and the next checkpoint's step 9 deletes them anyway,
recording their numbers in the deleted-files record
(:mod:`minidb.log.deleted`) first. The log survives a crash (the record tells
the deleted files from lost ones: ``verify`` is clean), and once the backup
lets file 1 go, the log head moves past it and past the recorded files.

:func:`middle_file_steps` is the pure function a notebook draws from: every
step's sentence and each file's state after it (:class:`MiddleStep`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache

from minidb.io import CrashMode, SimDisk
from minidb.log.deleted import read_deleted_files
from minidb.log.verify import verify_log
from minidb.logstore import Environment, EnvironmentConfig
from minidb.viz.cleaner_demo import CLEANED, CURRENT, DB, DELETED, WRITTEN, config

PROTECTED = "protected (a backup copies it)"


def middle_config() -> EnvironmentConfig:
    """The cleaner demo's environment with the engine's default rule: cleaned files go wherever they lie."""
    return dataclasses.replace(config(), cleaner_delete_middle_files=True)


@dataclass(frozen=True)
class MiddleStep:
    """The log after one step: what happened, each file's state, the log head and the deleted-files record."""

    step: int
    said: str
    states: dict[int, str]  # file number -> WRITTEN, CURRENT, CLEANED, PROTECTED or DELETED
    head: int
    recorded: tuple[int, ...]  # the numbers the deleted-files record holds
    verified: bool  # minidb verify finds the log whole


def _states(env: Environment) -> dict[int, str]:
    log, cleaner = env.log, env.cleaner
    last = log.end_lsn.file
    return {n: (DELETED if log.is_deleted(n) else CURRENT if n == last else PROTECTED
                if cleaner.protector.is_protected(n) else CLEANED if n in cleaner.cleaned else WRITTEN)
            for n in range(1, last + 1)}


@lru_cache(maxsize=1)
def middle_file_steps() -> tuple[MiddleStep, ...]:
    """Run the scenario from a fresh simulated disk; the log after each step."""
    disk = SimDisk("middle-files")
    env = Environment.open(disk, middle_config())
    steps: list[MiddleStep] = []

    def record(said: str) -> None:
        steps.append(MiddleStep(len(steps) + 1, said, _states(env), env.log.head,
                                tuple(sorted(read_deleted_files(disk))), verify_log(disk).ok))

    db = env.database(DB)
    for round_ in range(3):
        for i in range(12):
            db.put(f"f{i:02d}", f"filler {round_}")
    db.put("bob", "balance 250")
    env.checkpoint()
    record("36 filler versions written, then bob; a checkpoint")
    backup = env.cleaner.protector.protect("backup", 1, 1)
    record("a backup protects file 1 while it copies it")
    cleaned = [c.file_number for c in env.clean_log()]
    record(f"the cleaner cleans files {cleaned}: they wait for the next CkptEnd")
    env.checkpoint()
    record(f"checkpoint step 9: files {sorted(read_deleted_files(disk))} recorded, then deleted; "
           "file 1 stays (protected)")
    env.cleaner.protector.release(backup)
    record("the backup is done: nobody protects file 1 any more")
    env.crash(CrashMode.nothing())
    env = Environment.open(disk, middle_config())
    record("crash and recovery: the record tells the deleted files from lost ones")
    env.cleaner.clean_file(1)
    env.checkpoint()
    record(f"file 1 is cleaned and deleted: the log head moves to file {env.log.head}")
    env.close()
    return tuple(steps)


__all__ = ["MiddleStep", "middle_file_steps", "middle_config", "PROTECTED"]
