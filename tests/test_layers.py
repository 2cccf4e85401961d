"""The architecture, enforced: imports point down; the engine core is stdlib-only.

Layers, bottom up (see docs/ARCHITECTURE.md)::

    0    minidb.errors, minidb.stats, minidb.impl, minidb.collector
    1    minidb.io
    2    minidb.log
    3    minidb.pagestore | minidb.logstore   (never import each other)
    4    minidb.replication
    4.8  minidb.crashtest, minidb.quiz        (code that ships and drives the engines from above: the crash
                                              tests, the practice problems)
    5    minidb.cli, minidb.viz, minidb.spark (front ends)

An accelerated twin under ``minidb/fast/`` sits just above what it speeds
up (``minidb.fast.pagestore`` at 3.5: it may import the page store, the
log and the disk, never the log store); nothing below the front ends
imports a twin (:mod:`minidb.impl` finds one by name). The crash tests
drive the engines and replication from above; no engine imports them.
"""

import ast
import re
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "minidb"
LAYERS = {
    "minidb.errors": 0, "minidb.stats": 0, "minidb.impl": 0, "minidb.collector": 0, "minidb": 0,
    "minidb.io": 1,
    "minidb.log": 2,
    "minidb.pagestore": 3, "minidb.logstore": 3,
    "minidb.replication": 4,
    "minidb.fast": 0, "minidb.fast.io": 1.5, "minidb.fast.log": 2.5,
    "minidb.fast.pagestore": 3.5, "minidb.fast.logstore": 3.5, "minidb.fast.replication": 4.5,
    "minidb.crashtest": 4.8, "minidb.quiz": 4.8,
    "minidb.cli": 5, "minidb.viz": 5, "minidb.spark": 5, "minidb.__main__": 5,
}
ENGINES = {"minidb.pagestore", "minidb.logstore", "minidb.fast.pagestore", "minidb.fast.logstore"}
FRONT_ENDS = {"minidb.cli", "minidb.viz", "minidb.spark", "minidb.__main__"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def component(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:3 if parts[:2] == ["minidb", "fast"] else 2])


def engine(component_name: str) -> str:
    """The engine a component belongs to: a twin under minidb/fast/ belongs to the engine it speeds up."""
    return component_name.replace("minidb.fast.", "minidb.", 1)


def imports_of(path: Path, runtime_only: bool = False) -> list[str]:
    """The modules ``path`` imports (``from m import n`` gives m and m.n); with ``runtime_only``, not those
    under ``if TYPE_CHECKING:``, which are type annotations only."""
    tree = ast.parse(path.read_text(), str(path))
    skipped = {id(n) for node in ast.walk(tree) if runtime_only and isinstance(node, ast.If)
               and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING" for n in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return found


SOURCES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_imports_point_down(path):
    me = component(module_name(path))
    assert me in LAYERS, f"{me} is not placed in a layer; add it to LAYERS and docs/ARCHITECTURE.md"
    for imported in imports_of(path):
        if not imported.startswith("minidb"):
            continue
        other = component(imported)
        assert other in LAYERS, f"{path}: imports {imported}, which has no layer"
        if me == other:
            continue
        assert not (me in ENGINES and other in ENGINES and engine(me) != engine(other)), \
            f"{path}: the two engines never import each other"
        assert LAYERS[other] < LAYERS[me] or (me in FRONT_ENDS and other in FRONT_ENDS), \
            f"{path}: {me} (layer {LAYERS[me]}) imports {imported} (layer {LAYERS[other]})"


@pytest.mark.parametrize("path", [p for p in SOURCES if component(module_name(p)) not in FRONT_ENDS],
                         ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_engine_core_uses_the_standard_library_only(path):
    for imported in imports_of(path):
        top = imported.split(".")[0]
        assert top == "minidb" or top in sys.stdlib_module_names, f"{path}: imports {imported}"


def test_no_pickle_marshal_shelve_or_eval():
    banned = re.compile(r"^\s*(import|from)\s+(pickle|marshal|shelve)\b|\beval\(", re.MULTILINE)
    for path in SOURCES:
        match = banned.search(path.read_text())
        assert match is None, f"{path}: {match.group(0) if match else ''}"


# The page store's parts, bottom up: a part imports only parts below it (or, at the top, the
# modules beside it). Imports under ``if TYPE_CHECKING:`` are type annotations only and may point up.
PAGESTORE_PARTS = {
    "ids": 0, "errors": 0,
    "pages": 1, "lock": 1,
    "buffer": 2,
    "wal": 3,
    "volume": 4,
    "transactions": 5,
    "files": 6,
    "btree": 6.5,
    "rtree": 6.6,
    "directory": 6.7,
    "restart": 7,
    "sm": 8, "mounts": 8, "verify": 8, "__init__": 8,
}
PAGESTORE = PACKAGE / "pagestore"


def pagestore_part(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if parts[:2] == ["minidb", "pagestore"] and len(parts) > 2 and parts[2] in PAGESTORE_PARTS else None


@pytest.mark.parametrize("path", sorted(PAGESTORE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_pagestore_parts_import_down_only(path):
    rel = path.relative_to(PAGESTORE)
    me = rel.parts[0] if len(rel.parts) > 1 else rel.stem
    assert me in PAGESTORE_PARTS, f"{path}: {me} is not placed among the page store's parts (PAGESTORE_PARTS)"
    for imported in imports_of(path, runtime_only=True):
        other = pagestore_part(imported)
        if other is None or other == me:
            continue
        assert PAGESTORE_PARTS[other] < PAGESTORE_PARTS[me] or PAGESTORE_PARTS[me] == 8, \
            f"{path}: the page store's {me} imports {imported}, which is not below it"


def test_crash_tests_live_in_minidb_crashtest_not_in_the_engines():
    """Testing code that ships sits above the engines: every module with a ``crash_sweep`` is in
    minidb/crashtest/, and the ``minidb crashtest`` engines are its modules (with ``ENGINE_background`` for
    the engines that run with background threads, ``--background``)."""
    from minidb.cli.crashtest import BACKGROUND, SWEEPS

    sweeps = {module_name(path) for path in SOURCES if re.search(r"^def crash_sweep\(", path.read_text(), re.MULTILINE)}
    assert sweeps == ({f"minidb.crashtest.{engine}" for engine in SWEEPS}
                      | {f"minidb.crashtest.{engine}_background" for engine in BACKGROUND})
