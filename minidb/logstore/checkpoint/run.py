"""One checkpoint, advanced pause by pause (given: the driver, not the checkpoint's steps).

A checkpoint is a generator of :class:`~.records.Pause` records, written by
the checkpointer (:meth:`Checkpointer.checkpoint_steps
<minidb.logstore.checkpoint.checkpointer.Checkpointer.checkpoint_steps>`);
a :class:`CheckpointRun` drives it. Between two pauses (after each step,
after each IN examined in step 4 and each IN flushed in step 5) the
environment may run other operations, including eviction, exactly as JE's
evictor runs concurrently with a checkpoint. ``env.checkpoint()`` runs one
to the end; ``env.checkpointer.start()`` returns one to step through
(``advance``, ``through(step)``, ``until(step)``, ``finish``).

Invariants the driver keeps, whoever writes the steps:

- each piece of work runs under the environment latch, after
  ``core.check_usable()`` (a crashed or closed environment runs no step);
- the run takes the next checkpoint id (``checkpointer.last_checkpoint_id``
  plus one) when it is made;
- a step that raises abandons the run: the dirty map is reset (state NONE),
  ``checkpointer.current`` is cleared and the run is done;
- every line a step says (:meth:`CheckpointRun.say`) goes to the run's
  trace, the result's trace and the environment's trace, as
  ``step N: ...``.

The run is what the hooks of step 6 are given: ``run.env`` is the
environment (replication's VLSN index attaches to it), ``run.step`` the step
begun last.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidb.logstore.checkpoint.records import STEP_NAMES, CheckpointResult, Pause
from minidb.stats import Trace

if TYPE_CHECKING:
    from minidb.logstore.checkpoint.checkpointer import Checkpointer


class CheckpointRun:
    """One checkpoint, advanced pause by pause (see the module documentation)."""

    def __init__(self, checkpointer: Checkpointer, invoker: str, minimize_recovery_time: bool):
        self.checkpointer = checkpointer
        self.core = checkpointer.core
        self.env = checkpointer.environment  # for the hooks of step 6 (replication's VLSN index) only
        self.minimize_recovery_time = minimize_recovery_time
        checkpointer.last_checkpoint_id += 1
        self.result = CheckpointResult(checkpointer.last_checkpoint_id, invoker)
        self.trace = Trace()
        self.step = 0  # the last step begun
        self.done = False
        self._gen = checkpointer.checkpoint_steps(self)

    # -- driving ---------------------------------------------------------------------
    def advance(self) -> Pause | None:
        """Do the next piece of work; return where it paused (None once finished)."""
        if self.done:
            return None
        core = self.core
        with core.latch:
            core.check_usable()
            try:
                pause = next(self._gen)
            except StopIteration:
                self.done = True
                return None
            except BaseException:
                self._abandon()
                raise
        return pause

    def through(self, step: int) -> Pause | None:
        """Advance until step ``step`` is done."""
        pause = None
        while not self.done:
            pause = self.advance()
            if pause is None or (pause.step_done and pause.step >= step):
                break
        return pause

    def until(self, step: int) -> Pause | None:
        """Advance until step ``step`` has begun and made its first pause."""
        pause = None
        while not self.done and self.step < step:
            pause = self.advance()
            if pause is None:
                break
        return pause

    def finish(self) -> CheckpointResult:
        while not self.done:
            if self.advance() is None:
                break
        return self.result

    def _abandon(self) -> None:
        self.checkpointer.dirty_map.reset()
        self.checkpointer.current = None
        self.done = True

    # -- what the steps use -------------------------------------------------------------
    def begin(self, step: int) -> None:
        """Step ``step`` begins."""
        self.step = step

    def say(self, step: int, message: str, *args: object) -> None:
        """One line of the trace, ``step N: message % args``."""
        line = f"step {step}: " + (message % args if args else message)
        self.trace.emit(line)
        self.result.trace.append(line)
        self.core.trace.emit("checkpoint %d %s", self.result.checkpoint_id, line)

    def pause(self, step: int, done: bool, message: str = "") -> Pause:
        """The pause to yield in (``done`` False) or at the end of step ``step``."""
        return Pause(step, done, self.checkpointer.dirty_map.state, message or STEP_NAMES[step])

    def db_name(self, db_id: int) -> str:
        db = self.checkpointer.db_tree.get_by_id(db_id)
        return db.name if db is not None else f"db {db_id}"


__all__ = ["CheckpointRun"]
