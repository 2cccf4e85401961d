"""Exercise hooks: the engine calls a student's function at the one place it replaces.

Some of minidb's decisions are pure functions that an exercise in
``exercises/`` asks a student to write (the buffer pool's victim choice, the
undo pass's order, ...). Each such call site goes through a :class:`Hook`,
registered once by the engine module that owns the decision::

    VICTIM = exercise_hooks.register("04a_clock_replacement", "choose_victim", choose_victim, adapt)
    ...
    choice = VICTIM.call(frames, hand)

``MINIDB_EXERCISE_IMPL`` (or :func:`use`, which ``--impl`` on the command
line calls) chooses what ``call`` runs:

``reference`` (or unset)  the engine's own function (``default``);
``student``               ``<exercises>/<exercise>/student.py``'s function, loaded by file
                          path (``<exercises>`` is ``$MINIDB_EXERCISES_DIR``, else the
                          repository's ``exercises/``) and wrapped by ``adapt``, which
                          converts the engine's arguments to the exercise's types and the
                          answer back (and checks that the answer has the right form);
``student:08a,04b``       the same for the exercises named only (by their number, ``08a``,
                          or their whole name); every other hook runs the engine's
                          function. A student who has done one exercise tests it alone
                          (``--impl student --exercise 08a`` on the command line); a name
                          that is no exercise's is an error.

Invariants: the choice is read once; the first call of a hook resolves it
and puts the chosen function in ``call``, so a run without the variable
calls the engine's function directly, at the same speed as before. There is
never a silent fallback: an unknown value, a missing ``student.py`` or
function, or a stub that raises ``NotImplementedError`` inside the engine is
an :class:`ExerciseError` naming the exercise and the function (the CLI
prints it as one line and exits 2); anything else the student's code raises,
or an answer of the wrong form, is a :class:`StudentCodeError` (exit 1).
Neither is a :class:`~minidb.errors.MinidbError`, so no engine code that
handles its own errors (a crash test counting violations) swallows them.
An engine function an adapter hands to the student's code to call back (a
page read, a feeder's answer) is wrapped by :func:`engine_callback`: its own
errors pass through the student's function unchanged, as the engine's.

This module sits in the base layer (it imports nothing from minidb), so the
log, the page store, the log store and replication can each register hooks while imports
still point down; the adapters live next to the functions they stand in for.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

ENV_VAR = "MINIDB_EXERCISE_IMPL"
DIR_VAR = "MINIDB_EXERCISES_DIR"
ENGINE, STUDENT = "reference", "student"
MODES = (ENGINE, STUDENT)
DEFAULT_DIR = Path(__file__).resolve().parent.parent / "exercises"


class ExerciseError(Exception):
    """The student's code cannot be used: an unknown mode, a missing file or function, a stub."""


class StudentCodeError(Exception):
    """The student's function raised, or answered in the wrong form, inside the engine."""


class Hook:
    """One call site of the engine that a student's function can take over."""

    def __init__(self, exercise: str, function: str, default: Callable[..., Any],
                 adapt: Callable[["Hook", Callable[..., Any]], Callable[..., Any]]):
        self.exercise, self.function, self.default, self.adapt = exercise, function, default, adapt
        self.call: Callable[..., Any] = self._first_call

    def __repr__(self) -> str:
        return f"Hook({self.exercise}.{self.function})"

    @property
    def what(self) -> str:
        return f"exercise {self.exercise}: {self.function}"

    def _first_call(self, *args: Any, **kwargs: Any) -> Any:
        self.call = self.resolve()
        return self.call(*args, **kwargs)

    @property
    def engine_runs(self) -> bool:
        """Whether ``call`` runs the engine's own function under the current mode: only then may the
        engine take a shortcut that stands for many calls of it (a student's function sees every call)."""
        return mode() == ENGINE or not chosen(self.exercise)

    def resolve(self) -> Callable[..., Any]:
        """The function ``call`` runs under the current mode."""
        if mode() == ENGINE or not chosen(self.exercise):
            return self.default
        student = getattr(load_student(self.exercise), self.function, None)
        if not callable(student):
            raise ExerciseError(f"{self.what}: {student_path(self.exercise)} defines no function {self.function}")
        return self.adapt(self, self.guard(student))

    def guard(self, student: Callable[..., Any]) -> Callable[..., Any]:
        """``student`` with its exceptions turned into :class:`ExerciseError` / :class:`StudentCodeError`."""
        def guarded(*args: Any, **kwargs: Any) -> Any:
            try:
                return student(*args, **kwargs)
            except NotImplementedError as e:
                raise ExerciseError(f"{self.what} is not implemented yet ({student_path(self.exercise)}: {e})") from e
            except Exception as e:
                if type(e).__name__ == "SimulatedCrash" or getattr(e, ENGINE_ERROR, False):
                    raise  # a crash the simulated disk scheduled, or the engine's error in a callback: not a bug
                raise StudentCodeError(f"{self.what} raised {type(e).__name__}: {e}") from e
        return guarded

    def wrong(self, problem: str) -> StudentCodeError:
        """The error for an answer of the wrong form (adapters raise it)."""
        return StudentCodeError(f"{self.what} {problem}")


ENGINE_ERROR = "minidb_engine_error"


def engine_callback(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` (the engine's, handed to a student's code to call back, as a page read) with its errors
    marked as the engine's: they pass through the student's function unchanged, not as a StudentCodeError."""
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except Exception as e:
            setattr(e, ENGINE_ERROR, True)
            raise
    return call


_hooks: dict[str, Hook] = {}
_mode: str | None = None
_only: frozenset[str] | None = None  # with ``student``: the exercises chosen (None: all)
_dir: Path | None = None


def register(exercise: str, function: str, default: Callable[..., Any],
             adapt: Callable[[Hook, Callable[..., Any]], Callable[..., Any]]) -> Hook:
    """The hook for ``exercise``'s ``function``; ``adapt(hook, student)`` returns the engine-signature version.

    One line at the engine's call site's module; registering the same exercise
    and function again (a module reloaded) gives the same hook.
    """
    key = f"{exercise}.{function}"
    hook = _hooks.get(key)
    if hook is None:
        hook = _hooks[key] = Hook(exercise, function, default, adapt)
    hook.default, hook.adapt, hook.call = default, adapt, hook._first_call
    return hook


def hooks() -> list[Hook]:
    """Every registered hook (those of the engine modules imported so far)."""
    return list(_hooks.values())


def mode() -> str:
    """``reference`` or ``student``: :func:`use`'s choice, else ``$MINIDB_EXERCISE_IMPL`` (read once)."""
    global _mode, _only
    if _mode is None:
        value = os.environ.get(ENV_VAR, "").strip() or ENGINE
        which, _, names = value.partition(":")
        if which not in MODES or (names and which != STUDENT):
            raise ExerciseError(f"${ENV_VAR}={value!r}: expected {' or '.join(MODES)}, or {STUDENT}:08a,04b,...")
        _only = _choose([n for n in names.split(",") if n.strip()], f"${ENV_VAR}") if names else None
        _mode = which
    return _mode


def _choose(names: list[str], where: str) -> frozenset[str]:
    """The exercise directories ``names`` designate (``08a`` or ``08a_aries_undo``); an unknown one is an error."""
    known = sorted(p.name for p in exercises_dir().iterdir() if p.is_dir() and (p / "student.py").exists()) \
        if exercises_dir().is_dir() else []
    chosen = set()
    for name in (n.strip() for n in names):
        matches = [k for k in known if k == name or k.split("_", 1)[0] == name]
        if not matches:
            raise ExerciseError(f"{where}: no exercise {name!r} in {exercises_dir()}")
        chosen.update(matches)
    return frozenset(chosen)


def chosen(exercise: str) -> bool:
    """Whether the student's function runs for ``exercise`` (in ``student`` mode)."""
    return _only is None or exercise in _only


def exercises_dir() -> Path:
    return _dir if _dir is not None else Path(os.environ.get(DIR_VAR) or DEFAULT_DIR)


def use(which: str | None, directory: str | Path | None = None, only: list[str] | None = None) -> None:
    """Switch every hook to ``which`` (None: back to ``$MINIDB_EXERCISE_IMPL``), students' files in ``directory``;
    ``only``: with ``student``, the exercises whose functions run (``["08a"]``; None: all)."""
    if which is not None and which not in MODES:
        raise ExerciseError(f"--impl {which!r}: expected {' or '.join(MODES)}")
    _switch(which, directory, None)
    mode()  # a bad $MINIDB_EXERCISE_IMPL is reported now, not at the first call
    if only:
        if mode() != STUDENT:
            raise ExerciseError(f"--exercise {' '.join(only)}: only with --impl {STUDENT}")
        global _only
        _only = _choose(only, "--exercise")


def _switch(which: str | None, directory: str | Path | None, only: frozenset[str] | None = None) -> None:
    global _mode, _dir, _only
    _mode, _dir, _only = which, Path(directory) if directory is not None else None, only
    _loaded.clear()
    for hook in _hooks.values():
        hook.call = hook._first_call


@contextmanager
def using(which: str | None, directory: str | Path | None = None, only: list[str] | None = None) -> Iterator[None]:
    """:func:`use` for a ``with`` block; the previous choice afterwards."""
    before = (_mode, _dir, _only)
    use(which, directory, only)
    try:
        yield
    finally:
        _switch(*before)


_loaded: dict[str, ModuleType] = {}


def student_path(exercise: str) -> Path:
    return exercises_dir() / exercise / "student.py"


def load_student(exercise: str) -> ModuleType:
    """``student.py`` of ``exercise``, imported by path (once per :func:`use`)."""
    module = _loaded.get(exercise)
    if module is not None:
        return module
    path = student_path(exercise)
    if not path.is_file():
        raise ExerciseError(f"exercise {exercise}: no student file {path} (set ${DIR_VAR} to the exercises directory)")
    name = "minidb_student_" + "".join(c if c.isalnum() else "_" for c in exercise)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise ExerciseError(f"exercise {exercise}: {path} cannot be imported: {type(e).__name__}: {e}") from e
    sys.modules[name] = module
    _loaded[exercise] = module
    return module
