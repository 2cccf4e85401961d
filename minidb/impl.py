"""Which implementation runs: the reference, its accelerated twin, or a student's function.

minidb's engine is written to be read. Each idea is written once, plainly,
in the module a student reads (the *reference*); that is what the notebooks,
the tour and the command line run unless told otherwise. Two other things can
stand in for a piece of the reference, and this registry chooses between
them, in one place, by one switch:

``fast``     an accelerated twin under ``minidb/fast/``, at the same path as
             what it speeds up (``minidb/fast/pagestore/lock/manager.py``
             stands in for ``LockManager`` of ``minidb/pagestore/lock/manager.py``).
             It does the same thing with fewer Python steps, writes the same
             bytes and gives the same answers; ``tests/test_agreement.py`` runs
             each one against its reference. A piece of the reference that has
             a twin is a :class:`HotSpot`, declared where it is defined::

                 LOCK_MANAGER = impl.hot_spot(LockManager)
                 ...
                 self.locks = LOCK_MANAGER.call(...)        # the class chosen, constructed

``student``  a function an exercise in ``exercises/`` asks a student to
             write, run at the one call site it replaces. Such a call site
             is a :class:`Hook`, registered by the module that owns the
             decision::

                 VICTIM = impl.register("04a_clock_replacement", "choose_victim", choose_victim, adapt)
                 ...
                 choice = VICTIM.call(frames, hand)

             The student's function is ``<exercises>/<exercise>/student.py``'s,
             loaded by file path (``<exercises>`` is ``$MINIDB_EXERCISES_DIR``,
             else the repository's ``exercises/``) and wrapped by ``adapt``,
             which converts the engine's arguments to the exercise's types and
             the answer back (and checks that the answer has the right form).

A *component* is a whole class of the reference that a course project
(``exercises/projects/NAME/``) asks a student to build: a hot spot declared
with the project's name, with or without a twin::

                 BUFFER_POOL = impl.hot_spot(BufferPool, project="buffer_pool")
                 ...
                 bp = BUFFER_POOL.call(frames, page_size=..., log=log)   # the reference's, or the student's

When the project is chosen (``student:buffer_pool``, ``--impl student
--project buffer_pool``), ``call`` constructs the class of the same name in
``<exercises>/projects/buffer_pool/student.py`` (loaded by path, like an
exercise's file), wherever the engine builds the component; the reference's
fast twin never runs for it. The student's class is used through a subclass
whose methods (those its own file defines) turn an escaping
``NotImplementedError`` into an :class:`ExerciseError`; everything else the
class raises passes unchanged, as the engine's own errors would: a whole
component raises the engine's errors on purpose (a full pool, a lock timeout).

``MINIDB_IMPL`` (or :func:`use`, which ``--impl`` on the command line calls)
holds the choice: ``reference`` (or unset), ``fast``, ``student``; a list after
a colon narrows it: ``student:08a,04b`` runs only those exercises' functions
(every other hook runs the engine's), ``fast:pagestore.lock.manager.LockManager``
only that twin (the agreement test proves twins one at a time this way). A
project runs only when named (``student:buffer_pool`` or ``student:04a,lock_manager``):
a bare ``student`` runs every exercise's function and no project, because a
component replaces far more of the engine than a hook. Under ``fast``, a hot
spot declared ``twin=False`` (a component with no accelerated version, or one
whose twin a student edition left out) runs its reference; naming it in
``fast:NAME`` is an error.

Invariants: the choice is read once per :func:`use`; the first call of a hook
or hot spot resolves it and puts the chosen object in ``call``, so the
reference runs with no look-up per call. In ``fast`` mode every hook runs the
engine's own function; in ``student`` mode every hot spot runs the reference
(a student's function sees every call the reference makes). There is never a
silent fallback: an unknown value, a hot spot without its twin, a missing
``student.py``, function or class, or a stub that raises ``NotImplementedError``
inside the engine is an :class:`ExerciseError` (the CLI prints it as one line
and exits 2); anything else the student's code raises, or an answer of the
wrong form, is a :class:`StudentCodeError` (exit 1). Neither is a
:class:`~minidb.errors.MinidbError`, so no engine code that handles its own
errors (a crash test counting violations) swallows them. An engine function an
adapter hands to the student's code to call back (a page read, a feeder's
answer) is wrapped by :func:`engine_callback`: its own errors pass through the
student's function unchanged, as the engine's.

This module sits in the base layer (it imports nothing from minidb), so every
layer can declare hooks and hot spots while imports still point down. The
reference never imports its twin: the registry finds it by name, only when
``fast`` is chosen, as ``decimal`` finds ``_decimal``.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

ENV_VAR = "MINIDB_IMPL"
DIR_VAR = "MINIDB_EXERCISES_DIR"
ENGINE, FAST, STUDENT = "reference", "fast", "student"
MODES = (ENGINE, FAST, STUDENT)
FAST_PACKAGE = "minidb.fast"
DEFAULT_DIR = Path(__file__).resolve().parent.parent / "exercises"
PROJECTS = "projects"  # <exercises>/projects/NAME/: the course projects


class ExerciseError(Exception):
    """The chosen implementation cannot be used: an unknown mode, a missing twin, student file or function, a stub."""


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
        return mode() != STUDENT or not chosen(self.exercise)

    def resolve(self) -> Callable[..., Any]:
        """The function ``call`` runs under the current mode."""
        if self.engine_runs:
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


class HotSpot:
    """A piece of the reference (a class or a function) with an accelerated twin under ``minidb/fast/``,
    or a component a course project replaces whole, or both.

    The twin has the same name in the module at the same path below ``minidb.fast``
    (``minidb.pagestore.lock.manager.LockManager`` -> ``minidb.fast.pagestore.lock.manager.LockManager``);
    ``has_twin`` is False for a hot spot declared without one. A component's ``project`` names the
    project whose ``student.py`` defines a class of the same name.
    ``call`` is the chosen one, called: a class is constructed, a function run.
    """

    def __init__(self, reference: Any, has_twin: bool = True, project: str | None = None):
        self.reference, self.has_twin, self.project = reference, has_twin, project
        self.module = reference.__module__
        self.qualname = reference.__qualname__
        self.name = f"{self.module.removeprefix('minidb.')}.{self.qualname}"
        self.fast_module = f"{FAST_PACKAGE}.{self.module.removeprefix('minidb.')}"
        self.call: Callable[..., Any] = self._first_call

    def __repr__(self) -> str:
        return f"HotSpot({self.name})"

    def _first_call(self, *args: Any, **kwargs: Any) -> Any:
        self.call = self.chosen()
        return self.call(*args, **kwargs)

    @property
    def fast_runs(self) -> bool:
        """Whether the twin runs under the current mode."""
        return mode() == FAST and chosen(self.name) and self.has_twin

    @property
    def student_runs(self) -> bool:
        """Whether the student's class of this component's project runs under the current mode."""
        return self.project is not None and project_chosen(self.project)

    def chosen(self) -> Any:
        """The reference, its twin or the student's class, under the current mode."""
        if self.student_runs:
            return self.student()
        return self.twin() if self.fast_runs else self.reference

    def student(self) -> Any:
        """The class of the same name in the project's ``student.py``, guarded (see the module documentation)."""
        assert self.project is not None
        path = project_path(self.project)
        what = f"project {self.project}: {self.qualname}"
        cls = getattr(load_file(f"{PROJECTS}/{self.project}", path, f"project {self.project}"), self.qualname, None)
        if not isinstance(cls, type):
            raise ExerciseError(f"{what}: {path} defines no class {self.qualname}")
        return guard_class(cls, what, path)

    def twin(self) -> Any:
        """The accelerated twin (imported on first use); a missing one is an error, never the reference."""
        try:
            module = importlib.import_module(self.fast_module)
        except ImportError as e:
            raise ExerciseError(f"hot spot {self.name}: no module {self.fast_module} ({e})") from e
        twin = module
        for part in self.qualname.split("."):
            twin = getattr(twin, part, None)
        if twin is None:
            raise ExerciseError(f"hot spot {self.name}: {self.fast_module} defines no {self.qualname}")
        return twin


def guard_class(cls: type, what: str, path: Path) -> type:
    """A subclass of the student's ``cls`` whose methods (those defined in the student's file: plain,
    static, and the getters of properties) turn an escaping ``NotImplementedError`` into an
    :class:`ExerciseError` naming the method."""
    def guard(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            try:
                return method(*args, **kwargs)
            except NotImplementedError as e:
                raise ExerciseError(f"{what}.{name} is not implemented yet ({path}: {e})") from e
        return guarded

    methods: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):  # a subclass's method wins over its base's
        if klass.__module__ == cls.__module__:
            for name, value in vars(klass).items():
                if inspect.isfunction(value):
                    methods[name] = guard(name, value)
                elif isinstance(value, staticmethod):  # Restart.opening, which the engine calls on the class
                    methods[name] = staticmethod(guard(name, value.__func__))
                elif isinstance(value, property) and value.fget is not None:  # Restart.next_pass
                    methods[name] = property(guard(name, value.fget), value.fset, value.fdel, value.__doc__)
    return type(cls.__name__, (cls,), {**methods, "__module__": cls.__module__, "__qualname__": cls.__qualname__})


_hot_spots: dict[str, HotSpot] = {}


def hot_spot(reference: Any, twin: bool = True, project: str | None = None) -> HotSpot:
    """Declare ``reference`` (defined in the calling module) a hot spot: with a twin under ``minidb/fast/``
    unless ``twin`` is False, and a component of course project ``project`` if one is named.

    Declaring it again (a module reloaded) gives the same hot spot, now standing for the new object."""
    spot = HotSpot(reference, twin, project)
    known = _hot_spots.get(spot.name)
    if known is not None:
        known.reference, known.has_twin, known.project = reference, twin, project
        known.call = known._first_call
        return known
    _hot_spots[spot.name] = spot
    return spot


def current(reference: Any) -> Any:
    """What runs in place of ``reference`` under the current mode: its twin if it is a declared hot spot and
    ``fast`` chooses it, else ``reference`` itself (for code that builds an engine part directly)."""
    for spot in _hot_spots.values():
        if spot.reference is reference:
            return spot.chosen()
    return reference


def hot_spots() -> list[HotSpot]:
    """Every declared hot spot (those of the engine modules imported so far)."""
    return list(_hot_spots.values())


_hooks: dict[str, Hook] = {}
_mode: str | None = None
_only: frozenset[str] | None = None  # the exercises (student) or hot spots (fast) chosen; None: all
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
    """``reference``, ``fast`` or ``student``: :func:`use`'s choice, else ``$MINIDB_IMPL`` (read once)."""
    global _mode, _only
    if _mode is None:
        value = os.environ.get(ENV_VAR, "").strip() or ENGINE
        which, _, names = value.partition(":")
        if which not in MODES or (names and which == ENGINE):
            raise ExerciseError(f"${ENV_VAR}={value!r}: expected {' or '.join(MODES)}, "
                                f"or {STUDENT}:08a,04b,... or {FAST}:NAME,...")
        listed = [n.strip() for n in names.split(",") if n.strip()]
        _only = (_choose(listed, f"${ENV_VAR}") if which == STUDENT else _choose_hot_spots(listed, f"${ENV_VAR}")) \
            if listed else None
        _mode = which
    return _mode


def _choose(names: list[str], where: str) -> frozenset[str]:
    """The exercise directories (``08a`` or ``08a_aries_undo``) and projects (``buffer_pool``) ``names``
    designate; an unknown one is an error."""
    known = sorted(p.name for p in exercises_dir().iterdir() if p.is_dir() and (p / "student.py").exists()) \
        if exercises_dir().is_dir() else []
    chosen = set()
    for name in (n.strip() for n in names):
        matches = [k for k in known if k == name or k.split("_", 1)[0] == name]
        if name in projects():
            matches = [name]
        if not matches:
            raise ExerciseError(f"{where}: no exercise {name!r} in {exercises_dir()}, nor a project of that name")
        chosen.update(matches)
    return frozenset(chosen)


def chosen(name: str) -> bool:
    """Whether ``name`` (an exercise in ``student`` mode, a hot spot in ``fast`` mode) is among those chosen."""
    return _only is None or name in _only


def project_chosen(name: str) -> bool:
    """Whether the student's classes of project ``name`` run: only in ``student`` mode, and only if named."""
    return mode() == STUDENT and _only is not None and name in _only


def projects() -> list[str]:
    """The course projects in ``<exercises>/projects/`` (each a directory with a ``student.py``)."""
    root = exercises_dir() / PROJECTS
    return sorted(p.name for p in root.iterdir() if (p / "student.py").is_file()) if root.is_dir() else []


def exercises_dir() -> Path:
    return _dir if _dir is not None else Path(os.environ.get(DIR_VAR) or DEFAULT_DIR)


def use(which: str | None, directory: str | Path | None = None, only: list[str] | None = None) -> None:
    """Switch every hook and hot spot to ``which`` (None: back to ``$MINIDB_IMPL``), students' files in
    ``directory``; ``only``: with ``student``, the exercises whose functions run and the projects whose
    classes run (``["08a", "buffer_pool"]``; None: every exercise, no project), with ``fast``, the hot spots
    whose twins run (None: all)."""
    if which is not None and which not in MODES:
        raise ExerciseError(f"--impl {which!r}: expected {' or '.join(MODES)}")
    _switch(which, directory, None)
    mode()  # a bad $MINIDB_IMPL is reported now, not at the first call
    if only:
        global _only
        if mode() == STUDENT:
            _only = _choose(only, "--exercise")
        elif mode() == FAST:
            _only = _choose_hot_spots(only, "--impl fast")
        else:
            raise ExerciseError(f"--exercise {' '.join(only)}: only with --impl {STUDENT}")


def _choose_hot_spots(names: list[str], where: str) -> frozenset[str]:
    """The hot spots ``names`` designate (their :attr:`HotSpot.name`); an unknown one is an error."""
    for name in names:  # a hot spot is declared when its module is imported: import it if it is not yet
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            if name in _hot_spots:
                break
            try:
                importlib.import_module("minidb." + ".".join(parts[:cut]))
            except ImportError:
                continue
    unknown = [n for n in names if n not in _hot_spots]
    if unknown:
        raise ExerciseError(f"{where}: no hot spot {unknown[0]!r} (known: {', '.join(sorted(_hot_spots)) or 'none'})")
    without = [n for n in names if not _hot_spots[n].has_twin]
    if without:
        raise ExerciseError(f"{where}: hot spot {without[0]!r} has no accelerated twin")
    return frozenset(names)


def _switch(which: str | None, directory: str | Path | None, only: frozenset[str] | None = None) -> None:
    global _mode, _dir, _only
    _mode, _dir, _only = which, Path(directory) if directory is not None else None, only
    _loaded.clear()
    for hook in _hooks.values():
        hook.call = hook._first_call
    for spot in _hot_spots.values():
        spot.call = spot._first_call


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


def project_path(project: str) -> Path:
    return exercises_dir() / PROJECTS / project / "student.py"


def load_student(exercise: str) -> ModuleType:
    """``student.py`` of ``exercise``, imported by path (once per :func:`use`)."""
    return load_file(exercise, student_path(exercise), f"exercise {exercise}")


def load_file(key: str, path: Path, what: str) -> ModuleType:
    """The student's file ``path`` (of an exercise or a project), imported by path once per :func:`use`."""
    module = _loaded.get(key)
    if module is not None:
        return module
    if not path.is_file():
        raise ExerciseError(f"{what}: no student file {path} (set ${DIR_VAR} to the exercises directory)")
    name = "minidb_student_" + "".join(c if c.isalnum() else "_" for c in key)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before it runs: a dataclass in the file looks its module up there
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[name]
        raise ExerciseError(f"{what}: {path} cannot be imported: {type(e).__name__}: {e}") from e
    _loaded[key] = module
    return module
