"""Scripted interleavings: several transactions, each in its own thread, one step at a time.

Lock scenarios need real threads (a waiting request blocks its thread), yet
tests, notebooks and the tour must give the same result on every run. An
:class:`Interleaving` gives each transaction a thread of its own (an *actor*)
and runs a script of steps: each step is one call in one transaction's
thread. After each step it waits, without sleeping, until the lock manager
has *settled*: every actor has either finished its step or is blocked in the
lock manager with its Dreadlocks step done, and no digest is still being
recomputed (:meth:`~.manager.LockManager.settled`, through
:meth:`~.manager.LockManager.watch`). Only then does the next step start, so
the order of events is the script's order.

A step that blocks stays open: it finishes in a later step (when another
transaction releases, or when Dreadlocks makes it the victim), and the
interleaving's ``log`` says so. Example, the two-transaction cycle::

    with Interleaving(lm) as script:
        script.lock(t1, a, EX)         # 1. T1: EX r(1.3.48.2) -> ok
        script.lock(t2, b, EX)         # 2. T2: EX r(1.3.48.3) -> ok
        script.lock(t1, b, EX)         # 3. T1: EX r(1.3.48.3) -> blocked
        script.lock(t2, a, EX)         # 4. T2: EX r(1.3.48.2) -> DeadlockVictim
        script.release_all(t2)         # 5. T2: release all -> ok
                                       #    T1: EX r(1.3.48.3) (step 3) -> ok

Closing the interleaving releases the locks of every idle transaction until
all threads are idle, then stops them.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from minidb.pagestore.lock.lockid import LockId
from minidb.pagestore.lock.manager import LockManager
from minidb.pagestore.lock.modes import LockMode
from minidb.pagestore.lock.owner import txn_id_of
from minidb.pagestore.lock.request import Duration


@dataclass
class Step:
    """One step of a script: a call made in one transaction's thread."""

    number: int
    txn_id: int
    label: str
    status: str = "running"  # running, blocked, done, raised
    result: Any = None
    error: BaseException | None = None
    owner: Any = field(default=None, repr=False, compare=False)

    @property
    def outcome(self) -> str:
        if self.status == "raised":
            return type(self.error).__name__
        return "ok" if self.status == "done" else self.status

    @property
    def finished(self) -> bool:
        return self.status in ("done", "raised")


class _Actor:
    """A thread: runs the steps given to it, one at a time (usually all of one transaction's)."""

    def __init__(self, script: "Interleaving", name: str):
        self.script = script
        self.current: Step | None = None
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            step, action = job
            try:
                step.result = action()
                step.status = "done"
            except BaseException as e:  # noqa: BLE001 - the step's outcome, reported by the script
                step.error = e
                step.status = "raised"
            finally:
                self.current = None
                self.script.manager.poke()


class Interleaving:
    """Runs steps of several transactions deterministically; see the module documentation."""

    def __init__(self, manager: LockManager, timeout: float = 60.0):
        self.manager = manager
        self.timeout = timeout  # a guard against a scenario that never settles (a bug), not a clock
        self.steps: list[Step] = []
        self.log: list[str] = []
        self._actors: dict[Any, _Actor] = {}
        self._owners: dict[int, Any] = {}
        self._logged: set[int] = set()
        self._blocked: set[int] = set()

    # -- steps ---------------------------------------------------------------------------
    def run(self, owner: Any, label: str, action: Callable[[], Any], thread: Any = None) -> Step:
        """Run ``action()`` for ``owner`` in its thread; return once everything has settled.

        Each transaction has a thread of its own, unless ``thread`` names one (any key): then
        transactions can take turns on one thread, as they do on a server's thread pool.
        """
        step = self._submit(owner, label, action, thread)
        self.settle()
        return step

    def lock(self, owner: Any, lock_id: LockId, mode: LockMode, duration: Duration = Duration.LONG,
             timeout: float | None = None, thread: Any = None) -> Step:
        extra = "" if duration is Duration.LONG else f" {duration}"
        extra += "" if timeout is None else f" timeout {timeout:g}"
        return self.run(owner, f"{mode} {lock_id}{extra}",
                        lambda: self.manager.lock(owner, lock_id, mode, duration, timeout), thread)

    def unlock(self, owner: Any, lock_id: LockId, thread: Any = None) -> Step:
        return self.run(owner, f"unlock {lock_id}", lambda: self.manager.unlock(owner, lock_id), thread)

    def release_all(self, owner: Any, thread: Any = None) -> Step:
        return self.run(owner, "release all", lambda: self.manager.release_all(owner), thread)

    def busy(self, thread: Any) -> bool:
        """Whether the thread (a key, or an owner: its own thread) is still in a step (blocked)."""
        actor = self._actors.get(self._key(thread))
        return actor is not None and actor.current is not None

    def step(self, number: int) -> Step:
        return self.steps[number - 1]

    # -- settling ------------------------------------------------------------------------
    def settle(self) -> None:
        """Wait until every actor is idle or blocked in the lock manager, and nothing moves."""
        if not self.manager.watch(self._settled, self.timeout):
            running = [f"T{a.txn_id} ({a.current.label})" for a in self._actors.values() if a.current]
            raise RuntimeError(f"the interleaving did not settle within {self.timeout} s; still running: "
                               f"{', '.join(running)}")
        for actor in self._actors.values():
            if actor.current is not None:
                actor.current.status = "blocked"
        # The step just run first, then the earlier steps it let finish, in step order.
        newest = self.steps[-1] if self.steps else None
        if newest is not None and newest.number not in self._logged | self._blocked:
            if newest.finished:
                self._logged.add(newest.number)
                self.log.append(f"{newest.number:>2}. T{newest.txn_id}: {newest.label} -> {newest.outcome}")
            elif newest.status == "blocked":
                self._blocked.add(newest.number)
                self.log.append(f"{newest.number:>2}. T{newest.txn_id}: {newest.label} -> blocked")
        for step in self.steps:
            if step.number not in self._logged and step.finished:
                self._logged.add(step.number)
                self.log.append(f"    T{step.txn_id}: {step.label} (step {step.number}) -> {step.outcome}")

    def _settled(self) -> bool:
        manager = self.manager
        if not manager.settled():
            return False
        for actor in self._actors.values():
            current = actor.current
            if current is not None and not manager.blocked(current.owner):
                return False
        return True

    # -- threads -------------------------------------------------------------------------
    @staticmethod
    def _key(thread: Any) -> Any:
        txn_id = getattr(thread, "txn_id", None)
        return ("txn", txn_id) if isinstance(txn_id, int) else ("thread", thread)

    def _submit(self, owner: Any, label: str, action: Callable[[], Any], thread: Any = None) -> Step:
        txn_id = txn_id_of(owner)
        key = self._key(owner if thread is None else thread)
        actor = self._actors.get(key)
        if actor is None:
            name = f"T{txn_id}" if thread is None else f"thread {thread}"
            actor = self._actors[key] = _Actor(self, name)
        if actor.current is not None:
            raise RuntimeError(f"T{actor.current.txn_id} is still blocked in step {actor.current.number} "
                               f"({actor.current.label}): its thread can do nothing else until that returns")
        self._owners[txn_id] = owner
        step = Step(len(self.steps) + 1, txn_id, label, owner=owner)
        self.steps.append(step)
        actor.current = step
        actor.jobs.put((step, action))
        return step

    def close(self) -> None:
        """Release the locks of idle transactions until every thread is idle; stop the threads."""
        while any(a.current is not None for a in self._actors.values()):
            waiting = {a.current.txn_id for a in self._actors.values() if a.current is not None}
            idle = [o for t, o in self._owners.items() if t not in waiting and self.manager.held(o)]
            if not idle:
                stuck = ", ".join(f"T{t}" for t in sorted(waiting))
                raise RuntimeError(f"cannot close the interleaving: {stuck} wait and nobody can release")
            for owner in idle:
                self.manager.release_all(owner)
            self.manager.watch(self._settled, self.timeout)
        for owner in self._owners.values():
            self.manager.release_all(owner)
        for actor in self._actors.values():
            actor.jobs.put(None)
        for actor in self._actors.values():
            actor.thread.join(self.timeout)
        self._actors.clear()

    def __enter__(self) -> "Interleaving":
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        try:
            self.close()
        except RuntimeError:
            if exc_type is None:
                raise  # otherwise the error that ended the script is the one to see
