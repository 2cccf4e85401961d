"""Observability shared by every component: named statistics and traces.

Like JE's stat groups (``eraserFilesErased``, ``nCheckpoints``...), each
component owns a :class:`Stats` object: a small ordered mapping of counter
name to integer, with a group name for printing. Components also emit a
:class:`Trace` of the steps they take ("CkptStart logged at 0x3/0x1a0");
notebooks step through traces and tests assert on them.

Both are plain in-memory objects; they are never written to disk.

Example, the simulated disk of the tour's first section after two appends
and one fsync::

    Stats[disk](writes=2, bytesWritten=17, fsyncs=1, truncates=0, reads=0, bytesRead=0, crashes=0)

``stats["fsyncs"]`` is 1; a name never counted reads as 0. Counters take a
small lock of their own, so threads (group commit, lock scenarios) may count
concurrently, whatever other lock each holds. :meth:`Stats.add_each` counts
several counters under one take of the lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator


class Stats:
    """Named integer counters of one component (one "stat group")."""

    def __init__(self, group: str, names: list[str] | tuple[str, ...] = ()):
        self.group = group
        self._lock = threading.Lock()
        self._values: dict[str, int] = {name: 0 for name in names}

    def add(self, name: str, amount: int = 1) -> None:
        with self._lock:
            self._values[name] = self._values.get(name, 0) + amount

    def add_each(self, names: tuple[str, ...]) -> None:
        """``add(name)`` for each of ``names``, under one take of the lock."""
        with self._lock:
            values = self._values
            for name in names:
                values[name] = values.get(name, 0) + 1

    def set(self, name: str, value: int) -> None:
        with self._lock:
            self._values[name] = value

    def __getitem__(self, name: str) -> int:
        return self._values.get(name, 0)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._values))

    def as_dict(self) -> dict[str, int]:
        with self._lock:
            return dict(self._values)

    def reset(self) -> None:
        with self._lock:
            for name in self._values:
                self._values[name] = 0

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v}" for k, v in self.as_dict().items())
        return f"Stats[{self.group}]({body})"


class Trace:
    """An append-only list of human-readable steps, with optional listeners.

    ``trace.emit("CkptStart logged at %s", lsn)`` records one line. A listener
    (for example a notebook cell printing live) is called with each line.
    """

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.lines: list[str] = []
        self._listeners: list[Callable[[str], None]] = []

    def emit(self, message: str, *args: object) -> None:
        if not self.enabled:
            return
        line = message % args if args else message
        self.lines.append(line)
        for listener in self._listeners:
            listener(line)

    def listen(self, listener: Callable[[str], None]) -> None:
        self._listeners.append(listener)

    def clear(self) -> None:
        self.lines.clear()

    def __iter__(self) -> Iterator[str]:
        return iter(self.lines)

    def __len__(self) -> int:
        return len(self.lines)
