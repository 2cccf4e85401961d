"""Helper processes a test starts, each in its own process group, ended group by group on every way out.

``ProcessGroups.start(argv, ...)`` starts a process in a new session
(``start_new_session=True``): it and every process it starts (a Spark
launcher's JVM, say) form one process group, whose id is the first
process's pid. ``stop_all()`` ends each group (SIGTERM to the group, SIGKILL
to what is still there after a grace period), the last started first. It
runs:

- when the test's fixture ends (its finalizer calls ``stop_all()``);
- at interpreter exit (``atexit``), which covers a pytest stopped by Ctrl-C
  (SIGINT is a KeyboardInterrupt, and the interpreter still exits normally);
- on SIGTERM, which by default ends Python without running ``atexit``: while
  groups are running, a handler ends them and then lets the process die of
  SIGTERM as it would have (the previous handler restored, the signal sent
  again).

A SIGKILL cannot be caught: a pytest killed with SIGKILL leaves its groups
running (``kill -- -PGID`` ends one; the group id is in ``groups``).
"""

from __future__ import annotations

import atexit
import os
import select
import signal
import subprocess
import time
from pathlib import Path

GRACE_SECONDS = 30  # how long a group may take to end after SIGTERM before it gets SIGKILL


class ProcessGroups:
    def __init__(self) -> None:
        self.started: list[subprocess.Popen] = []
        self._previous_sigterm = None

    @property
    def groups(self) -> list[int]:
        return [process.pid for process in self.started]

    def start(self, argv: list[str], **popen_kwargs) -> subprocess.Popen:
        if not self.started:
            atexit.register(self.stop_all)
            self._previous_sigterm = signal.signal(signal.SIGTERM, self._terminated)
        process = subprocess.Popen(argv, start_new_session=True, **popen_kwargs)
        self.started.append(process)
        return process

    def _terminated(self, signum, frame) -> None:
        previous = self._previous_sigterm
        self.stop_all()
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    def stop_all(self) -> None:
        """End every group, the last started first; the handlers go with the last one."""
        while self.started:
            stop_group(self.started.pop())
        atexit.unregister(self.stop_all)
        if self._previous_sigterm is not None:
            signal.signal(signal.SIGTERM, self._previous_sigterm)
            self._previous_sigterm = None


def stop_group(process: subprocess.Popen) -> None:
    """End the process group that ``process`` leads (by its id): SIGTERM, a grace period for the group to
    exit, then SIGKILL to whatever of the group is still there. It returns once no process of the group is
    running (a signal sent is not yet a process gone: a child of the leader can outlive the leader's exit by
    the time the scheduler takes to run it); ``process`` is reaped."""
    for sig, seconds in ((signal.SIGTERM, GRACE_SECONDS), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:  # nobody is left in the group
            break
        if wait_until_gone(process, seconds):
            break
    process.wait()


def wait_until_gone(process: subprocess.Popen, seconds: float | None) -> bool:
    """Wait until every process of ``process``'s group has exited, at most ``seconds`` (None: as long as it
    takes, after a SIGKILL): True if they have. Each member is watched through a pidfd, which becomes
    readable when that process exits, so the wait is for the event itself, not a polling loop; members
    are looked up again afterwards, in case one forked while the others were ending."""
    deadline = None if seconds is None else time.monotonic() + seconds
    while True:
        watched = []
        for pid in group_members(process.pid):
            try:
                watched.append(os.pidfd_open(pid))
            except ProcessLookupError:  # gone meanwhile
                continue
        if not watched:
            return True
        try:
            while watched:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                ready, _, _ = select.select(watched, [], [], left)
                if not ready:
                    return False
                for fd in ready:
                    watched.remove(fd)
                    os.close(fd)
        finally:
            for fd in watched:
                os.close(fd)


def group_members(pgid: int) -> list[int]:
    """The processes of group ``pgid`` still running (a zombie, exited but not yet reaped, is not one)."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path("/proc", entry, "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # it exited while the list was read
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":  # state, then ppid, pgrp
                members.append(int(entry))
    return members
