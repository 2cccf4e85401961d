"""The cleaner's background thread (JE's cleaner daemon; ``je.env.runCleaner``).

Off by default (notebooks and tests clean on demand with ``env.clean_log()``,
so that what happens is shown step by step); ``minidb tour`` turns it on.
The thread never sleeps on a timer: it waits for a *wakeup*, which the
environment gives after an operation once ``cleaner_bytes_interval`` bytes
were logged since the last one (JE's ``je.cleaner.bytesInterval``), or
which a test gives with :meth:`CleanerThread.wake`. Each run takes the
environment latch, like any operation, and cleans while the selector picks a
file; the files go at the next checkpoint. ``runs`` counts the runs and
``ran`` is set after each, so a test waits on an event, not on time.

Stopping: :meth:`stop` (called by ``close`` and ``crash`` before they take
the latch, so the thread can finish a run that waits for it) wakes the
thread with ``stopping`` set and joins it.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from minidb.errors import MinidbError

if TYPE_CHECKING:
    from minidb.logstore.cleaner.cleaner import Cleaner
    from minidb.logstore.core import EnvCore


class CleanerThread:
    def __init__(self, core: EnvCore, cleaner: Cleaner):
        self.core = core
        self.cleaner = cleaner
        self.wakeup = threading.Event()
        self.ran = threading.Event()
        self.stopping = False
        self.runs = 0
        self.error: MinidbError | None = None  # what stopped a run (the environment closed, a failed read)
        self.bytes_at_last_wakeup = 0
        self.thread = threading.Thread(target=self._run, name=f"cleaner {core.where()}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def wake(self) -> None:
        self.bytes_at_last_wakeup = self.core.log.stats["nBytes"]
        self.wakeup.set()

    def wake_if_due(self) -> None:
        """After an operation: wake the thread once enough was logged since the last wakeup."""
        if self.core.log.stats["nBytes"] - self.bytes_at_last_wakeup >= self.core.config.cleaner_bytes_interval:
            self.wake()

    def stop(self) -> None:
        self.stopping = True
        self.wakeup.set()
        if self.thread.is_alive() and threading.current_thread() is not self.thread:
            self.thread.join()

    def _run(self) -> None:
        while True:
            self.wakeup.wait()
            self.wakeup.clear()
            if self.stopping:
                return
            try:
                with self.core.latch:
                    if self.core.closed:
                        return
                    self.cleaner.clean()
            except MinidbError as e:
                self.error = e
                return
            finally:
                self.runs += 1
                self.ran.set()


__all__ = ["CleanerThread"]
