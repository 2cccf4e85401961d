"""``minidb course export --project NAME --out DIR``: the student edition of a course project.

A course project (``exercises/projects/NAME/``, see ``docs/projects.md``) asks a
student to write one component of the engine whole. The student edition is
the repository without minidb's own version of that component, so that the
answer is not one ``git log`` away::

    minidb course export --project buffer_pool --out ../minidb-buffer-pool
    exported 912 files of the repository for project buffer_pool into ../minidb-buffer-pool

What it writes into ``DIR``:

1. every file ``git ls-files`` lists, except
2. each of the project's ``reference_files`` (``project.json``), replaced by a
   module made of the project's ``skeleton.py`` and the component's hot spot,
   declared without a twin: the engine still builds the component through the
   hot spot, and gets the skeleton (a class whose methods raise
   ``NotImplementedError``) until ``--impl student --project NAME`` names the
   student's file. No line of minidb's own class is left;
3. the project's ``fast_files`` (the accelerated twin, a subclass of the very
   class left out) are left out: ``--impl fast`` runs every other twin and
   this component's skeleton; naming it in ``fast:NAME`` is an error; so are
   its ``solution_files`` (optional: modules only the component imports that
   hold part of what the student writes, as the lock manager's waiting threads);
4. every project's ``tests/hidden/`` and ``mutants/`` are left out (the
   instructor's tests and wrong solutions); the exercises keep their
   ``reference.py``, which only point into the engine; so is a test module
   of ``tests/`` that imports, at its top, a module left out by 3 (the
   accelerated twin's own tests, the tests of minidb's passes by name): it
   could not even be collected, and ``make test`` would stop on it;
5. ``STUDENT.md``, a page on where to start.

``DIR`` must be new or empty (or hold this command's earlier output, which is
replaced): the command deletes nothing it did not write (``.minidb-output``
lists what it wrote, :mod:`minidb.cli.output`). Exit code 2 for an unknown
project, a ``DIR`` in use, or a repository git cannot list.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
from pathlib import Path

from minidb import impl
from minidb.cli.output import owned_output
from minidb.errors import UserError
from minidb.io import created

ROOT = Path(__file__).resolve().parents[2]
OWNER = "minidb course export"


def register(commands) -> None:
    p = commands.add_parser("course", help="course projects: export a project's student edition")
    sub = p.add_subparsers(dest="course_command", metavar="COMMAND", parser_class=type(p))
    sub.required = True
    e = sub.add_parser("export", help="copy the repository for one project, minidb's own component left out")
    e.add_argument("--project", required=True, help="the project (a directory of exercises/projects/)")
    e.add_argument("--out", required=True, help="a new or empty directory")
    e.set_defaults(run=run_export)


def project_spec(name: str, root: Path = ROOT) -> dict:
    """The ``project.json`` of project ``name`` in the repository at ``root``."""
    projects = root / "exercises" / impl.PROJECTS
    path = projects / name / "project.json"
    if not path.is_file():
        known = sorted(p.name for p in projects.iterdir() if (p / "project.json").is_file()) if projects.is_dir() else []
        raise UserError(f"no project {name!r} in {projects} (projects: {', '.join(known) or 'none'})")
    return json.loads(path.read_text())


def tracked_files(root: Path = ROOT) -> list[str]:
    try:
        listing = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise UserError(f"{root}: git cannot list the repository's files ({e})") from e
    return sorted(name for name in listing.stdout.decode().split("\0") if name)


def left_out(path: str, spec: dict) -> bool:
    """Whether the student edition of ``spec``'s project leaves ``path`` out."""
    parts = path.split("/")
    instructors = (len(parts) > 4 and parts[:2] == ["exercises", impl.PROJECTS]
                   and (parts[3] == "mutants" or parts[3:5] == ["tests", "hidden"]))
    return instructors or path in spec["fast_files"] or path in spec.get("solution_files", [])


def module_of(path: str) -> str:
    """``minidb/pagestore/restart/redo.py`` -> ``minidb.pagestore.restart.redo``."""
    parts = path.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_any(source: str, modules: set[str]) -> bool:
    """Whether ``source`` imports, at its top level, one of ``modules`` or something inside one."""
    def inside(name: str) -> bool:
        return any(name == m or name.startswith(m + ".") for m in modules)

    for node in ast.parse(source).body:
        if isinstance(node, ast.Import) and any(inside(alias.name) for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and not node.level and (
                inside(node.module or "") or any(inside(f"{node.module}.{alias.name}") for alias in node.names)):
            return True
    return False


def student_module(reference: str, skeleton: str, project: str) -> str:
    """The module that stands in for ``reference`` (its source): the skeleton's source, then each hot spot
    the reference declares for the project's components, declared again without a twin."""
    declared = []
    for node in ast.parse(reference).body:
        call = node.value if isinstance(node, ast.Assign) else None
        if (isinstance(call, ast.Call) and getattr(call.func, "attr", None) == "hot_spot"
                and any(k.arg == "project" and getattr(k.value, "value", None) == project for k in call.keywords)):
            declared.append(f"{node.targets[0].id} = impl.hot_spot({call.args[0].id}, twin=False, "  # type: ignore[attr-defined]
                            f'project="{project}")')
    if not declared:
        raise UserError(f"no hot spot of project {project} in the reference it replaces")
    head, sep, rest = skeleton.partition("from __future__ import annotations\n")
    body = head + sep + "\nfrom minidb import impl\n" + rest if sep else "from minidb import impl\n" + skeleton
    return body.rstrip() + "\n\n\n" + "\n".join(declared) + "\n"


def student_guide(spec: dict) -> str:
    name = spec["name"]
    judge = "\n".join(f"    .venv/bin/python -m minidb {' '.join(args)} --impl student --project {name}"
                      for args in spec["judge"])
    return f"""# Student edition: project {name}

{spec['title']}.

This copy of minidb leaves out minidb's own version of what you build:
{', '.join(f'`{p}`' for p in spec['reference_files'])} now holds the project's skeleton, so the engine
runs, and fails with `NotImplementedError`, until your class is done.

- Read `exercises/projects/{name}/README.md`: the interface, the milestones, the questions to answer first.
- Write your class in `exercises/projects/{name}/student.py`.
- Run a milestone's tests against it:

    .venv/bin/python -m pytest exercises/projects/{name}/tests/public --exercise-impl=student

- Then the engine's crash sweeps with your class inside, as the grader runs them:

{judge}

Every other part of minidb, its notebooks and its exercises are here as in the full repository.
"""


def export(name: str, out: str, root: Path = ROOT) -> int:
    """Write the student edition of project ``name`` into ``out``; how many files were written."""
    spec = project_spec(name, root)
    skeleton = (root / "exercises" / impl.PROJECTS / name / "skeleton.py").read_text()
    replaced = {path: student_module((root / path).read_text(), skeleton, name) for path in spec["reference_files"]}
    files = [path for path in tracked_files(root) if not left_out(path, spec)]
    gone = {module_of(path) for path in spec["fast_files"] + spec.get("solution_files", [])}
    files = [path for path in files if not (path.startswith("tests/") and path.endswith(".py") and gone
                                            and (root / path).is_file()
                                            and imports_any((root / path).read_text(), gone))]
    written = 0
    with owned_output(out, OWNER):
        for path in files:
            target = Path(out, *path.split("/"))
            created.makedirs(target.parent)
            if path in replaced:
                target.write_text(replaced[path])
            elif (root / path).is_file():
                target.write_bytes((root / path).read_bytes())
                os.chmod(target, (root / path).stat().st_mode & 0o777)
            else:
                continue  # listed by git, deleted in the working tree
            created.created(target)
            written += 1
        guide = Path(out, "STUDENT.md")
        guide.write_text(student_guide(spec))
        created.created(guide)
    return written + 1


def run_export(args) -> int:
    written = export(args.project, args.out)
    print(f"exported {written} files of the repository for project {args.project} into {args.out}")
    return 0
