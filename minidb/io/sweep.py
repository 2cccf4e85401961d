"""The outcome of a crash sweep, shared by every engine's crash test.

A crash test runs a seeded workload on a :class:`~minidb.io.simdisk.SimDisk`,
then, for every crash point (:func:`~minidb.io.simdisk.crash_points`),
reopens what the crash left and compares it with a model of what must have
survived. :class:`SweepResult` counts the points and collects violations; its
summary line is what ``minidb crashtest`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SweepResult:
    points: int = 0
    violations: list[str] = field(default_factory=list)

    def add(self, other: "SweepResult") -> None:
        self.points += other.points
        self.violations.extend(other.violations)

    @property
    def ok(self) -> bool:
        return not self.violations

    def summary(self) -> str:
        return f"crash points: {self.points}, violations: {len(self.violations)}"
