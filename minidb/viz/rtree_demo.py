"""The R*-tree demo of notebook 18: a script of box insertions, removals and searches, step by step.

A script (:data:`SCRIPT`, data a student edits) runs on a fresh simulated
disk holding one R*-tree of fanout 4 (so ``m`` = 2 and one entry is
reinserted when a node first overflows), created before step 1. Every log
entry reaches the disk by itself (a one-byte log buffer), so a crash can cut
an insertion after any of its entries. Each step's outcome says what the
tree did (the R*-tree manager's trace: reinsertions, splits, the root
growing or shrinking, nodes dissolved), and :func:`rtree_step` draws the
tree after it (:mod:`minidb.viz.rtree`), the pages the step changed in
yellow, a search's window with the nodes it read and those it pruned.

==========  =================================================================
steps       what happens
==========  =================================================================
T1          inserts a .. d: the root, a leaf, is full; e makes it **split**
            (the root grows to level 2); f .. h fill both leaves
T1          inserts i: its leaf overflows, and **forced reinsertion** sends
            the entry farthest from the leaf's centre back to the top
T1          inserts j, k: another overflow, reinsertion, and this time the
            leaf also **splits** (a level overflows once per insertion before
            it splits); T1 commits
T2          searches a window: only the nodes whose boxes overlap it are
            read (**pruning**)
T3          inserts and removes, then **aborts**: its entries are undone
            logically, the restructuring stays
T4          inserts until a leaf splits, with a **crash** after a few of the
            split's log entries; **restart** undoes the pieces physically,
            then T4's insertions logically
==========  =================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any

from matplotlib.figure import Figure

from minidb.errors import MinidbError, SimulatedCrash
from minidb.io import CrashMode, SimDisk
from minidb.log import LSN
from minidb.pagestore import Box, RTree, StorageManager
from minidb.pagestore.ids import StoreId
from minidb.pagestore.transactions.xct import Xct
from minidb.viz.rtree import RTreePicture, draw_rtree, rtree_picture
from minidb.viz.script import Op, checked, op_table, script_error

PAGE_SIZE, NUM_PAGES, EXT_SZ, FRAMES = 512, 128, 4, 128
FANOUT = 4
MAX_PIECES = 12

OPS = op_table(
    Op("begin", ("T",), "transaction T begins"),
    Op("insert", ("T", "name", "xlo", "ylo", "xhi", "yhi"), "T inserts the box [xlo,ylo xhi,yhi] named name"),
    Op("remove", ("T", "name"), "T removes the box named name"),
    Op("search", ("T", "cond", "xlo", "ylo", "xhi", "yhi"),
       "T searches the window: cond is overlap, cover, inside or exact"),
    Op("commit", ("T",), "T commits"),
    Op("abort", ("T",), "T rolls back: its inserts and removes are undone logically"),
    Op("crash_in_insert", ("T", "name", "xlo", "ylo", "xhi", "yhi", "pieces"),
       "T inserts a box; the machine fails once pieces of the insert's log entries are on the disk"),
    Op("restart", (), "open the disk again: analysis, redo, undo (a cut restructuring first, then the losers)"),
)

SCRIPT: list[tuple] = [
    ("begin", "T1"),
    ("insert", "T1", "a", 50, 9, 53, 12),
    ("insert", "T1", "b", 41, 54, 45, 58),
    ("insert", "T1", "c", 22, 24, 26, 27),
    ("insert", "T1", "d", 12, 27, 14, 29),
    ("insert", "T1", "e", 17, 39, 21, 41),            # step 6: the root splits, the tree grows
    ("insert", "T1", "f", 77, 11, 81, 14),
    ("insert", "T1", "g", 82, 34, 84, 37),
    ("insert", "T1", "h", 45, 37, 48, 39),            # step 9: an overflow, a forced reinsertion, no split
    ("insert", "T1", "i", 61, 29, 63, 33),            # step 10: the reinserted entry overflows the other leaf
    ("insert", "T1", "j", 7, 21, 9, 23),
    ("insert", "T1", "k", 26, 24, 29, 28),            # step 12: reinsertion, then the same leaf splits
    ("commit", "T1"),
    ("begin", "T2"),
    ("search", "T2", "overlap", 55, 5, 90, 35),       # step 15: a search that prunes
    ("commit", "T2"),
    ("begin", "T3"),
    ("insert", "T3", "x", 65, 50, 68, 53),
    ("remove", "T3", "d"),                            # step 19: its leaf dissolves
    ("remove", "T3", "a"),
    ("abort", "T3"),                                  # step 21
    ("begin", "T4"),
    ("insert", "T4", "l", 7, 45, 10, 48),
    ("crash_in_insert", "T4", "m", 88, 8, 91, 11, 7),  # step 24: the crash cuts a split
    ("restart",),
]


def _clock() -> float:
    return 1_700_000_000.0


@dataclass
class Demo:
    """A page store on a SimDisk with one R*-tree, and the script's workload on it."""

    disk: SimDisk = field(default_factory=lambda: SimDisk("rtree-demo"))
    step: int = 0
    xcts: dict[str, Xct] = field(default_factory=dict)
    boxes: dict[str, Box] = field(default_factory=dict)  # name -> box, of every box ever inserted
    committed: set[str] = field(default_factory=set)  # the names the index must hold after a restart
    outcomes: list[str] = field(default_factory=list)
    starts: list[LSN | None] = field(default_factory=list)  # the log's end before each step (None: crashed)
    searches: dict[int, tuple[Box, frozenset[int]]] = field(default_factory=dict)  # step -> window, pages read
    crashed: str = ""

    def __post_init__(self) -> None:
        self.sm = StorageManager.format(self.disk, num_pages=NUM_PAGES, ext_sz=EXT_SZ, page_size=PAGE_SIZE,
                                        **self.options())
        with self.sm.transaction() as t:
            self.index: StoreId = self.sm.create_rtree(t, fanout=FANOUT)

    @staticmethod
    def options() -> dict[str, Any]:
        return dict(frames=FRAMES, buffer_size=1, clock=_clock)

    def run(self, script: list[tuple]) -> None:
        for op in script:
            self.step += 1
            self.starts.append(None if self.crashed else self.sm.log.end_lsn)
            before = len(self.sm.rtrees.trace.lines)
            said = self.run_one(self.step, op)
            done = self.sm.rtrees.trace.lines[before:]
            self.outcomes.append(f"step {self.step:>2} {said}" + "".join(f"\n        {s}" for s in done))

    def run_one(self, step: int, op: tuple) -> str:
        if self.crashed and op[0] != "restart":
            raise script_error(step, op, f"the disk crashed ({self.crashed}): restart first")
        try:
            return getattr(self, "_" + op[0])(step, op, *op[1:])
        except MinidbError as error:
            raise script_error(step, op, str(error)) from error

    # -- the operations ----------------------------------------------------------------------------------
    def _xct(self, step: int, op: tuple, name: object) -> Xct:
        if name not in self.xcts:
            raise script_error(step, op, f"{name} has not begun (or has ended)")
        return self.xcts[name]

    def _box(self, step: int, op: tuple, coords: tuple) -> Box:
        if not all(isinstance(c, int) and not isinstance(c, bool) for c in coords) \
                or coords[0] > coords[2] or coords[1] > coords[3]:
            raise script_error(step, op, f"a box is four whole numbers xlo <= xhi, ylo <= yhi, not {coords!r}")
        return Box(*coords)

    def _begin(self, step: int, op: tuple, name: object) -> str:
        if name in self.xcts:
            raise script_error(step, op, f"{name} has begun already")
        self.xcts[str(name)] = self.sm.begin()
        return f"{name} begins"

    def _insert(self, step: int, op: tuple, name: object, label: object, *coords: object) -> str:
        xct, box = self._xct(step, op, name), self._box(step, op, coords)
        label = str(label)
        self.sm.rtree_insert(xct, self.index, box, label.encode())
        self.boxes[label] = box
        return f"{name} inserts {label} {box}"

    def _remove(self, step: int, op: tuple, name: object, label: object) -> str:
        xct = self._xct(step, op, name)
        if label not in self.boxes:
            raise script_error(step, op, f"no box was ever named {label!r}")
        self.sm.rtree_remove(xct, self.index, self.boxes[str(label)], str(label).encode())
        return f"{name} removes {label}"

    def _search(self, step: int, op: tuple, name: object, cond: object, *coords: object) -> str:
        xct, window = self._xct(step, op, name), self._box(step, op, coords)
        if cond not in ("overlap", "cover", "inside", "exact"):
            raise script_error(step, op, f"cond is overlap, cover, inside or exact, not {cond!r}")
        found = self.sm.rtree_search(xct, self.index, window, str(cond))
        read = pages_read(self.sm.rtrees.tree(self.index), window, str(cond))
        self.searches[step] = (window, frozenset(read))
        names = " ".join(el.decode() for _, el in found) or "nothing"
        return (f"{name} searches {cond} {window}: {names}; it read {len(read)} of "
                f"{len(self.picture().nodes)} pages")

    def _commit(self, step: int, op: tuple, name: object) -> str:
        xct = self._xct(step, op, name)
        self.sm.commit(xct)
        del self.xcts[str(name)]
        self.committed = set(self.names())
        return f"{name} commits"

    def _abort(self, step: int, op: tuple, name: object) -> str:
        xct = self._xct(step, op, name)
        undone = [s.type_name for s in self.sm.abort(xct) if s.action == "undone"]
        del self.xcts[str(name)]
        return (f"{name} rolls back: {len(undone)} logical records undone ({', '.join(undone)}), "
                f"the restructuring jumped over")

    def _crash_in_insert(self, step: int, op: tuple, name: object, label: object, *rest: object) -> str:
        coords, pieces = rest[:4], rest[4]
        xct, box = self._xct(step, op, name), self._box(step, op, tuple(coords))
        if not isinstance(pieces, int) or isinstance(pieces, bool) or not 1 <= pieces <= MAX_PIECES:
            raise script_error(step, op, f"pieces is how many of the insert's log entries reach the disk: "
                                         f"1 to {MAX_PIECES}, not {pieces!r}")
        self.sm.log.flush()  # so the disk's next writes are the insert's entries, one by one
        start = self.sm.log.end_lsn
        self.disk.schedule_crash(after_ops=pieces, mode=CrashMode.everything())
        try:
            self.sm.rtree_insert(xct, self.index, box, str(label).encode())
        except SimulatedCrash:
            pass
        else:
            self.disk.schedule_crash(after_ops=10 ** 9)  # never: the insert ended first
            raise script_error(step, op, f"the insert ended before {pieces} of its entries were written")
        self.crashed = f"at step {step}, inside an insert"
        self.boxes[str(label)] = box
        reached = [e.type_name for e in self._durable_entries(start)]
        return (f"{name} inserts {label} {box}; the machine fails after {pieces} of its log entries reached "
                f"the disk: {', '.join(reached)}")

    def _durable_entries(self, start: LSN) -> list[Any]:
        image = self.disk.clone()
        sm_log = StorageManager.open(image, restart=False, **self.options()).log
        return [e for e in sm_log.scan(start)]

    def _restart(self, step: int, op: tuple) -> str:
        if not self.crashed:
            raise script_error(step, op, "the disk has not crashed")
        self.sm = StorageManager.open(self.disk, restart_trace=False, **self.options())
        self.xcts.clear()
        self.crashed = ""
        problems = self.sm.rtrees.check(self.index)
        same = set(self.names()) == self.committed
        undone = [s.type_name for _, s in self.sm.restart_report.undo.steps if s.action == "undone"]
        return (f"restart undoes, newest first: {', '.join(undone)}; check_rtree "
                f"{'; '.join(problems) if problems else 'sound'}; the index holds "
                f"{'exactly the committed boxes' if same else 'OTHER boxes than committed'}")

    # -- what the index holds ------------------------------------------------------------------------------
    def names(self) -> list[str]:
        return [el.decode() for _, el in self.sm.rtrees.entries(self.index)]

    def picture(self, search: tuple[Box, frozenset[int]] | None = None) -> RTreePicture:
        tree = self.sm.rtrees.tree(self.index)
        window, read = search if search is not None else (None, frozenset())
        return rtree_picture(tree, window, read)

    def contents(self) -> dict[int, list[str]]:
        """What each page holds: a leaf's entries' names, an interior node's children's pages."""
        tree = self.sm.rtrees.tree(self.index)
        out: dict[int, list[str]] = {}
        for node in self.picture().nodes:
            read = tree.read(node.page)
            out[node.page] = [e.data.decode() if read.is_leaf else f"p{e.child}" for e in read.entries]
        return out

    def changed(self, step: int) -> tuple[int, ...]:
        """The pages of the tree that step ``step`` logged changes to."""
        start = self.starts[step - 1]
        if start is None:
            return ()
        end = self.starts[step] if step < len(self.starts) else None
        return tuple(sorted({e.values["page"] for e in self.sm.log.scan(start)
                             if (end is None or e.lsn < end) and e.entry_type is not None
                             and e.entry_type.redoable and e.values.get("store") == self.index.store}))


def pages_read(tree: RTree, window: Box, cond: str) -> list[int]:
    """The pages a search of ``tree`` reads, in order: the search run again, its reads recorded."""
    read: list[int] = []
    original = tree.read

    def reading(number: int, level: int | None = None) -> Any:
        read.append(number)
        return original(number, level)

    tree.read = reading  # type: ignore[method-assign]  (this tree object only, made for this search)
    tree.search(window, cond)
    return read


def _key(script: Any) -> tuple[tuple, ...]:
    return tuple(tuple(op) for op in checked(script, OPS))


@lru_cache(maxsize=16)
def _run(script: tuple[tuple, ...], upto: int) -> Demo:
    if not 0 <= upto <= len(script):
        raise ValueError(f"step must be between 0 and {len(script)}, not {upto}")
    demo = Demo()
    demo.run(list(script[:upto]))
    return demo


@dataclass(frozen=True)
class RTreeStep:
    """The index after ``step`` steps: the demo, the picture's data and the map drawn (None while crashed)."""

    step: int
    demo: Demo
    picture: RTreePicture | None
    figure: Figure | None
    changed: tuple[int, ...]

    def summary(self) -> str:
        return self.demo.outcomes[-1] if self.demo.outcomes else "nothing run yet"


def rtree_step(step: int, script: Any = SCRIPT, draw: bool = True) -> RTreeStep:
    """The index after the first ``step`` steps of ``script`` (a pure function of its arguments: the demo
    is run again from scratch, or found in a cache)."""
    demo = _run(_key(script), step)
    if demo.crashed:
        return RTreeStep(step, demo, None, None, ())
    op = tuple(script[step - 1]) if step else None
    changed = demo.changed(step) if step else ()
    picture = demo.picture(demo.searches.get(step))
    title = f"after step {step} {op[0]} {' '.join(map(str, op[1:3]))}" if op else "the empty index"
    figure = draw_rtree(picture, title, changed, demo.contents()) if draw else None
    return RTreeStep(step, demo, picture, figure, changed)


def rtree_explorer(script: Any = SCRIPT) -> Any:
    """A step slider over ``script``: the map after each step and what the step did."""
    from minidb.viz.widgets import Explorer, show_figure_and_text, step_slider

    checked(script, OPS)
    return Explorer(partial(rtree_step, script=script), {"step": step_slider(len(script), len(script))},
                    show_figure_and_text)
