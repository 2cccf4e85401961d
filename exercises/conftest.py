"""Pytest set-up for the exercises (see exercises/README.md).

Every exercise directory ``exercises/NN_name/`` holds a ``student.py`` (the
stub a student fills in) and a ``reference.py`` (the same functions on top of
minidb's own code). Its tests ask for the ``impl`` fixture and never import
either file themselves, so one set of tests checks both:

``--exercise-impl=reference``  (the default) minidb's implementation; this is
                               what CI runs, and it must pass;
``--exercise-impl=student``    the student's file;
``--exercise-impl=mutant:NAME`` a named wrong solution: an exercise's test
                               file may list, in ``MUTANTS``, the typical
                               mistakes as ``{"name": {"function": wrong}}``;
                               the reference with those functions replaced
                               must fail at least one test
                               (``test_stubs_fail.py`` checks every one).

When the option is not given, the environment variable
``MINIDB_IMPL`` (``reference`` or ``student``) decides. It is the
fallback for runs in which this conftest is loaded too late to register a
command-line option (pytest only accepts options from conftests it loads
before parsing the command line: the rootdir's, and those on the path of a
command-line argument such as ``exercises/01a_log_end``).

A run that only asks *whether* tests fail (``test_stubs_fail.py`` runs each
exercise against its stub and every mutant) sets ``MINIDB_EXERCISE_VERDICT_ONLY=1``:
property-based tests then stop at the first failing example instead of
shrinking it to the smallest one and explaining it. That saves seconds per
failing property and changes no verdict; a student's own run keeps shrinking,
because the smallest failing case is what tells them what is wrong.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

IMPLS = ("reference", "student")
MUTANT = "mutant:"
DEFAULT_IMPL = "reference"
ENV_VAR = "MINIDB_IMPL"
OPTION = "--exercise-impl"
VERDICT_ONLY = "MINIDB_EXERCISE_VERDICT_ONLY"

_loaded: dict[Path, ModuleType] = {}


def pytest_addoption(parser):
    try:
        parser.addoption(
            OPTION, action="store", default=None,
            help=f"run the exercises against minidb's reference implementation, the student's stub "
                 f"or a named wrong solution (mutant:NAME) "
                 f"(default: ${ENV_VAR} if set, else {DEFAULT_IMPL})",
        )
    except ValueError:  # already registered (by the root conftest or a plugin): use that one
        pass


def chosen_impl(config: pytest.Config) -> str:
    """``--exercise-impl`` if given, else $MINIDB_IMPL, else reference."""
    try:
        value = config.getoption(OPTION)
    except ValueError:  # the option is not registered (see the module documentation)
        value = None
    if value is None:  # the engine's switch: its fast twins leave the exercises' functions as they are
        value = os.environ.get(ENV_VAR, "").strip().partition(":")[0] or DEFAULT_IMPL
        value = DEFAULT_IMPL if value == "fast" else value
    if value not in IMPLS and not (value.startswith(MUTANT) and len(value) > len(MUTANT)):
        raise pytest.UsageError(f"{OPTION}={value!r}: expected one of {', '.join(IMPLS)} or {MUTANT}NAME")
    return value


def pytest_configure(config):
    chosen_impl(config)  # a bad $MINIDB_IMPL is a usage error, reported once
    if os.environ.get(VERDICT_ONLY) == "1":
        from hypothesis import Phase, settings

        settings.register_profile("verdict-only", phases=[Phase.explicit, Phase.reuse, Phase.generate])
        settings.load_profile("verdict-only")


def pytest_report_header(config):
    return f"minidb exercises: testing the {chosen_impl(config)} implementation"


def load_impl(exercise_dir: Path, which: str) -> ModuleType:
    """Import ``<exercise_dir>/<which>.py`` under a module name unique to that directory."""
    path = (exercise_dir / f"{which}.py").resolve()
    module = _loaded.get(path)
    if module is None:
        if not path.is_file():
            raise FileNotFoundError(f"{path} does not exist: every exercise needs reference.py and student.py")
        tag = "".join(c if c.isalnum() else "_" for c in exercise_dir.name)
        name = f"minidb_exercise_{tag}_{which}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        _loaded[path] = module
    return module


def mutant(reference: ModuleType, test_module: ModuleType, name: str) -> SimpleNamespace:
    """The reference with the functions of the test module's ``MUTANTS[name]`` put in their place."""
    mutants = getattr(test_module, "MUTANTS", {})
    if name not in mutants:
        known = ", ".join(sorted(mutants)) or "none"
        raise pytest.UsageError(f"{test_module.__name__} has no mutant {name!r} (its mutants: {known})")
    replaced = dict(vars(reference))
    for function, wrong in mutants[name].items():
        if function not in replaced:
            raise pytest.UsageError(f"mutant {name!r} replaces {function!r}, which the reference does not define")
        replaced[function] = wrong
    return SimpleNamespace(**replaced)


@pytest.fixture
def impl(request) -> ModuleType | SimpleNamespace:
    """The module under test: reference.py or student.py next to the requesting test file, or a mutant."""
    which = chosen_impl(request.config)
    directory = Path(request.path).parent
    if which.startswith(MUTANT):
        return mutant(load_impl(directory, "reference"), request.module, which[len(MUTANT):])
    return load_impl(directory, which)


@pytest.fixture(autouse=True, scope="session")
def engine_uses_its_own_code():
    """The engine that builds a test's data (a log, a tree) runs its own functions, whatever
    ``MINIDB_IMPL`` says: the exercise's tests check the function under test alone (the engine's
    own tests and crash sweeps are where a student's function runs inside it; see minidb/impl.py).
    Session-wide, so that module-scoped fixtures building an environment run before it too."""
    from minidb import impl

    with impl.using(impl.ENGINE):
        yield
