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
import signal
import subprocess

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
    """End the process group that ``process`` leads (by its id): SIGTERM, a grace period for the leader to
    exit, then SIGKILL to whatever of the group is still there; ``process`` is reaped."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:  # nobody is left in the group
            break
        if sig == signal.SIGTERM:
            try:
                process.wait(timeout=GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                pass
    process.wait()
