"""The B+tree demonstration of ``notebooks/07_btree.ipynb``: a tree grown key by key, split, rolled back, crashed.

A *script* of operations (:mod:`minidb.viz.script`) runs on a small page
store on a :class:`~minidb.io.SimDisk`: 64 pages of 512 bytes, a buffer pool
as large as the volume (no page is written before a checkpoint or a clean
shutdown), and a log buffer of one byte, so that every log entry reaches the
disk by itself when the next one is appended: a crash can cut a structure
modification after any of its entries. The demo creates one unique index on
``i4`` keys (committed) before the script's first step; every element is the
script's value padded to :data:`ELEMENT` bytes, so about eight entries fill a
leaf and splits come after a few keys. The operations (:data:`OPS`):
``begin``, ``insert``, ``remove``, ``lookup``, ``scan`` (keys lo..hi, both
included), ``commit``, ``abort``, ``checkpoint``, ``crash`` (the disk keeps
what was synced), ``crash_in_split`` (an insert whose leaf is full, cut after
the split's first ``pieces`` log entries reached the disk) and ``restart``.

The default :data:`SCRIPT`:

==========  =================================================================
T1          inserts 10, 20, .. 80 (the root, a leaf, is full); commits
T2          inserts 90: the **root grows** (its entries move to a new page,
            the root page stays and becomes level 2) and the new page
            **splits**; then 100 and 110; commits
T3          inserts 115: the leaf of 50 .. 115 is full now
T4          inserts 120: that **leaf splits**, and 115 moves to the new page;
            T4 commits
T3          **aborts**: 115 goes (logical undo, on the new page), the split
            stays
checkpoint
T5          removes 10 .. 40: their leaf is **empty and stays** (lazy
            deletion); looks up 20 and scans 1 .. 60; commits
T6          inserts 130 .. 160 (the last leaf is full again), then 170
            with a **crash in the middle of the split**; restart undoes the
            split's pieces physically, then T6's inserts logically
==========  =================================================================

:data:`LOCKS_SCRIPT` shows key-value locking: T2 scans 20 .. 40, T3's insert
of 35 *waits* for T2's locks. The demo sets the index's lock timeout to 0:
an operation the lock manager would make wait is put aside (its outcome says
whose lock it needs) and runs again each time a transaction ends; the
transaction's other operations are refused meanwhile. :data:`LOAD_SCRIPT`
bulk-loads 28 keys into a new index, which the pictures show from then on.

:func:`btree_step` is the pure function behind the notebook's pictures: it
runs the first ``k`` steps from a fresh disk and returns the tree's state
(:class:`~minidb.viz.btree.TreePicture`), its graphviz drawing
(:func:`~minidb.viz.btree.tree_graph`) and the log entries of step ``k``
(:func:`~minidb.viz.btree.draw_smo_log`, the nested top actions marked).
:func:`btree_explorer` is the notebook's last control: a slider over the
script's steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from matplotlib.figure import Figure

from minidb.errors import MinidbError, SimulatedCrash
from minidb.io import CrashMode, SimDisk
from minidb.log.lsn import LSN
from minidb.pagestore.btree import check_tree
from minidb.pagestore.btree.keyed import leaf_entry
from minidb.pagestore.buffer.latch import SH
from minidb.pagestore.ids import PageId, StoreId
from minidb.pagestore.lock import LOCK_MANAGER, LockTimeout
from minidb.pagestore.pages.page import SLOT_SIZE
from minidb.pagestore.sm import StorageManager
from minidb.pagestore.transactions.xct import Xct
from minidb.viz.btree import TreePicture, draw_smo_log, smo_spans, tree_graph, tree_picture
from minidb.viz.script import Op, checked, op_table, script_error
from minidb.viz.xctlog import LogRow, log_rows

NUM_PAGES, EXT_SZ, PAGE_SIZE = 64, 4, 512
FRAMES = NUM_PAGES  # the whole volume fits: the disk sees pages only at a checkpoint or a clean shutdown
ELEMENT = 40  # bytes of every element: the value, padded with zero bytes
KEY_RANGE = (-2**31, 2**31 - 1)  # i4 keys
MAX_LOAD = 400  # keys a bulk load may make (the volume has 64 pages)
MAX_PIECES = 6  # every SMO logs at least 7 entries (the root growing: 7; a leaf split: 9 or 10)

OPS = op_table(
    Op("begin", ("T",), "transaction T begins"),
    Op("insert", ("T", "key", "value"), "T inserts key (a number) with its value (a short string)"),
    Op("remove", ("T", "key"), "T removes key"),
    Op("lookup", ("T", "key"), "T looks key up"),
    Op("scan", ("T", "lo", "hi"), "T reads the keys from lo to hi (both included), in order"),
    Op("commit", ("T",), "T commits"),
    Op("abort", ("T",), "T rolls back: its inserts and removes are undone logically"),
    Op("bulk_load", ("T", "count", "fill"),
       "T builds a new index bottom-up from keys 10, 20, .. 10 x count (leaves filled to fill, e.g. 0.9); "
       "the pictures show it from then on"),
    Op("checkpoint", (), "take a checkpoint (it writes the dirty pages)"),
    Op("crash", (), "the machine fails: the disk keeps what was synced"),
    Op("crash_in_split", ("T", "key", "value", "pieces"),
       "T inserts key into a full leaf; the machine fails once the split's first pieces log entries are on the disk"),
    Op("restart", (), "open the disk again: analysis, redo, undo (half-done splits first, then the losers)"),
)

SCRIPT: list[tuple] = [
    ("begin", "T1"),
    *[("insert", "T1", k, v) for k, v in zip(range(10, 90, 10), "abcdefgh", strict=True)],
    ("commit", "T1"),
    ("begin", "T2"),
    ("insert", "T2", 90, "i"),
    ("insert", "T2", 100, "j"),
    ("insert", "T2", 110, "k"),
    ("commit", "T2"),
    ("begin", "T3"),
    ("insert", "T3", 115, "rolled back"),
    ("begin", "T4"),
    ("insert", "T4", 120, "l"),
    ("commit", "T4"),
    ("abort", "T3"),
    ("checkpoint",),
    ("begin", "T5"),
    *[("remove", "T5", k) for k in (10, 20, 30, 40)],
    ("lookup", "T5", 20),
    ("scan", "T5", 1, 60),
    ("commit", "T5"),
    ("begin", "T6"),
    ("insert", "T6", 130, "m"),
    ("insert", "T6", 140, "n"),
    ("insert", "T6", 150, "o"),
    ("insert", "T6", 160, "p"),
    ("crash_in_split", "T6", 170, "q", 6),
    ("restart",),
]

# Notebook 07's two small scripts: T3's insert waits for T2's scan (key-value locks), and a bulk load.
LOCKS_SCRIPT: list[tuple] = [
    ("begin", "T1"),
    *[("insert", "T1", k, v) for k, v in zip(range(10, 70, 10), "abcdef", strict=True)],
    ("commit", "T1"),
    ("begin", "T2"),
    ("scan", "T2", 20, 40),
    ("begin", "T3"),
    ("insert", "T3", 35, "phantom?"),
    ("scan", "T2", 20, 40),
    ("commit", "T2"),
    ("commit", "T3"),
]
LOAD_SCRIPT: list[tuple] = [("begin", "T1"), ("bulk_load", "T1", 28, 0.9), ("commit", "T1")]


def _clock() -> float:
    return 1_700_000_000.0


def element(value: str) -> bytes:
    return value.encode().ljust(ELEMENT, b"\0")


def value_of(el: bytes) -> str:
    return el.rstrip(b"\0").decode()


@dataclass
class Demo:
    """A page store on a SimDisk with one index, and the script's workload on it."""

    disk: SimDisk = field(default_factory=lambda: SimDisk("btree-demo"))
    step: int = 0
    xcts: dict[str, Xct] = field(default_factory=dict)  # the transactions that have not ended
    ended: dict[str, str] = field(default_factory=dict)  # name -> committed / aborted / lost in a crash
    committed: dict[int, str] = field(default_factory=dict)  # what the index must hold after a restart
    changes: dict[str, dict[int, str | None]] = field(default_factory=dict)  # each open transaction's own
    outcomes: list[str] = field(default_factory=list)
    starts: list[LSN | None] = field(default_factory=list)  # the log's end before each step (None: crashed)
    crashed: str = ""
    restarts: list[str] = field(default_factory=list)
    cuts: dict[int, int] = field(default_factory=dict)  # a crash_in_split's step -> the pieces on the disk
    waiting: dict[str, tuple] = field(default_factory=dict)  # name -> the operation waiting for a lock

    def __post_init__(self) -> None:
        self.sm = StorageManager.format(self.disk, num_pages=NUM_PAGES, ext_sz=EXT_SZ, page_size=PAGE_SIZE,
                                        **self.options())
        self._locking()
        t = self.sm.begin()
        self.index: StoreId = self.sm.create_index(t, "i4")
        self.sm.commit(t)

    @staticmethod
    def options() -> dict[str, Any]:
        """A fresh lock manager each time (a restart starts with an empty lock table)."""
        return dict(frames=FRAMES, buffer_size=1, clock=_clock, locking=LOCK_MANAGER.call(escalation_threshold=None))

    def _locking(self) -> None:
        self.sm.indexes.lock_timeout = 0  # a lock another transaction holds: the operation waits (see run_one)

    def run(self, script: Sequence[tuple]) -> None:
        for op in script:
            self.step += 1
            self.starts.append(None if self.crashed else self.sm.log.end_lsn)
            self.outcomes.append(f"step {self.step:>2} {self.run_one(self.step, op)}")

    # -- the operations --------------------------------------------------------------------------------
    def run_one(self, step: int, op: tuple) -> str:
        if self.crashed and op[0] != "restart":
            raise script_error(step, op, f"the disk crashed ({self.crashed}): restart first")
        if len(op) > 1 and op[1] in self.waiting:
            raise script_error(step, op, f"{op[1]} waits for a lock ({self.waiting[op[1]]!r}): end the "
                                         f"transaction that holds it first")
        try:
            said = getattr(self, "_" + op[0])(step, op, *op[1:])
        except LockTimeout:  # the lock manager would make it wait: it runs again when a transaction ends
            self.waiting[op[1]] = op
            return f"{op[1]} waits: {self._holder(op)}"
        except MinidbError as error:
            raise script_error(step, op, str(error)) from error
        if op[0] in ("commit", "abort"):
            said += "".join(self._resume(step))
        return said

    def _holder(self, op: tuple) -> str:
        """Which key-value lock the waiting ``op`` needs, and who holds it (ARIES/KVL: an insert or a remove
        locks the key after its own, so that no scan over it misses the change)."""
        others = self.locks(exclude=self.xcts[op[1]])
        key = op[2] if len(op) > 2 else None
        after = min((k for k in self.entries() if key is not None and k > key), default="EOF")
        wanted = {"insert": [after], "remove": [key, after], "crash_in_split": [after]}.get(op[0], [key, after])
        for k in wanted:
            if k in others:
                who = ", ".join(f"{name} ({mode})" for name, mode in others[k])
                return f"it needs the key-value lock of {k}, which {who} holds"
        return "a key-value lock it needs is held by another transaction"

    def _resume(self, step: int) -> list[str]:
        """Run again the operations that waited, now that a transaction has ended."""
        said = []
        for name, op in list(self.waiting.items()):
            del self.waiting[name]
            try:
                said.append(f"; then {name} goes on: {getattr(self, '_' + op[0])(step, op, *op[1:])}")
            except LockTimeout:
                self.waiting[name] = op
        return said

    def locks(self, exclude: Xct | None = None) -> dict[Any, list[tuple[str, str]]]:
        """The index's key-value locks: key (or ``"EOF"``) -> [(transaction, mode)], in key order."""
        manager = self.sm.xcts.locks.manager
        found: dict[Any, list[tuple[str, str]]] = {}
        for name, xct in self.xcts.items():
            if xct is exclude:
                continue
            for lock_id, mode in manager.held(xct).items():
                if lock_id.code == "k" and lock_id.key:
                    text = self.sm.indexes.lock_name(lock_id)
                    key = text[text.rindex(".") + 1:-1]
                    found.setdefault(int(key) if key.lstrip("-").isdigit() else key, []).append((name, mode.name))
        return dict(sorted(found.items(), key=lambda item: (item[0] == "EOF", item[0] if item[0] != "EOF" else 0)))

    def _xct(self, step: int, op: tuple, name: object) -> Xct:
        if name not in self.xcts:
            why = f"{name} has already {self.ended[name]}" if name in self.ended else f"no transaction {name} has begun"
            raise script_error(step, op, why)
        return self.xcts[name]

    @staticmethod
    def _key(step: int, op: tuple, key: object) -> int:
        if not isinstance(key, int) or isinstance(key, bool) or not KEY_RANGE[0] <= key <= KEY_RANGE[1]:
            raise script_error(step, op, f"a key is a whole number (i4), not {key!r}")
        return key

    def _value(self, step: int, op: tuple, value: object) -> bytes:
        if not isinstance(value, str) or not value or len(value.encode()) > ELEMENT:
            raise script_error(step, op, f"a value is a string of 1 to {ELEMENT} bytes, not {value!r}")
        return element(value)

    def current(self, name: str) -> dict[int, str]:
        """The index as transaction ``name`` sees it: the committed entries and its own changes."""
        seen = dict(self.committed)
        for key, value in self.changes.get(name, {}).items():
            if value is None:
                seen.pop(key, None)
            else:
                seen[key] = value
        return seen

    def _begin(self, step: int, op: tuple, name: object) -> str:
        if not isinstance(name, str) or not name or name in self.xcts or name in self.ended:
            raise script_error(step, op, f"a transaction needs a new name, not {name!r}")
        self.xcts[name] = self.sm.begin()
        self.changes[name] = {}
        return f"{name} begins"

    def _insert(self, step: int, op: tuple, name: object, key: object, value: object) -> str:
        xct, key, el = self._xct(step, op, name), self._key(step, op, key), self._value(step, op, value)
        self.sm.index_insert(xct, self.index, key, el)
        self.changes[name][key] = value
        return f"{name} inserts {key}"

    def _remove(self, step: int, op: tuple, name: object, key: object) -> str:
        xct, key = self._xct(step, op, name), self._key(step, op, key)
        self.sm.index_remove(xct, self.index, key)
        self.changes[name][key] = None
        return f"{name} removes {key}"

    def _lookup(self, step: int, op: tuple, name: object, key: object) -> str:
        xct, key = self._xct(step, op, name), self._key(step, op, key)
        found = self.sm.index_lookup(xct, self.index, key)
        return f"{name} looks up {key}: " + (repr(value_of(found[0])) if found else "not there")

    def _scan(self, step: int, op: tuple, name: object, lo: object, hi: object) -> str:
        xct, lo, hi = self._xct(step, op, name), self._key(step, op, lo), self._key(step, op, hi)
        keys = [k for k, _ in self.sm.index_scan(xct, self.index, lo, hi)]
        return f"{name} scans {lo}..{hi}: {keys}"

    def _commit(self, step: int, op: tuple, name: object) -> str:
        xct = self._xct(step, op, name)
        self.sm.commit(xct)
        self.committed = self.current(name)
        self._end(name, "committed")
        return f"{name} commits"

    def _abort(self, step: int, op: tuple, name: object) -> str:
        undone = self.sm.abort(self._xct(step, op, name))
        self._end(name, "aborted")
        return f"{name} rolls back: {len(undone)} entr{'y' if len(undone) == 1 else 'ies'} undone"

    def _end(self, name: str, how: str) -> None:
        del self.xcts[name], self.changes[name]
        self.ended[name] = how

    def _bulk_load(self, step: int, op: tuple, name: object, count: object, fill: object) -> str:
        xct = self._xct(step, op, name)
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_LOAD:
            raise script_error(step, op, f"count is how many keys to load: 1 to {MAX_LOAD}, not {count!r}")
        pairs = [(10 * k, element("v")) for k in range(1, count + 1)]
        self.index, report = self.sm.bulk_load_index(xct, "i4", pairs, fill=fill)
        self.committed = {}  # the pictures and the checks follow the new index
        self.changes[name] = {k: "v" for k, _ in pairs}
        return (f"{name} bulk-loads {report.rows} keys: {report.leaves} leaves, {report.pages} pages, "
                f"height {report.height}")

    def _checkpoint(self, step: int, op: tuple) -> str:
        return f"checkpoint at {self.sm.checkpoint().begin}"

    def _crash(self, step: int, op: tuple) -> str:
        self.disk.crash(CrashMode.nothing())
        self.crashed = f"at step {step}"
        return "crash: the disk keeps what was synced, memory is lost"

    def _crash_in_split(self, step: int, op: tuple, name: object, key: object, value: object, pieces: object) -> str:
        xct, key, el = self._xct(step, op, name), self._key(step, op, key), self._value(step, op, value)
        if not isinstance(pieces, int) or isinstance(pieces, bool) or not 1 <= pieces <= MAX_PIECES:
            raise script_error(step, op, f"pieces is how many of the split's log entries reach the disk: "
                                         f"1 to {MAX_PIECES}, not {pieces!r}")
        if not leaf_is_full(self.sm, self.index, key, el):
            raise script_error(step, op, f"the leaf for {key} has room: this insert would not split")
        self.sm.log.flush()  # so the disk's next writes are the split's entries, one by one
        self.disk.schedule_crash(after_ops=pieces, mode=CrashMode.everything())
        try:
            self.sm.index_insert(xct, self.index, key, el)
        except SimulatedCrash:
            pass
        else:  # pragma: no cover (an SMO logs more entries than MAX_PIECES)
            raise AssertionError(f"the insert of {key} ended before its split's entry {pieces} was written")
        self.crashed = f"at step {step}, in the middle of a split"
        self.cuts[step] = pieces
        return (f"{name} inserts {key}: its leaf is full, so the insert splits it; the machine fails after "
                f"{pieces} of the split's log entries reached the disk")

    def _restart(self, step: int, op: tuple) -> str:
        if not self.crashed:
            raise script_error(step, op, "the disk has not crashed: crash first")
        self.sm = StorageManager.open(self.disk, restart_trace=False, **self.options())
        self._locking()
        self.waiting.clear()
        names = {xct.txn_id: name for name, xct in self.xcts.items()}
        for name in list(self.xcts):
            self._end(name, "was rolled back by restart")
        self.crashed = ""
        losers = [names.get(t, f"transaction {t}") for t in self.sm.restart_report.undo.ended]
        problems, _ = self.check()
        said = (f"restart: losers rolled back: {', '.join(losers) or 'none'}; "
                f"check_tree: {'; '.join(problems) if problems else 'sound'}; the index holds "
                f"{'exactly the committed keys' if self.entries() == self.committed else 'OTHER keys than committed'}")
        self.restarts.append(said)
        return said

    # -- what the index holds --------------------------------------------------------------------------
    def check(self) -> tuple[list[str], list[tuple[bytes, bytes]]]:
        ix = self.sm.indexes.index(self.index)
        return check_tree(self.sm.bp, ix.root, ix.unique)

    def entries(self) -> dict[int, str]:
        return {k: value_of(e) for k, e in self.sm.indexes.entries(self.index)}

    def picture(self) -> TreePicture:
        return tree_picture(self.sm, self.index)

    def rows(self, step: int) -> list[LogRow]:
        """The log entries step ``step`` (from 1) wrote (after a restart: all restart logged too)."""
        start = self.starts[step - 1]
        if start is None:
            return []
        end = self.starts[step] if step < len(self.starts) else None
        return [row for row in log_rows(self.sm.log, start) if end is None or row.lsn < end]


def leaf_is_full(sm: StorageManager, index: StoreId, key: int, el: bytes) -> bool:
    """Whether inserting (``key``, ``el``) into ``index`` needs a split (its leaf has no room for it)."""
    ix = sm.indexes.index(index)
    enc = ix.desc.encode(key)
    page, _ = ix.tree(sm.volume).descend(enc, SH)
    try:
        return page.nfree < len(leaf_entry(enc, el)) + SLOT_SIZE
    finally:
        sm.bp.unfix(page)


def _key(script: Sequence[Sequence[Any]]) -> tuple[tuple, ...]:
    return tuple(tuple(op) for op in checked(script, OPS))


def run_script(script: Sequence[Sequence[Any]] = SCRIPT, upto: int | None = None) -> Demo:
    """A fresh demo with the first ``upto`` steps of ``script`` run (all of them by default)."""
    return _run(_key(script), len(script) if upto is None else upto)


@lru_cache(maxsize=32)
def _run(script: tuple[tuple, ...], upto: int) -> Demo:
    if not 0 <= upto <= len(script):
        raise ValueError(f"step must be between 0 and {len(script)}, not {upto}")
    demo = Demo()
    demo.run(script[:upto])
    return demo


@dataclass(frozen=True)
class BTreeStep:
    """The index after ``step`` steps: its picture data, the tree drawn, the step's log entries drawn."""

    step: int
    demo: Demo
    picture: TreePicture | None  # None while the disk waits for restart
    figure: Any  # graphviz graph
    log_figure: Figure | None
    rows: tuple[LogRow, ...]
    changed: tuple[int, ...]  # pages the step changed

    def summary(self) -> str:
        return self.demo.outcomes[-1] if self.demo.outcomes else "nothing run yet"


def btree_step(step: int, script: Sequence[Sequence[Any]] = SCRIPT, draw: bool = True) -> BTreeStep:
    """The index after the first ``step`` steps of ``script`` (see the module documentation)."""
    demo = run_script(script, step)
    op = tuple(script[step - 1]) if step else None
    rows = tuple(demo.rows(step)) if step and not demo.crashed else ()
    if demo.crashed:
        return BTreeStep(step, demo, None, None, None, rows, ())
    pic = demo.picture()
    cut = demo.cuts.get(step - 1, 0) if op == ("restart",) else 0
    if cut:  # the split the crash cut, and what restart logged
        rows = tuple(demo.rows(step - 1))
    changed = tuple(sorted({r.page.page for r in rows if r.page is not None and r.page.store == demo.index.store}))
    title = f"the index after step {step} {op!r}" if op else "the empty index"
    locks = {key: ", ".join(f"{who} {mode}" for who, mode in holders) for key, holders in demo.locks().items()}
    figure = tree_graph(pic, title=title, changed=changed, locks=locks) if draw else None
    log_figure = None
    if draw and rows:
        root = PageId(demo.index.vol, demo.index.store, pic.root)
        what = f"steps {step - 1} and {step}: the crash in a split, and restart" if cut else f"step {step} {op!r}"
        log_figure = draw_smo_log(rows, spans=smo_spans(rows, root, cut), crash_after=cut - 1 if cut else None,
                                  title=f"the log entries of {what}")
    return BTreeStep(step, demo, pic, figure, log_figure, rows, changed)


def btree_explorer(script: Sequence[Sequence[Any]] = SCRIPT) -> Any:
    """A step slider over ``script``: the tree after each step (changed pages yellow) and what the step did."""
    from functools import partial

    from minidb.viz.widgets import Explorer, step_slider

    checked(script, OPS)
    return Explorer(partial(btree_step, script=script), {"step": step_slider(len(script), len(script))}, show_step)


def show_step(result: BTreeStep) -> None:
    """Show the tree after the step (or that the disk waits for restart) and what the step said."""
    from IPython.display import display

    if result.figure is not None:
        display(result.figure)
    print(result.summary())
