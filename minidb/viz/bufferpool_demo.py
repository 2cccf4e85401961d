"""The buffer-pool demonstration of ``notebooks/04_buffer_pool.ipynb`` and the tour.

A pool of four frames over a freshly formatted volume (64 pages of 512
bytes) on a simulated disk, with the shared log, and a *script*: a list of
operations (:data:`OPS`, :mod:`minidb.viz.script`), each a tuple such as
``("fix", "p(1.1.4)")``. An *update* follows the protocol: fix EX (the frame
gets its recovery LSN), change the page, log the change, set the page LSN,
unfix dirty. The default :data:`SCRIPT`::

    1  fix p(1.1.4)           a miss into free frame 0
    2  update p(1.1.5)        frame 1, dirty, with a recovery LSN
    3  fix p(1.2.8)           frame 2
    4  hold p(1.1.7)          frame 3, pinned
    5  fix p(1.2.9)           no free frame: pass 1 clears every bit, pass 2 takes frame 0
    6  update p(1.1.6)        pass 1 skips dirty frame 1, takes clean frame 2
    7  unfix p(1.1.7)         frame 3 unpinned
    8  update p(1.1.7)        frame 3 dirty (a hit: its bit is set again)
    9  fix p(1.2.10)          pass 1 clears the bits of frames 3, 0, 2 and skips dirty 1;
                              pass 2 takes the first unreferenced frame from the hand,
                              dirty frame 3, before clean frame 0: the log is synced first
    10 clean                  pages 5 and 6 in one write, then one fsync

:func:`pool_step` is the pure function behind the notebook's slider: it
replays the script up to step ``k`` and returns the frames, the clock's last
sweep, and what the step did to the log and the disk. Its description of a
step that chose a victim is computed from that choice (which frame, clean
or dirty, in which pass).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from matplotlib.figure import Figure

from minidb.errors import MinidbError
from minidb.io import Event, SimDisk
from minidb.log import TRACE, LogManager
from minidb.pagestore import BUFFER_POOL, EX, SH, BufferPool, ClockChoice, FrameView, PageId, PageTag, format_volume
from minidb.pagestore.ids import parse_typed
from minidb.pagestore.volume.volfile import VolumeFile
from minidb.viz.bufferpool import draw_buffer_pool
from minidb.viz.script import Op, checked, op_table, script_error

FRAMES, PAGE_SIZE, NUM_PAGES = 4, 512, 64

OPS = op_table(
    Op("fix", ("page",), "fix the page SH and unfix it at once (a read)"),
    Op("hold", ("page",), "fix the page SH and keep it fixed: its frame stays pinned"),
    Op("unfix", ("page",), "unfix a page that hold fixed"),
    Op("update", ("page", "text"), "fix EX, insert text into the page, log it, unfix dirty"),
    Op("clean", (), "run the page cleaner: write every dirty page, then fsync the volume"),
)

SCRIPT: list[tuple] = [
    ("fix", "p(1.1.4)"),
    ("update", "p(1.1.5)", "alpha"),
    ("fix", "p(1.2.8)"),
    ("hold", "p(1.1.7)"),
    ("fix", "p(1.2.9)"),
    ("update", "p(1.1.6)", "bravo"),
    ("unfix", "p(1.1.7)"),
    ("update", "p(1.1.7)", "charlie"),
    ("fix", "p(1.2.10)"),
    ("clean",),
]
STEPS = len(SCRIPT)


def _clock() -> float:
    return 1_700_000_000.0


@dataclass
class Demo:
    disk: SimDisk
    log: LogManager
    bp: BufferPool
    held: dict[PageId, object] = field(default_factory=dict)


def new_demo() -> Demo:
    disk = SimDisk("pool-demo")
    format_volume(disk, num_pages=64, ext_sz=4, page_size=PAGE_SIZE)
    log = LogManager(disk, clock=_clock)
    bp = BUFFER_POOL.call(FRAMES, page_size=PAGE_SIZE, log=log, trace=True)
    bp.register(VolumeFile(disk, 1))
    return Demo(disk, log, bp)


def p(store: int, page: int) -> PageId:
    return PageId(1, store, page)


def _read(demo: Demo, pid: PageId) -> None:
    demo.bp.unfix(demo.bp.fix(pid, SH))


def _hold(demo: Demo, pid: PageId) -> None:
    demo.held[pid] = demo.bp.fix(pid, SH)


def _release(demo: Demo, pid: PageId) -> None:
    demo.bp.unfix(demo.held.pop(pid))  # type: ignore[arg-type]


def update(demo: Demo, pid: PageId, text: str) -> None:
    """Fix EX, change, log, set the page LSN, unfix dirty."""
    page = demo.bp.fix(pid, EX)
    assert page is not None
    if page.tag == PageTag.FREE:
        page.format(pid, PageTag.FILE)
    page.insert(text.encode())
    page.lsn = demo.log.append(TRACE, {"message": f"{pid}: insert {text!r}"})
    demo.bp.unfix(page, dirty=True)


def _page(step: int, op: Sequence[Any], text: object) -> PageId:
    try:
        pid = parse_typed(text, PageId)  # type: ignore[arg-type]
    except MinidbError as error:
        raise script_error(step, tuple(op), str(error)) from error
    if pid.vol != 1 or not 0 <= pid.page < NUM_PAGES:
        raise script_error(step, tuple(op), f"{pid} is not a page of the demo's volume v(1), pages 0-{NUM_PAGES - 1}")
    return pid


def run_op(demo: Demo, step: int, op: Sequence[Any]) -> str:
    """Run one checked operation; returns how the step reads (``fix p(1.1.4)``)."""
    name = op[0]
    if name == "clean":
        demo.bp.clean()
        return "run the page cleaner"
    pid = _page(step, op, op[1])
    if name == "unfix" and pid not in demo.held:
        raise script_error(step, tuple(op), f"{pid} is not held: only a page that 'hold' fixed can be unfixed")
    if name in ("hold", "update") and pid in demo.held:
        raise script_error(step, tuple(op), f"{pid} is held already" + (": unfix it first" if name == "update" else ""))
    if name == "update" and not isinstance(op[2], str):
        raise script_error(step, tuple(op), f"the text must be a string, not {op[2]!r}")
    actions = {"fix": _read, "hold": _hold, "unfix": _release, "update": lambda d, pid: update(d, pid, op[2])}
    try:
        actions[name](demo, pid)
    except MinidbError as error:
        raise script_error(step, tuple(op), str(error)) from error
    return f"{name} {pid}" + (" and unfix" if name == "fix" else "")


def describe_event(event: Event) -> str:
    if event.kind == "write":
        return f"write {event.name} @{event.offset} +{len(event.data)}"
    return f"{event.kind} {event.name}"


@dataclass(frozen=True)
class PoolStep:
    step: int
    description: str
    frames: tuple[FrameView, ...]
    hand: int
    choice: ClockChoice | None  # the sweep this step made, if it made one
    trace: tuple[str, ...]
    events: tuple[str, ...]  # what the step did to the disk, in order
    dirty_page_table: dict[PageId, object]
    figure: Figure

    def summary(self) -> str:
        lines = [f"step {self.step}: {self.description}"]
        lines += [f"  pool: {line}" for line in self.trace]
        lines += [f"  disk: {line}" for line in self.events]
        table = ", ".join(f"{pid} rec_lsn {lsn}" for pid, lsn in sorted(self.dirty_page_table.items()))
        lines.append(f"  dirty page table: {table or 'empty'}")
        return "\n".join(lines)


def pool_step(step: int, script: Sequence[Sequence[Any]] = SCRIPT) -> PoolStep:
    """The pool after the first ``step`` steps of ``script`` (0: empty frames)."""
    ops = checked(script, OPS)
    if not 0 <= step <= len(ops):
        raise ValueError(f"step must be between 0 and {len(ops)}, not {step}")
    demo = new_demo()
    trace: list[str] = []
    events: list[str] = []
    choice = None
    description = "an empty pool of four frames"
    for k, op in enumerate(ops[:step], 1):
        demo.bp.trace.clear()
        demo.bp.last_clock = None
        first_event = len(demo.disk.events)
        before = demo.bp.frame_views()
        description = run_op(demo, k, op)
        trace = list(demo.bp.trace.lines)
        events = [describe_event(e) for e in demo.disk.events[first_event:]]
        choice = demo.bp.last_clock
        if choice is not None and choice.victim is not None:
            state = "dirty" if before[choice.victim].dirty else "clean"
            description += f": victim frame {choice.victim} ({state}) in pass {choice.passes}"
    views = demo.bp.frame_views()
    figure = draw_buffer_pool(views, demo.bp.hand, title=f"step {step}: {description}", choice=choice,
                              highlight=choice.victim if choice else None)
    return PoolStep(step, description, tuple(views), demo.bp.hand, choice, tuple(trace), tuple(events),
                    demo.bp.dirty_page_table(), figure)
