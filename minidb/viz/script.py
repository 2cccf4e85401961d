"""Workloads as data: the scripts a notebook shows in a cell and a student edits.

A *script* is a list of operations. Each operation is a tuple whose first item
names it and whose other items are its arguments, plain strings and numbers::

    script = [
        ("fix", "1.1.4"),
        ("update", "1.1.5", "alpha"),
    ]

Each demo module describes its operations with a table of :class:`Op` (name,
argument names, what it does). :func:`checked` validates a whole script before
anything runs, so a typo is reported with its step number instead of running
half the workload; a demo that finds a bad argument while running raises
:func:`script_error` the same way. :func:`operations_table` prints the table
for the notebook.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


class ScriptError(ValueError):
    """A script operation that cannot run: names the step (from 1), the operation and why."""


@dataclass(frozen=True)
class Op:
    name: str
    args: tuple[str, ...]
    doc: str


def op_table(*ops: Op) -> dict[str, Op]:
    return {op.name: op for op in ops}


def script_error(step: int, operation: object, why: str) -> ScriptError:
    return ScriptError(f"step {step} {operation!r}: {why}")


def checked(script: Iterable[Sequence[object]], ops: Mapping[str, Op]) -> list[tuple]:
    """The script as a list of tuples, each a known operation with the right number of arguments."""
    result = []
    for step, operation in enumerate(script, 1):
        if isinstance(operation, str) or not isinstance(operation, Sequence) or not operation \
                or not isinstance(operation[0], str):
            raise script_error(step, operation, "an operation is a tuple like ('name', argument, ...)")
        spec = ops.get(operation[0])
        if spec is None:
            raise script_error(step, operation, f"unknown operation {operation[0]!r}; the operations are "
                                                + ", ".join(ops))
        if len(operation) - 1 != len(spec.args):
            wanted = ", ".join(spec.args) if spec.args else "no arguments"
            raise script_error(step, operation, f"{spec.name} takes {wanted}")
        result.append(tuple(operation))
    return result


def operations_table(ops: Mapping[str, Op]) -> str:
    """One line per operation, written as the tuple it is: ``('name', arg, ...)  what it does``."""
    heads = {name: "(" + ", ".join([repr(name), *op.args]) + ("" if op.args else ",") + ")" for name, op in ops.items()}
    width = max(map(len, heads.values()))
    return "\n".join(f"{heads[name]:<{width}}  {op.doc}" for name, op in ops.items())
