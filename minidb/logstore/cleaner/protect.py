"""The protection registry (JE's ``FileProtector``): who still needs which log files.

The cleaner may delete a cleaned file only when nobody still reads it. A
reader that needs old files (a feeder sending the log to a replica, a
backup copying files, recovery) *protects* a range of files under a name
for as long as it reads them, then releases it::

    feeding = protector.protect("feeder replica-2", first_file=3)       # files 3 and up
    ...                                                                 # file 3 stays
    protector.release(feeding)                                          # may go at the next checkpoint

Invariants: a file is protected while at least one registered range holds
it (ranges may overlap; each is released on its own); a protected file is
never deleted (checkpoint step 9 keeps it for a later checkpoint).

The registry also holds the *deletion listeners*: called with a file number
just before the files up to it are deleted, so that an index over the log
(replication's VLSN index, :meth:`~minidb.replication.vlsn.index.VLSNIndex.before_file_deletion`,
which truncates it with ``truncate_head_for_file``) forgets those files
first. A listener that returns False keeps the files (the index could not
let go of them); a later checkpoint tries again. The log store does not know replication: it
registers itself here (layers only import downwards).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from minidb.errors import UserError


@dataclass(frozen=True, eq=False)
class ProtectedFileSet:
    """Files ``first_file`` .. ``last_file`` (None: every file from ``first_file`` on), held by ``name``."""

    name: str
    first_file: int
    last_file: int | None = None

    def holds(self, number: int) -> bool:
        return number >= self.first_file and (self.last_file is None or number <= self.last_file)

    def __str__(self) -> str:
        last = "" if self.last_file is None else str(self.last_file)
        return f"{self.name} (files {self.first_file}..{last})"


class FileProtector:
    def __init__(self) -> None:
        self.sets: list[ProtectedFileSet] = []
        self.deletion_listeners: list[Callable[[int], object]] = []

    def protect(self, name: str, first_file: int, last_file: int | None = None) -> ProtectedFileSet:
        if not isinstance(first_file, int) or first_file < 1 or (last_file is not None and last_file < first_file):
            raise UserError(f"{name}: cannot protect files {first_file!r}..{last_file!r} (first >= 1, last >= first)")
        protected = ProtectedFileSet(name, first_file, last_file)
        self.sets.append(protected)
        return protected

    def release(self, protected: ProtectedFileSet) -> None:
        if protected not in self.sets:
            raise UserError(f"{protected} is not protected (released already?)")
        self.sets.remove(protected)

    def protected_by(self, number: int) -> list[str]:
        return [str(s) for s in self.sets if s.holds(number)]

    def is_protected(self, number: int) -> bool:
        return any(s.holds(number) for s in self.sets)

    def add_deletion_listener(self, listener: Callable[[int], bool]) -> None:
        """``listener(last_file)`` runs before files up to ``last_file`` are deleted; False keeps them."""
        self.deletion_listeners.append(listener)

    def before_deleting(self, last_file: int) -> bool:
        """Whether every listener lets files up to ``last_file`` go (the first refusal stops)."""
        return all(listener(last_file) is not False for listener in self.deletion_listeners)


__all__ = ["FileProtector", "ProtectedFileSet"]
