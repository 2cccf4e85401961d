"""The transactions-and-records demonstration of ``notebooks/06_transactions_records.ipynb``.

A volume of 64 pages of 512 bytes and a *script*: a list of operations on
transactions and named records, each a tuple of plain strings and numbers
(:mod:`minidb.viz.script`), e.g. ``("begin", "T2")``, ``("update", "T2",
"beta", 0, "BETA")``, ``("abort", "T2")``. :data:`OPS` lists them. The
transactions are named ``T1``, ``T2``, ... in the order they begin, as the
engine numbers them; a record is named when it is created.
:class:`XctWorkload` runs a script on a storage manager and keeps, besides
the engine's state, what each record should hold: the committed bodies that
notebook 08 checks a restart against (:mod:`minidb.viz.recovery_demo` runs
the same operations, plus a checkpoint and the page cleaner).

The default :data:`SCRIPT`: T1 creates the file ``s(1.3)`` (its large
records in ``s(1.4)``) and three records and commits; T2 updates beta,
appends to alpha, creates delta and frees gamma, whose slot stays
*reserved* for T2; T3 creates a record exactly gamma's size and does not
get gamma's slot; T2 aborts: its rollback undoes each entry, newest first,
logging a CLR whose undo-next points past it, and gamma is back in its very
slot; T3 commits; T4 frees alpha and commits; T5, younger than every
transaction that reserved space on the page, reuses alpha's slot; T5 then
creates a large record (its body on pages of s(1.4)) and commits.

:func:`xct_step` is the pure function behind the notebook's slider: it runs
the script from a fresh volume up to step ``k`` and returns the file's first
page (byte by byte, :mod:`minidb.viz.pages`), the log in transaction lanes
with the CLRs and their undo-next (:mod:`minidb.viz.xctlog`), and the
entries the last steps wrote. The picture leaves out the entries that
formatting the volume wrote (its first checkpoint): only the script's
transactions have lanes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from matplotlib.figure import Figure

from minidb.errors import MinidbError
from minidb.io import SimDisk
from minidb.log import LSN
from minidb.pagestore.buffer.latch import SH
from minidb.pagestore.ids import RecordId, StoreId
from minidb.pagestore.pages.slotted import SlottedPage
from minidb.pagestore.sm import StorageManager
from minidb.viz.pages import PageLayout, draw_page, page_layout
from minidb.viz.script import Op, checked, op_table, script_error
from minidb.viz.xctlog import LogRow, draw_xct_log, log_rows

NUM_PAGES, EXT_SZ, PAGE_SIZE = 64, 4, 512

OPS = op_table(
    Op("begin", ("T",), "begin transaction T (T1, T2, ... in the order they begin)"),
    Op("create_file", ("T",), "T creates the file s(1.3) (its large records go in s(1.4))"),
    Op("create", ("T", "name", "body"), "T creates a record called name holding body (a string)"),
    Op("update", ("T", "name", "start", "new"), "T overwrites the record's body from byte start with new"),
    Op("append", ("T", "name", "more"), "T appends more to the record's body"),
    Op("free", ("T", "name"), "T frees the record (its slot stays reserved for T until T ends)"),
    Op("commit", ("T",), "T commits: the log is forced up to its xct_end"),
    Op("abort", ("T",), "T rolls back: each undo logs a CLR"),
)

SCRIPT: list[tuple] = [
    ("begin", "T1"),
    ("create_file", "T1"),
    ("create", "T1", "alpha", "alpha" * 6),
    ("create", "T1", "beta", "beta" * 6),
    ("create", "T1", "gamma", "gamma" * 6),
    ("commit", "T1"),
    ("begin", "T2"),
    ("update", "T2", "beta", 0, "BETA"),
    ("append", "T2", "alpha", "+more"),
    ("create", "T2", "delta", "delta" * 6),
    ("free", "T2", "gamma"),
    ("begin", "T3"),
    ("create", "T3", "theta", "theta" * 6),
    ("abort", "T2"),
    ("commit", "T3"),
    ("begin", "T4"),
    ("free", "T4", "alpha"),
    ("commit", "T4"),
    ("begin", "T5"),
    ("create", "T5", "iota", "iota" * 5),
    ("create", "T5", "kappa", "kappa " * 180),
    ("commit", "T5"),
]
STEPS = len(SCRIPT)


def plain(ops: list[tuple]) -> list[tuple]:
    """``ops`` (a checked script) if every argument is a plain string or number; else a ScriptError."""
    for step, op in enumerate(ops, 1):
        if not all(isinstance(arg, (str, int, float)) for arg in op[1:]):
            raise script_error(step, op, "the arguments are plain strings and numbers")
    return ops


@dataclass
class XctWorkload:
    """A script running on a storage manager: its transactions and records by name.

    ``bodies`` is what each record holds now (None: freed), as the script's
    operations say; ``committed`` only what committed transactions left, in
    commit order (``commits``: transaction id, commit LSN, the committed
    bodies after it). Without locks, a script in which two live
    transactions change one record is run as written.
    """

    sm: StorageManager
    xcts: dict[str, Any] = field(default_factory=dict)
    ended: dict[str, str] = field(default_factory=dict)
    rids: dict[str, RecordId] = field(default_factory=dict)
    names: dict[RecordId, str] = field(default_factory=dict)
    fid: StoreId | None = None
    bodies: dict[RecordId, bytes | None] = field(default_factory=dict)
    before: dict[str, dict[RecordId, bytes | None]] = field(default_factory=dict)  # per transaction
    committed: dict[RecordId, bytes] = field(default_factory=dict)
    commits: list[tuple[int, LSN, dict[RecordId, bytes]]] = field(default_factory=list)

    def run(self, step: int, op: Sequence[Any]) -> str:
        """Run one operation of a script :func:`checked` against the caller's table; a bad argument or an
        engine refusal is a ScriptError naming the step."""
        try:
            return getattr(self, "_" + op[0])(step, op, *op[1:])
        except MinidbError as error:
            raise script_error(step, tuple(op), str(error)) from error

    # -- argument checks ------------------------------------------------------------------------------
    def _xct(self, step: int, op: Sequence[Any], name: object) -> Any:
        if name in self.ended:
            raise script_error(step, tuple(op), f"{name} has already ended ({self.ended[name]})")
        if name not in self.xcts:
            raise script_error(step, tuple(op), f"no transaction {name} has begun")
        return self.xcts[name]

    def _rid(self, step: int, op: Sequence[Any], name: object, live: bool = True) -> RecordId:
        if name not in self.rids:
            raise script_error(step, tuple(op), f"no record called {name!r} has been created")
        rid = self.rids[name]
        if live and self.bodies.get(rid) is None:
            raise script_error(step, tuple(op), f"record {name!r} ({rid}) has been freed")
        return rid

    @staticmethod
    def _text(step: int, op: Sequence[Any], value: object, what: str) -> bytes:
        if not isinstance(value, str):
            raise script_error(step, tuple(op), f"{what} must be a string, not {value!r}")
        return value.encode()

    def _change(self, name: str, rid: RecordId, body: bytes | None) -> None:
        self.before.setdefault(name, {}).setdefault(rid, self.bodies.get(rid))
        self.bodies[rid] = body

    # -- the operations ---------------------------------------------------------------------------------
    def _begin(self, step: int, op: Sequence[Any], name: object) -> str:
        if name in self.xcts:
            raise script_error(step, tuple(op), f"{name} has begun already")
        xct = self.sm.begin()
        if name != f"T{xct.txn_id}":
            raise script_error(step, tuple(op), f"transactions are named in the order they begin: this one is "
                                                f"T{xct.txn_id}")
        self.xcts[name] = xct
        return f"{name} begins"

    def _create_file(self, step: int, op: Sequence[Any], name: object) -> str:
        xct = self._xct(step, op, name)
        if self.fid is not None:
            raise script_error(step, tuple(op), f"the script has a file already, {self.fid}")
        self.fid = self.sm.create_file(xct)
        return f"{name} creates file {self.fid}"

    def _create(self, step: int, op: Sequence[Any], name: object, record: object, body: object) -> str:
        xct = self._xct(step, op, name)
        data = self._text(step, op, body, "the body")
        if self.fid is None:
            raise script_error(step, tuple(op), "no file yet: create_file first")
        if not isinstance(record, str) or record in self.rids:
            raise script_error(step, tuple(op), f"a new record needs a new name, not {record!r}")
        rid = self.sm.create_rec(xct, self.fid, data)
        self.rids[record], self.names[rid] = rid, record
        self._change(str(name), rid, data)
        large = " (a large record)" if len(data) > self.sm.files.max_small_rec else ""
        return f"{name} creates {record}, {len(data)} bytes: {rid}{large}"

    def _update(self, step: int, op: Sequence[Any], name: object, record: object, start: object,
                new: object) -> str:
        xct = self._xct(step, op, name)
        rid = self._rid(step, op, record)
        data = self._text(step, op, new, "the new bytes")
        body = self.bodies[rid]
        if not isinstance(start, int) or isinstance(start, bool) or not 0 <= start <= len(body) - len(data):
            raise script_error(step, tuple(op), f"{record} holds {len(body)} bytes: start must be a number from 0 "
                                                f"to {len(body) - len(data)} for {len(data)} new bytes")
        self.sm.update_rec(xct, rid, start, data)
        self._change(str(name), rid, body[:start] + data + body[start + len(data):])
        return f"{name} updates {record} at byte {start}"

    def _append(self, step: int, op: Sequence[Any], name: object, record: object, more: object) -> str:
        xct = self._xct(step, op, name)
        rid = self._rid(step, op, record)
        data = self._text(step, op, more, "what is appended")
        self.sm.append_rec(xct, rid, data)
        self._change(str(name), rid, self.bodies[rid] + data)
        return f"{name} appends {len(data)} bytes to {record}"

    def _free(self, step: int, op: Sequence[Any], name: object, record: object) -> str:
        xct = self._xct(step, op, name)
        rid = self._rid(step, op, record)
        self.sm.free_rec(xct, rid)
        self._change(str(name), rid, None)
        return f"{name} frees {record}: slot {rid.slot} stays reserved for {name} until it ends"

    def _commit(self, step: int, op: Sequence[Any], name: object) -> str:
        xct = self._xct(step, op, name)
        lsn = self.sm.commit(xct)
        self._committed(str(name), xct.txn_id, lsn)
        return f"{name} commits at {lsn}"

    def _committed(self, name: str, tid: int, lsn: LSN) -> None:
        """Transaction ``name`` committed at ``lsn``: its changes join the committed bodies."""
        self.ended[name] = "committed"
        for rid in self.before.pop(name, {}):
            body = self.bodies[rid]
            if body is None:
                self.committed.pop(rid, None)
            else:
                self.committed[rid] = body
        self.commits.append((tid, lsn, dict(self.committed)))

    def _abort(self, step: int, op: Sequence[Any], name: object) -> str:
        xct = self._xct(step, op, name)
        undone = [s for s in self.sm.abort(xct) if s.logged]
        self.ended[str(name)] = "aborted"
        self.bodies.update(self.before.pop(str(name), {}))
        return f"{name} aborts: {len(undone)} entries undone, newest first, each logging its undo"


class Demo:
    """A fresh volume and the script's workload on it."""

    def __init__(self) -> None:
        self.sm = StorageManager.format(SimDisk("xct-demo"), num_pages=NUM_PAGES, ext_sz=EXT_SZ, page_size=PAGE_SIZE,
                                        frames=16, clock=_clock)
        self.workload = XctWorkload(self.sm)


def _clock() -> float:
    return 1_700_000_000.0


def run_script(script: Sequence[Sequence[Any]] = SCRIPT, upto: int | None = None) -> Demo:
    """A fresh demo with the first ``upto`` steps of ``script`` run (all of them by default)."""
    ops = plain(checked(script, OPS))
    demo = Demo()
    for step, op in enumerate(ops[:upto], 1):
        demo.workload.run(step, op)
    return demo


@dataclass(frozen=True)
class XctStep:
    step: int
    description: str  # "step 3: ('free', 'T2', 'gamma')" or "steps 7-10"
    outcomes: tuple[str, ...]  # what each step did
    entries: tuple[str, ...]
    rows: tuple[LogRow, ...]
    page: PageLayout
    figure: Figure
    page_figure: Figure

    def summary(self) -> str:
        lines = [self.description, *(f"  {line}" for line in self.outcomes),
                 f"log entries written: {len(self.entries)}"]
        return "\n".join(lines + [f"  {line}" for line in self.entries])


def describe(op: Sequence[Any]) -> str:
    """An operation as the script writes it, long bodies shortened."""
    args = [repr(a) if len(repr(a)) <= 14 else f"'{a[:8]}...' ({len(a)} bytes)" for a in op[1:]]
    return "(" + ", ".join([repr(op[0]), *args]) + ")"


def xct_step(step: int, script: Sequence[Sequence[Any]] = SCRIPT, since: int | None = None) -> XctStep:
    """The volume after the first ``step`` steps of ``script`` (0: just formatted).

    The entries that steps ``since + 1 .. step`` wrote (by default: step ``step``
    alone) are listed and outlined in blue.
    """
    ops = plain(checked(script, OPS))
    if not 0 <= step <= len(ops):
        raise ValueError(f"step must be between 0 and {len(ops)}, not {step}")
    since = max(step - 1, 0) if since is None else since
    if not 0 <= since <= step:
        raise ValueError(f"since must be between 0 and the step {step}, not {since}")
    demo = Demo()
    formatted = before = demo.sm.log.last_lsn
    outcomes = []
    for k, op in enumerate(ops[:step], 1):
        if k == since + 1:
            before = demo.sm.log.last_lsn
        outcome = demo.workload.run(k, op)
        if k > since:
            outcomes.append(outcome)
    rows = [r for r in log_rows(demo.sm.log) if r.lsn > formatted]
    new = [r for r in rows if step and r.lsn > before]
    if step == 0:
        description = "step 0: format a volume of 64 pages of 512 bytes"
    elif since == step - 1:
        description = f"step {step}: {describe(ops[step - 1])}"
    else:
        description = f"steps {since + 1}-{step}"
    fid = demo.workload.fid
    if fid is not None:
        first = min(demo.sm.volume.store_pages(fid), key=lambda p: p.page)
        page = demo.sm.bp.fix(first, SH)
        try:
            layout = page_layout(page)
        finally:
            demo.sm.bp.unfix(page)
        where = str(first)
    else:
        layout, where = page_layout(SlottedPage(bytearray(PAGE_SIZE))), "the file's first page (no file yet)"
    lanes = sorted({r.tid for r in rows}) or [0]
    figure = draw_xct_log(rows, title=description, outlined={r.lsn: "#1565c0" for r in new},
                          lanes=lanes)
    page_figure = draw_page(layout, title=f"{where} after step {step}")
    return XctStep(step, description, tuple(outcomes) or ("formatted",), tuple(str(r) for r in new), tuple(rows),
                   layout, figure, page_figure)

