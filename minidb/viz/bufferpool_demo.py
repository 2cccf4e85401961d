"""The buffer-pool demonstration of ``notebooks/04_buffer_pool.ipynb`` and the tour.

A pool of four frames over a freshly formatted volume (64 pages of 512
bytes) on a simulated disk, with the shared log, and a script of fixes and
updates. An *update* follows the protocol: fix EX (the frame gets its
recovery LSN), change the page, log the change, set the page LSN, unfix
dirty. The script::

    1  fix p(1.1.4) and unfix              a miss into free frame 0
    2  update p(1.1.5)                     frame 1, dirty, with a recovery LSN
    3  fix p(1.2.8) and unfix              frame 2
    4  fix p(1.1.7) and keep it fixed      frame 3, pinned
    5  fix p(1.2.9)                        no free frame: pass 1 clears every bit, pass 2 takes frame 0
    6  update p(1.1.6)                     pass 1 skips dirty frame 1, takes clean frame 2
    7  unfix p(1.1.7), then update it      frame 3 dirty
    8  fix p(1.2.10)                       the victim is dirty frame 3: the log is synced first
    9  run the page cleaner                pages 5 and 6 in one write, then one fsync

:func:`pool_step` is the pure function behind the notebook's slider: it
replays the script up to step ``k`` and returns the frames, the clock's last
sweep, and what the step did to the log and the disk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from matplotlib.figure import Figure

from minidb.io import Event, SimDisk
from minidb.log import TRACE, LogManager
from minidb.pagestore import EX, SH, BufferPool, ClockChoice, FrameView, PageId, PageTag, format_volume
from minidb.pagestore.volfile import VolumeFile
from minidb.viz.bufferpool import draw_buffer_pool

FRAMES, PAGE_SIZE = 4, 512


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
    bp = BufferPool(FRAMES, page_size=PAGE_SIZE, log=log, trace=True)
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


SCRIPT: list[tuple[str, Callable[[Demo], None]]] = [
    ("fix p(1.1.4) and unfix", lambda d: _read(d, p(1, 4))),
    ("update p(1.1.5)", lambda d: update(d, p(1, 5), "alpha")),
    ("fix p(1.2.8) and unfix", lambda d: _read(d, p(2, 8))),
    ("fix p(1.1.7) and keep it fixed", lambda d: _hold(d, p(1, 7))),
    ("fix p(1.2.9): the clock chooses a victim", lambda d: _read(d, p(2, 9))),
    ("update p(1.1.6): a clean victim is preferred", lambda d: update(d, p(1, 6), "bravo")),
    ("unfix p(1.1.7), then update it", lambda d: (_release(d, p(1, 7)), update(d, p(1, 7), "charlie"))),
    ("fix p(1.2.10): only dirty frames are left", lambda d: _read(d, p(2, 10))),
    ("run the page cleaner", lambda d: d.bp.clean()),
]
STEPS = len(SCRIPT)


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


def pool_step(step: int) -> PoolStep:
    """The pool after the first ``step`` steps of the script (0: empty frames)."""
    if not 0 <= step <= STEPS:
        raise ValueError(f"step must be between 0 and {STEPS}, not {step}")
    demo = new_demo()
    trace: list[str] = []
    events: list[str] = []
    choice = None
    for k in range(step):
        demo.bp.trace.clear()
        demo.bp.last_clock = None
        first_event = len(demo.disk.events)
        SCRIPT[k][1](demo)
        trace = list(demo.bp.trace.lines)
        events = [describe_event(e) for e in demo.disk.events[first_event:]]
        choice = demo.bp.last_clock
    description = SCRIPT[step - 1][0] if step else "an empty pool of four frames"
    views = demo.bp.frame_views()
    figure = draw_buffer_pool(views, demo.bp.hand, title=f"step {step}: {description}", choice=choice,
                              highlight=choice.victim if choice else None)
    return PoolStep(step, description, tuple(views), demo.bp.hand, choice, tuple(trace), tuple(events),
                    demo.bp.dirty_page_table(), figure)
