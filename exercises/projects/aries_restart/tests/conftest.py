"""What the ARIES restart project's tests share: a page store on a simulated disk, crashed, and opened again
with the restart the engine's hot spot chooses (the reference's, or the student's: see
exercises/projects/conftest.py), stopped before its first pass."""

from __future__ import annotations

import pytest

from minidb.io import CrashMode

from tests.pagestore.sm_helpers import open_again


class Kit:
    """Builders for the tests (a fixture, so that test files import nothing of each other)."""

    @staticmethod
    def crashed(sm, frames: int = 8):
        """``sm``'s log synced, the disk crashed (nothing unsynced survives), the page store opened again
        without restarting: ``sm.restart`` is the restart, no pass run."""
        sm.log.sync()
        sm.disk.crash(CrashMode.nothing())
        return open_again(sm.disk, frames=frames, restart=False)


@pytest.fixture
def kit() -> Kit:
    return Kit()
