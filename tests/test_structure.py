"""The engine's shape, kept readable: short files, small import circles, shallow folders, no twin inside.

What a student reads is the reference (minidb's engine packages); what
exists only for speed lives in ``minidb/fast/`` (see :mod:`minidb.impl`).
These checks keep it that way as the code changes:

- no engine file outside ``minidb/fast/`` is longer than 700 lines;
- no import circle inside io, log, pagestore, logstore or replication spans
  more than 3 modules (a circle counts type-only imports too: a module that
  names another's class in its signatures depends on it);
- ``logstore/`` and ``replication/`` have at most 12 modules at their top
  level (the rest in folders, one per part);
- the engine packages never speak of a "careful" path: the plain way is the
  reference, and the other one is a twin in ``minidb/fast/``;
- the log store's environment is its composition root: it builds the parts and
  hands each the few collaborators it needs, so no part names the environment
  (only what sits above it does: the database handle, the tools, the worked
  cases, the data eraser that an application attaches).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "minidb"
ENGINE = ("io", "log", "pagestore", "logstore", "replication")
MAX_LINES, MAX_CIRCLE, MAX_TOP = 700, 3, 12
ABOVE_THE_ENVIRONMENT = ("minidb.logstore", "minidb.logstore.database", "minidb.logstore.cases",
                         "minidb.logstore.tools.", "minidb.logstore.eraser.eraser")


def engine_files() -> list[Path]:
    return sorted(p for part in ENGINE for p in (PACKAGE / part).rglob("*.py"))


def rel(path: Path) -> str:
    return str(path.relative_to(PACKAGE))


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the minidb modules it imports anywhere in it (type-only imports included); ``from p import m``
    of a submodule ``m`` is an edge to ``p.m`` only."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}

    def known(name: str) -> str:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph = {}
    for name, path in modules.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                edges.update(known(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                subs = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in modules]
                edges.update(subs)
                if len(subs) < len(node.names):
                    edges.add(known(node.module))
        graph[name] = {e for e in edges if e and e != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            child = next(edges, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


@functools.cache
def all_circles() -> list[list[str]]:
    return circles(import_graph())


def test_no_engine_file_is_longer_than_700_lines():
    long = {rel(p) for p in engine_files() if len(p.read_text().splitlines()) > MAX_LINES}
    assert not long, f"longer than {MAX_LINES} lines: {sorted(long)}"


@pytest.mark.parametrize("part", ENGINE)
def test_no_import_circle_spans_more_than_three_modules(part):
    big = [c for c in all_circles() if len(c) > MAX_CIRCLE and any(m == f"minidb.{part}" or m.startswith(f"minidb.{part}.")
                                                                  for m in c)]
    assert not big, f"import circles of more than {MAX_CIRCLE} modules: {big}"


@pytest.mark.parametrize("part", ["logstore", "replication"])
def test_at_most_twelve_modules_at_the_top_of_an_engine_folder(part):
    top = sorted(p.name for p in (PACKAGE / part).glob("*.py"))
    assert len(top) <= MAX_TOP, f"{part} has {len(top)} modules at its top level: {top}"


def test_the_engine_has_no_careful_path():
    says = {rel(p) for p in engine_files() if "careful" in p.read_text().lower()}
    assert not says, f"speak of a careful path: {sorted(says)}"


def test_no_part_of_the_log_store_names_its_environment():
    graph = import_graph()
    naming = sorted(m for m, edges in graph.items() if "minidb.logstore.env" in edges
                    and m.startswith("minidb.logstore") and m != "minidb.logstore.env"
                    and not any(m == a or (a.endswith(".") and m.startswith(a)) for a in ABOVE_THE_ENVIRONMENT))
    assert not naming, f"parts that reach the environment instead of being handed their collaborators: {naming}"


def test_circles_are_found():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
