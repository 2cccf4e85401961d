"""The log's crash test: every crash point of a random workload, checked.

A seeded workload appends ``Trace`` entries of random sizes (some larger than
a whole file), flushes now and then and syncs now and then, on a simulated
disk with a small ``file_max`` so that it spans several files. Each ``sync``
that returns is a promise: everything appended before it survives any crash.

Then, for every write, truncate and fsync of the disk's history, and for
each way a crash can treat the unsynced writes (keep none, keep all, torn
variants of the last write, random subsets), the log is reopened on the
crashed image and checked:

1. opening succeeds (a crash never looks like corruption);
2. the entries that survived are exactly a prefix of those appended;
3. the prefix contains every entry a ``sync`` had promised;
4. the log accepts a new entry after the crash, and a second reopen reads
   the same prefix followed by it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from minidb.crashtest.sweep import SweepResult, sweep_crash_points
from minidb.errors import MinidbError
from minidb.io import SimDisk
from minidb.log import TRACE, LogManager


@dataclass(frozen=True)
class Workload:
    disk: SimDisk
    messages: list[str]
    promised: list[tuple[int, int]]  # (event index of the fsync, entries promised durable)
    file_max: int
    buffer_size: int


def run_workload(seed: int, ops: int) -> Workload:
    rng = random.Random(seed)
    file_max = rng.choice([256, 400, 700])
    buffer_size = rng.choice([1, 64, 200, 1000])
    disk = SimDisk(f"crashtest-log-{seed}")
    log = LogManager(disk, file_max=file_max, buffer_size=buffer_size, clock=lambda: 0.0)
    messages: list[str] = []
    promised: list[tuple[int, int]] = []
    for i in range(ops):
        roll = rng.random()
        if roll < 0.6:
            length = rng.choice([0, 1, 10, 40, 90]) if rng.random() < 0.95 else file_max + 50
            message = f"{seed}:{i}:" + "x" * length
            log.append(TRACE, {"message": message})
            messages.append(message)
        elif roll < 0.8:
            log.sync()
            promised.append((len(disk.events) - 1, len(messages)))
        else:
            log.flush()
    return Workload(disk, messages, promised, file_max, buffer_size)


def _promised_at(workload: Workload, event_index: int) -> int:
    count = 0
    for fsync_index, promised in workload.promised:
        if fsync_index <= event_index:
            count = max(count, promised)
    return count


def _messages(log: LogManager) -> list[str]:
    return [e.values["message"] for e in log.scan() if e.entry_type is TRACE]


def check_point(workload: Workload, image: SimDisk, promised: int) -> str | None:
    """None if the crashed image is a correct log; otherwise what is wrong."""
    try:
        log = LogManager(image, file_max=workload.file_max, buffer_size=workload.buffer_size, clock=lambda: 0.0)
        survivors = _messages(log)
    except MinidbError as e:
        return f"reopening failed: {e}"
    if survivors != workload.messages[: len(survivors)]:
        first = next((i for i, (a, b) in enumerate(zip(survivors, workload.messages, strict=False)) if a != b),
                     len(workload.messages))
        what = "differs" if first < len(workload.messages) else "was never written"
        return f"survivors are not a prefix: entry {first} {what}"
    if len(survivors) < promised:
        return f"only {len(survivors)} entries survived, but {promised} were synced"
    try:
        log.append(TRACE, {"message": "after the crash"})
        log.close()
        again = _messages(LogManager(image, file_max=workload.file_max, clock=lambda: 0.0))
    except MinidbError as e:
        return f"writing after the crash failed: {e}"
    if again != survivors + ["after the crash"]:
        return f"after a new entry and a reopen the log reads {len(again)} entries, expected {len(survivors) + 1}"
    return None


def crash_sweep(seed: int, ops: int, torn_variants: int = 2, random_variants: int = 1) -> SweepResult:
    """Every crash point of workload ``seed``; a crash image is checked once for each promise it is held to."""
    workload = run_workload(seed, ops)
    return sweep_crash_points(workload.disk, 0, seed,
                              lambda image, event: check_point(workload, image, _promised_at(workload, event)),
                              (), torn_variants, random_variants, restart_crashes=0.0,
                              memo_key=lambda event: _promised_at(workload, event))
