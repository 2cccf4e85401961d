"""One engine's fsynced, committed on-disk state, and what reading it back must give.

A builder (``build_log``, ``build_pagestore``, ``build_logstore``,
``build_replication``) runs a small seeded workload on a
:class:`~minidb.io.SimDisk` with a fixed clock, makes everything durable and
returns a :class:`State`:

- ``files``: every file's fsynced bytes (the image the harness damages);
- ``read``: opens the engine on a disk holding such an image and reads every
  committed item through the engine's public API (what a user would see);
- ``model``: the committed data, read through the engine's public API
  right after the build (and checked against the builder's own model);
- ``model_at(lsn)``: the committed data of the log prefix that ends at
  ``lsn`` (kept while building: after each commit, the LSN where it became
  durable and the data at that point), for cuts of the last log file;
- ``layouts``: the files that are not log files, each as fixed-size units
  with a header (the page store's volume pages, the master's slots);
- ``prefix_floor``: the first LSN at which the log may end without another
  durable record contradicting it (the page store's master checkpoint and
  the LSNs of pages on the volume; the start of the log for engines whose
  whole state is the log);
- ``sibling``: the files of a *sibling* environment, built by the same
  builder with other values of the same sizes and another environment seed
  (:mod:`minidb.log.envid`): its log files have the same numbers and the
  same ``last_entry_lsn`` chain, and only the environment id tells them apart;
- ``older``: older copies of each file, its durable bytes at snapshots
  taken partway through the build (:class:`Snapshots`), as a restore from
  an older backup of one file would leave it.

Log file names and entry boundaries come from :mod:`minidb.log`
(:func:`~minidb.log.inspect_file`), so the case list follows the real
layout of whatever the engine wrote.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from minidb.io import Disk, SimDisk
from minidb.log import LSN, file_number, inspect_file

LOG_START = LSN(1, 0)


def fixed_clock() -> float:
    return 1_700_000_000.0


@dataclass
class History:
    """The committed data after each commit, with the LSN where that commit became durable."""

    empty: Any
    points: list[tuple[LSN, Any]] = field(default_factory=list)

    def commit(self, durable_end: LSN, model: Any) -> None:
        self.points.append((durable_end, model))

    def at(self, end: LSN) -> Any:
        """The data of the last commit wholly before ``end`` (the empty data if none)."""
        found = self.empty
        for durable_end, model in self.points:
            if durable_end <= end:
                found = model
        return found


@dataclass(frozen=True)
class Layout:
    """A file of fixed-size units (the volume's pages, the master's slots): the unit size and,
    within each unit, the header bytes (every bit of them is flipped) and the trailing footer."""

    unit: int
    header: int
    footer: int = 0


@dataclass
class State:
    engine: str
    files: dict[str, bytes]
    model: Any
    model_at: Callable[[LSN], Any]
    read: Callable[[Disk], Any]
    prefix_floor: LSN = LOG_START
    layouts: dict[str, Layout] = field(default_factory=dict)
    sibling: dict[str, bytes] = field(default_factory=dict)
    older: dict[str, list[bytes]] = field(default_factory=dict)

    @cached_property
    def log_files(self) -> list[str]:
        return sorted(name for name in self.files if file_number(name) is not None)

    @property
    def last_log_file(self) -> str:
        return self.log_files[-1]

    def entries(self, name: str) -> list[tuple[int, int, int]]:
        """(offset, header size, entry size) of every entry of a log file of the image."""
        inspection = inspect_file(self.files[name], file_number(name))
        assert inspection.problem is None, (self.engine, name, inspection.problem)
        return [(offset, header.size, header.entry_size) for offset, header in inspection.entries]

    def end_of(self, name: str) -> LSN:
        """The LSN just past a log file's last entry."""
        offset, _, size = self.entries(name)[-1]
        return LSN(file_number(name), offset + size)


def image_of(disk: SimDisk) -> dict[str, bytes]:
    """Every file's durable bytes; the build must have made everything durable."""
    files = {}
    for name in disk.list():
        durable = disk.durable_bytes(name)
        with disk.open(name) as handle:
            assert handle.read_all() == durable, f"{disk.where(name)} has unsynced writes"
        files[name] = durable
    return files


class Snapshots:
    """The durable bytes of every file of a disk, taken at points of a build; then, for each file of
    the final image, at most ``KEEP`` older copies that differ from it (the oldest and the newest)."""

    KEEP = 2

    def __init__(self, disk: SimDisk):
        self.disk = disk
        self.taken: list[dict[str, bytes]] = []

    def take(self) -> None:
        self.taken.append({name: self.disk.durable_bytes(name) for name in self.disk.list()})

    def older(self, final: dict[str, bytes]) -> dict[str, list[bytes]]:
        copies: dict[str, list[bytes]] = {}
        for name, data in sorted(final.items()):
            versions = []
            for snapshot in self.taken:
                old = snapshot.get(name)
                if old is not None and old != data and old not in versions:
                    versions.append(old)
            if versions:
                copies[name] = sorted({versions[0], versions[-1]}, key=versions.index)[: self.KEEP]
        return copies


def disk_with(files: dict[str, bytes], name: str = "image") -> SimDisk:
    """A fresh simulated disk holding ``files``, all durable."""
    disk = SimDisk(name)
    for file_name, data in files.items():
        with disk.open(file_name, create=True) as handle:
            handle.write(0, data)
            handle.fsync()
    return disk


def files_of(disk: Disk) -> dict[str, bytes]:
    """Every file's current bytes."""
    files = {}
    for name in disk.list():
        with disk.open(name) as handle:
            files[name] = handle.read_all()
    return files
