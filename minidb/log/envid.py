"""Choosing a new environment's id: random for real, seeded where runs must repeat.

Every log file carries its environment's id in its ``FileHeader``
(:mod:`minidb.log.logdef`): drawn once, when the log's first file is made,
and copied into every later file. A page store also keeps it in its volume
header, which is then the arbiter of which log files are its own.

The id must differ between environments, so a real environment draws it from
the operating system's random source (:mod:`secrets`). But minidb's tests,
notebooks, golden texts and figures must print the same bytes on every run,
and each of them either runs on a simulated disk or injects a fixed clock
(the ``clock`` the log stamps ``created_ms`` with). So:

- ``seed`` given: the id is drawn from ``random.Random(seed)`` (an int or a
  string; string seeds hash the same in every process). Two environments
  built alike with different seeds get different ids: the corruption
  harness builds a *sibling* environment this way;
- no seed, a simulated disk or an injected clock: as with seed 0, the same
  id on every run (a demonstration is repeatable, and prints repeatably);
- no seed, a real disk and the real clock (:func:`time.time`): random.

An id is never 0, so a zero can never pass for an id by accident.

Worked example: ``new_env_id(SimDisk(), time.time)`` is the same number in
every run; ``new_env_id(SimDisk(), time.time, seed=1)`` is another one;
``new_env_id(OSDisk(path), time.time)`` differs every time.
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Callable

from minidb.io import Disk, SimDisk

ID_BITS = 64


def new_env_id(disk: Disk, clock: Callable[[], float], seed: int | str | None = None) -> int:
    """A new environment's id (see the module documentation)."""
    if seed is None and clock is time.time and not isinstance(disk, SimDisk):
        return secrets.randbits(ID_BITS) or 1
    return random.Random(0 if seed is None else seed).getrandbits(ID_BITS) or 1


def env_id_text(env_id: int | None) -> str:
    """An id as messages print it: ``0x`` and 16 hex digits (``none`` for a file without one)."""
    return "none" if env_id is None else f"0x{env_id:016x}"
