"""The log-space demonstration of ``notebooks/16_log_space.ipynb``: a bounded log filling, refusing, and scavenged.

A *script* of operations (:mod:`minidb.viz.script`) runs on a small page store
on a :class:`~minidb.io.SimDisk`: 64 pages of 512 bytes, and a log of
:data:`PARTITIONS` partitions of :data:`PARTITION` bytes (``log_size``), so a
few dozen records fill a log file and the files visibly come and go. Records
of more than 8 bytes are large (``max_small_rec`` 8) and an index page lists
at most 4 pages (``index_fanout`` 4), so a record changes shape with a few
pages. The operations (:data:`OPS`) are those of notebook 06 (begin,
create_file, create, update, append, free, commit, abort) and: ``fill`` (create
records until the log refuses one), ``truncate``, ``prepare``,
``commit_prepared``, ``abort_prepared``, ``checkpoint`` (which scavenges),
``crash``, ``tear`` (a crash tearing the page of a record) and ``restart``.

A refusal for lack of log space (:class:`~minidb.pagestore.errors.OutOfLogSpaceError`)
is not a script error: it is what the demo shows; the step's outcome quotes
it and the script goes on. The default :data:`SCRIPT`:

============  =================================================================
T1            creates file s(1.3) with alpha and beta; commits
T2            creates gamma, updates alpha; stays **active** (an old transaction)
checkpoint    nothing can go: T2's first entry is in the first file
T3            creates records until the log **refuses** one; aborts: its
              rollback logs into the space it reserved
checkpoint    T2 alone holds the log: the warning names it
T2            commits; the next **checkpoint** removes the old files
T4            updates beta and is **prepared** (gtid g1); the disk **crashes**;
              **restart** brings T4 back in doubt; ``commit_prepared`` ends it
T5 .. T11     a record grows small -> LARGE_0 -> LARGE_1 -> LARGE_2 and
              shrinks back to small, one transaction per step
============  =================================================================

:func:`logspace_step` is the pure function behind the notebook's pictures: it
runs the first ``k`` steps from a fresh disk and returns the log's state
(:class:`LogSpacePicture`) with :func:`draw_log_space` (the partitions, the
head, the tail, the master checkpoint, each transaction's first LSN, and the
room split into used, reserved and free) and :func:`draw_reservations` (per
transaction: the bytes it logged and the bytes it holds for its rollback).
:func:`crash_view` runs ``k`` steps, crashes (or tears a dirty page) and
restarts: the function behind the notebook's last control
(:func:`log_space_explorer`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from minidb.errors import MinidbError, SimulatedCrash
from minidb.io import CrashMode, SimDisk
from minidb.log.files import file_name
from minidb.log.lsn import LSN
from minidb.pagestore.errors import OutOfLogSpaceError
from minidb.pagestore.ids import PageId
from minidb.pagestore.restart.master import read_master
from minidb.pagestore.sm import StorageManager
from minidb.viz.large_records import LargeRecordPicture, draw_large_record, large_record_layout
from minidb.viz.script import Op, checked, op_table, script_error
from minidb.viz.style import (
    LOG_SPACE_COLOURS,
    SMALL,
    TEXT,
    TITLE,
    WIDTH,
    dark,
    fits,
    new_figure,
    title_lines,
    transaction_colour,
)
from minidb.viz.xct_demo import OPS as XCT_OPS, XctWorkload, plain

NUM_PAGES, EXT_SZ, PAGE_SIZE, FRAMES = 64, 4, 512, 16
PARTITIONS, PARTITION = 4, 4400  # room for the page image each changed page reserves
FILL_LIMIT = 200  # a fill that is never refused is a script error (the log is bounded: it cannot be)
CRASHES = ("no crash", "crash", "tear a page")

OPS = XCT_OPS | op_table(
    Op("truncate", ("T", "name", "amount"), "T cuts amount bytes off the end of the record's body"),
    Op("fill", ("T", "body"), "T creates records holding body until the log refuses one (out of log space)"),
    Op("prepare", ("T", "gtid"), "T is prepared (two-phase commit) under the global id gtid"),
    Op("commit_prepared", ("gtid",), "the coordinator decides: the prepared transaction gtid commits"),
    Op("abort_prepared", ("gtid",), "the coordinator decides: the prepared transaction gtid rolls back"),
    Op("checkpoint", (), "take a checkpoint, then scavenge: remove the log files restart no longer needs"),
    Op("crash", (), "the machine fails: the disk keeps only what was synced"),
    Op("tear", ("name",), "the machine fails while writing the page of the record: half the page reaches the disk"),
    Op("restart", (), "open the disk again: analysis, redo, undo; a prepared transaction comes back in doubt"),
)

SCRIPT: list[tuple] = [
    ("begin", "T1"),
    ("create_file", "T1"),
    ("create", "T1", "alpha", "alpha"),
    ("create", "T1", "beta", "beta"),
    ("commit", "T1"),
    ("begin", "T2"),
    ("create", "T2", "gamma", "gamma"),
    ("update", "T2", "alpha", 0, "A"),
    ("checkpoint",),
    ("begin", "T3"),
    ("fill", "T3", "12345678"),
    ("abort", "T3"),
    ("checkpoint",),
    ("commit", "T2"),
    ("checkpoint",),
    ("begin", "T4"),
    ("update", "T4", "beta", 0, "B"),
    ("prepare", "T4", "g1"),
    ("crash",),
    ("restart",),
    ("commit_prepared", "g1"),
    ("begin", "T5"),
    ("create", "T5", "blob", "b" * 448),
    ("create", "T5", "photo", "p" * 448),
    ("commit", "T5"),
    ("begin", "T6"),
    ("append", "T6", "blob", "c" * 448),
    ("commit", "T6"),
    ("checkpoint",),
    ("begin", "T7"),
    ("append", "T7", "blob", "d" * 1344),
    ("commit", "T7"),
    ("checkpoint",),
    ("begin", "T8"),
    ("truncate", "T8", "blob", 1344),
    ("commit", "T8"),
    ("begin", "T9"),
    ("truncate", "T9", "blob", 448),
    ("commit", "T9"),
    ("begin", "T10"),
    ("truncate", "T10", "blob", 444),
    ("commit", "T10"),
]


def _clock() -> float:
    return 1_700_000_000.0


@dataclass(frozen=True)
class TxnSpace:
    """One transaction that has not ended, as the log sees it."""

    name: str
    state: str
    first_lsn: LSN
    logged: int  # bytes of its entries in the log
    reserved: int  # bytes held for its rollback (the fudge factors' share and its end)


@dataclass(frozen=True)
class LogSpacePicture:
    """The log's state after a step: its files, its marks and its room."""

    step: int
    partition: int
    partitions: int
    head: int  # the first log file kept
    files: tuple[tuple[int, int], ...]  # (file number, bytes used) of the files on the disk
    spares: int  # preallocated spare files waiting for the next partitions
    removed: tuple[tuple[str, int], ...]  # (file name, the step that removed it)
    tail: LSN
    master: LSN | None
    room: int  # bytes that can still be appended
    reserved: int  # for rollbacks, in all
    chkpt_reserve: int
    transactions: tuple[TxnSpace, ...]
    crashed: str = ""  # what the disk went through, while it waits for restart

    @property
    def free(self) -> int:
        return max(0, self.room - self.reserved - self.chkpt_reserve)


@dataclass
class Demo:
    """A page store on a SimDisk with a bounded log, and the script's workload on it."""

    disk: SimDisk = field(default_factory=lambda: SimDisk("log-space-demo"))
    step: int = 0
    removed: list[tuple[str, int]] = field(default_factory=list)
    held: list[str] = field(default_factory=list)  # the on_log_held warnings, with their step
    refused: list[tuple[int, str]] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)
    gtids: dict[str, str] = field(default_factory=dict)  # gtid -> transaction name
    in_doubt: tuple[str, ...] = ()  # after the last restart
    crashed: str = ""
    failed: str = ""  # a restart that failed: nothing more can run
    restarts: list[str] = field(default_factory=list)
    last: LogSpacePicture | None = None

    def __post_init__(self) -> None:
        self.workload = LogSpaceWorkload(self._open(fresh=True), demo=self)

    def options(self) -> dict[str, Any]:
        return dict(frames=FRAMES, clock=_clock, log_size=PARTITIONS * PARTITION, partitions=PARTITIONS,
                    max_small_rec=8, index_fanout=4, archive=self._archived, on_log_held=self._log_held)

    def _open(self, fresh: bool = False) -> StorageManager:
        if fresh:
            return StorageManager.format(self.disk, num_pages=NUM_PAGES, ext_sz=EXT_SZ, page_size=PAGE_SIZE,
                                         **self.options())
        return StorageManager.open(self.disk, **self.options())

    @property
    def sm(self) -> StorageManager:
        return self.workload.sm

    def _archived(self, name: str, data: bytes) -> None:
        self.removed.append((name, self.step))

    def _log_held(self, tid: int, first_lsn: LSN, files: int) -> None:
        self.held.append(f"step {self.step}: T{tid} (first LSN {first_lsn}) alone keeps {files} log "
                         f"file{'s' if files > 1 else ''} from being removed")

    def run(self, script: Sequence[tuple]) -> None:
        for op in script:
            self.step += 1
            self.outcomes.append(f"step {self.step:>2} {self.workload.run(self.step, op)}")
            if not (self.crashed or self.failed):
                self.last = self.picture()

    def records(self) -> dict[str, str]:
        """The script file's records now, by name: what a reader finds (committed or not)."""
        work = self.workload
        found = self.sm.contents().get(work.fid, {}) if work.fid is not None else {}
        return {work.names.get(rid, str(rid)): body.decode() for rid, (_, body) in sorted(found.items())}

    def picture(self) -> LogSpacePicture:
        """The log's state now (the last state before a crash, while the disk waits for restart)."""
        if (self.crashed or self.failed) and self.last is not None:
            return LogSpacePicture(**{**self.last.__dict__, "step": self.step,
                                      "crashed": self.crashed or "and restart failed"})
        sm, log = self.sm, self.sm.log
        logged: dict[int, int] = {}
        for entry in log.scan():
            if entry.txn_id:
                logged[entry.txn_id] = logged.get(entry.txn_id, 0) + entry.size
        names = {x.txn_id: name for name, x in self.workload.xcts.items()}
        txns = tuple(TxnSpace(names.get(x.txn_id, f"T{x.txn_id}"), x.state.name, x.first_lsn,
                              logged.get(x.txn_id, 0), sm.log_space.held(x.txn_id))
                     for x in sm.xcts.active())
        files = tuple((number, log.end_lsn.offset if number == log.end_lsn.file else self.disk.size(file_name(number)))
                      for number in range(log.head, log.end_lsn.file + 1))
        record = read_master(self.disk)
        spares = sum(1 for name in self.disk.list() if name.startswith("logspare"))
        return LogSpacePicture(self.step, log.file_max, PARTITIONS, log.head, files,
                               min(spares, PARTITIONS - len(files)), tuple(self.removed), log.end_lsn,
                               record.master if record is not None else None, log.room(sm.log_space.waste),
                               sm.log_space.total, sm.log_space.chkpt_reserve, txns)


class LogSpaceWorkload(XctWorkload):
    """Notebook 06's operations on a bounded log, and log space's own (see the module documentation)."""

    def __init__(self, sm: StorageManager, demo: Demo):
        super().__init__(sm)
        self.demo = demo

    def run(self, step: int, op: Sequence[Any]) -> str:
        demo = self.demo
        if demo.failed:
            raise script_error(step, tuple(op), f"restart failed ({demo.failed}): nothing more can run")
        if demo.crashed and op[0] != "restart":
            raise script_error(step, tuple(op), f"the disk crashed ({demo.crashed}): restart first")
        try:
            return getattr(self, "_" + op[0])(step, op, *op[1:])
        except OutOfLogSpaceError as refusal:  # what the demo shows, not a mistake in the script
            demo.refused.append((step, str(refusal)))
            return f"refused: {refusal}"
        except MinidbError as error:
            raise script_error(step, tuple(op), str(error)) from error

    def _fill(self, step: int, op: Sequence[Any], name: object, body: object) -> str:
        self._xct(step, op, name)
        for i in range(1, FILL_LIMIT + 1):
            try:
                self._create(step, op, name, f"{name}#{i}", body)
            except OutOfLogSpaceError as refusal:
                self.demo.refused.append((step, str(refusal)))
                return f"{name} created {i - 1} records; the next was refused: {refusal}"
        raise script_error(step, tuple(op), f"the log never refused {name} in {FILL_LIMIT} records")

    def _truncate(self, step: int, op: Sequence[Any], name: object, record: object, amount: object) -> str:
        xct = self._xct(step, op, name)
        rid = self._rid(step, op, record)
        body = self.bodies[rid]
        if not isinstance(amount, int) or isinstance(amount, bool) or not 0 <= amount <= len(body):
            raise script_error(step, tuple(op), f"{record} holds {len(body)} bytes: amount must be a number "
                                                f"from 0 to {len(body)}")
        self.sm.truncate_rec(xct, rid, amount)
        self._change(str(name), rid, body[:len(body) - amount])
        return f"{name} cuts {amount} bytes off {record}: {self.shape(record)}"

    def _append(self, step: int, op: Sequence[Any], name: object, record: object, more: object) -> str:
        return f"{super()._append(step, op, name, record, more)}: {self.shape(record)}"

    def shape(self, record: object) -> str:
        rid = self.rids[record]
        return f"{len(self.bodies[rid])} bytes, {self.sm.files.large_layout(rid).flags.name}"

    def _abort(self, step: int, op: Sequence[Any], name: object) -> str:
        tid = self._xct(step, op, name).txn_id
        held, before = self.sm.log_space.held(tid), self._logged(tid)
        said = super()._abort(step, op, name)
        return f"{said}; the rollback logged {self._logged(tid) - before} bytes of the {held} it held reserved"

    def _logged(self, tid: int) -> int:
        return sum(e.size for e in self.sm.log.scan() if e.txn_id == tid)

    def _prepare(self, step: int, op: Sequence[Any], name: object, gtid: object) -> str:
        xct = self._xct(step, op, name)
        if not isinstance(gtid, str) or not gtid or gtid in self.demo.gtids:
            raise script_error(step, tuple(op), f"a prepare needs a new global id (a string), not {gtid!r}")
        lsn = self.sm.prepare(xct, gtid.encode())
        self.demo.gtids[gtid] = str(name)
        self.ended[str(name)] = f"prepared as {gtid}"
        return f"{name} is prepared as {gtid} at {lsn}: only its coordinator may end it now"

    def _prepared(self, step: int, op: Sequence[Any], gtid: object) -> str:
        name = self.demo.gtids.get(gtid) if isinstance(gtid, str) else None
        if name is None or not self.ended.get(name, "").startswith("prepared"):
            raise script_error(step, tuple(op), f"no transaction is prepared as {gtid!r}")
        return name

    def _commit_prepared(self, step: int, op: Sequence[Any], gtid: object) -> str:
        name = self._prepared(step, op, gtid)
        lsn = self.sm.commit_prepared(gtid.encode())
        self._committed(name, self.xcts[name].txn_id, lsn)
        return f"{gtid} ({name}) commits at {lsn}"

    def _abort_prepared(self, step: int, op: Sequence[Any], gtid: object) -> str:
        name = self._prepared(step, op, gtid)
        self.sm.abort_prepared(gtid.encode())
        self.ended[name] = "aborted"
        self.bodies.update(self.before.pop(name, {}))
        return f"{gtid} ({name}) rolls back"

    def _checkpoint(self, step: int, op: Sequence[Any]) -> str:
        gone, held = len(self.demo.removed), len(self.demo.held)
        result = self.sm.checkpoint()
        removed = ", ".join(name for name, _ in self.demo.removed[gone:]) or "no log file"
        warned = f"; warning: {self.demo.held[-1].split(': ', 1)[1]}" if len(self.demo.held) > held else ""
        return f"checkpoint at {result.begin}; scavenging removed {removed}{warned}"

    def _crash(self, step: int, op: Sequence[Any]) -> str:
        self.demo.disk.crash(CrashMode.nothing())
        self.demo.crashed = f"at step {step}"
        return "crash: the disk keeps what was synced, memory is lost"

    def _tear(self, step: int, op: Sequence[Any], record: object) -> str:
        pid = self._rid(step, op, record, live=False).pid
        if not tear_page(self.sm, pid):
            raise script_error(step, tuple(op), f"the page of {record}, {pid}, has no change that is not on the "
                                                f"disk yet: change the record first")
        self.demo.crashed = f"at step {step}, tearing {pid}"
        return f"crash while writing {pid} (the page of {record}): half of it reached the disk"

    def _restart(self, step: int, op: Sequence[Any]) -> str:
        demo = self.demo
        if not demo.crashed:
            raise script_error(step, tuple(op), "the disk has not crashed: crash first")
        demo.crashed = ""
        try:
            self.sm = demo._open()
        except MinidbError as error:
            demo.failed = f"{type(error).__name__}: {error}"
            demo.restarts.append(demo.failed)
            return f"restart refused: {demo.failed}"
        for name in [name for name in self.xcts if name not in self.ended]:  # a prepared one has ended here
            del self.xcts[name]  # rolled back (or never logged): the engine may give its number again
            self.bodies.update(self.before.pop(name, {}))
        demo.in_doubt = tuple(self.demo.gtids[x.gtid.decode()] for x in self.sm.in_doubt())
        report = self.sm.restart_report
        said = (f"restart: {report.redo.torn_pages_rebuilt} torn page(s) rebuilt, losers rolled back: "
                f"{', '.join(f'T{t}' for t in report.undo.ended) or 'none'}, in doubt: "
                f"{', '.join(demo.in_doubt) or 'none'}")
        said += "".join(f"\n  {repair}" for repair in report.redo.pages_repaired)
        demo.restarts.append(said)
        return said


def tear_page(sm: StorageManager, pid: PageId) -> bool:
    """Crash ``sm``'s disk while the buffer pool writes page ``pid``: half of it reaches the disk (False: the
    page has no change to write)."""
    if pid not in sm.bp.dirty_page_table():
        return False
    sm.log.sync()  # so the page write is the next disk operation, and the log has its changes
    sm.disk.schedule_crash(after_ops=1, mode=CrashMode.torn(PAGE_SIZE // 2))
    try:
        sm.bp.clean(lambda frame: frame.pid == pid)
    except SimulatedCrash:
        return True
    raise AssertionError(f"writing {pid} did not crash")  # pragma: no cover (the SimDisk always does)


def _key(script: Sequence[Sequence[Any]]) -> tuple[tuple, ...]:
    return tuple(plain(checked(script, OPS)))


def run_script(script: Sequence[Sequence[Any]] = SCRIPT, upto: int | None = None) -> Demo:
    """A fresh demo with the first ``upto`` steps of ``script`` run (all of them by default)."""
    return _run(_key(script), len(script) if upto is None else upto)


@lru_cache(maxsize=16)
def _run(script: tuple[tuple, ...], upto: int) -> Demo:
    if not 0 <= upto <= len(script):
        raise ValueError(f"step must be between 0 and {len(script)}, not {upto}")
    demo = Demo()
    demo.last = demo.picture()
    demo.run(script[:upto])
    return demo


@dataclass(frozen=True)
class LogSpaceStep:
    """The log after ``step`` steps: its picture data, the figures, and what the steps said."""

    step: int
    demo: Demo
    picture: LogSpacePicture
    figure: Figure | None
    reservations: Figure | None

    def summary(self) -> str:
        """What the last step did."""
        return self.demo.outcomes[-1] if self.demo.outcomes else "nothing run yet"


def logspace_step(step: int, script: Sequence[Sequence[Any]] = SCRIPT, draw: bool = True) -> LogSpaceStep:
    """The log after the first ``step`` steps of ``script`` (see the module documentation)."""
    demo = run_script(script, step)
    pic = demo.picture()
    title = f"the log after step {step}" + (f" {tuple(script[step - 1])!r}" if step else "")
    return LogSpaceStep(step, demo, pic, draw_log_space(pic, title=title) if draw else None,
                        draw_reservations(pic, title=f"reservations after step {step}") if draw else None)


def record_picture(record: str, step: int, script: Sequence[Sequence[Any]] = SCRIPT) -> Figure:
    """Record ``record`` after the first ``step`` steps, drawn as its slot, index pages and data pages."""
    demo = run_script(script, step)
    rid = demo.workload.rids.get(record)
    if rid is None or demo.workload.bodies.get(rid) is None or demo.crashed or demo.failed:
        raise ValueError(f"no live record {record!r} after step {step}")
    pic: LargeRecordPicture = large_record_layout(demo.sm, rid)
    return draw_large_record(pic, title=f"{record} after step {step}: {pic.shape}, {pic.body_len} bytes")


# -- crash anywhere ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CrashView:
    """``step`` steps run, then a crash (or none) and a restart: what restart did and found."""

    step: int
    crash: str
    lines: tuple[str, ...]
    in_doubt: tuple[str, ...]
    ok: bool | None  # the committed records are there and nothing else (None: restart refused)
    picture: LogSpacePicture | None
    figure: Figure | None

    def summary(self) -> str:
        return "\n".join(self.lines)


def crash_view(step: int, crash: str = "crash", script: Sequence[Sequence[Any]] = SCRIPT,
               draw: bool = True) -> CrashView:
    """Run ``step`` steps of ``script`` on a fresh disk, then ``crash`` (one of :data:`CRASHES`) and restart."""
    if crash not in CRASHES:
        raise ValueError(f"crash must be one of {CRASHES}, not {crash!r}")
    demo = Demo()
    demo.run(_key(script)[:step])
    lines = [demo.outcomes[-1] if demo.outcomes else "nothing run"]
    if demo.failed:
        return CrashView(step, crash, (*lines, "restart had already failed: nothing to crash"), (), None, None, None)
    if demo.crashed:
        crash = "no crash"
        lines.append("the disk is crashed already: restart")
    elif crash == "tear a page":
        dirty = demo.sm.bp.dirty_page_table()
        torn = sorted(p for p in {rid.pid for rid in demo.workload.rids.values()} if p in dirty)
        if not torn:
            lines.append("no page of a file has a change that is not on the disk: a plain crash instead")
            demo.disk.crash(CrashMode.nothing())
        else:
            tear_page(demo.sm, torn[0])
            lines.append(f"crash while writing {torn[0]}: half of it reached the disk")
    elif crash == "crash":
        demo.disk.crash(CrashMode.nothing())
        lines.append("crash: the disk keeps what was synced")
    if crash == "no crash" and not demo.crashed:
        demo.sm.close()
        lines.append("clean shutdown (the active transactions abort; prepared ones stay in doubt)")
    demo.crashed = demo.crashed or "now"
    demo.step += 1
    lines.append(demo.workload.run(demo.step, ("restart",)))
    if demo.failed:
        return CrashView(step, crash, tuple(lines), (), None, None, None)
    work = demo.workload
    durable = {rid: body for rid, body in work.committed.items()}
    for name in demo.in_doubt:  # an in-doubt transaction's changes are there, not yet committed
        durable.update({rid: body for rid, body in work.bodies.items()
                        if rid in work.before.get(name, {}) and body is not None})
        for rid in work.before.get(name, {}):
            if work.bodies[rid] is None:
                durable.pop(rid, None)
    found = {rid: body for rid, (_, body) in demo.sm.contents().get(work.fid, {}).items()} if work.fid else {}
    ok = found == durable
    lines.append("check: the committed records are there, and the in-doubt transactions' changes; nothing else"
                 if ok else "check FAILED: the records are not what the commits left")
    pic = demo.picture()
    figure = draw_log_space(pic, title=f"after step {step}, {crash}, and restart") if draw else None
    return CrashView(step, crash, tuple(lines), demo.in_doubt, ok, pic, figure)


def log_space_explorer(script: Sequence[Sequence[Any]] = SCRIPT) -> Any:
    """A step slider and a crash choice over ``script``: the log after restart, and what restart found."""
    import ipywidgets as widgets

    from minidb.viz.widgets import Explorer, show_figure_and_text, step_slider

    checked(script, OPS)
    controls = {"step": step_slider(len(script), (len(script) + 1) // 2),
                "crash": widgets.Dropdown(options=list(CRASHES), value="crash", description="then")}
    return Explorer(partial(crash_view, script=script), controls, show_figure_and_text)


# -- pictures ----------------------------------------------------------------------------------------------------
SHOWN_FILES = 8  # file slots drawn: the newest removed ones, the live ones, the spares
MARK_PT, MARK_TIER = 9, 0.33  # a mark's marker (points), and the height of a tier of marks (y units)


def _segment(ax, x: float, y: float, w: float, h: float, colour: str, text: str = "", **style: Any) -> None:
    ax.add_patch(Rectangle((x, y), w, h, facecolor=colour, edgecolor="#424242", lw=0.8, **style))
    if text and fits(ax, text, w - 0.4, SMALL, h):
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=SMALL,
                color="white" if dark(colour) else "black")


def draw_log_space(pic: LogSpacePicture, *, title: str | None = None) -> Figure:
    """The partitions (removed files, live files filled to their use, spares), the marks (each active
    transaction's first LSN, the master checkpoint, the tail), and the room as one bar."""
    fig = new_figure(WIDTH, 4.6)
    ax = fig.add_axes((0.01, 0.02, 0.98, 0.85 if title else 0.96))
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 9.8)
    ax.set_axis_off()
    first_live = pic.files[0][0] if pic.files else pic.head
    last = first_live + pic.partitions - 1
    start = max(1, last - SHOWN_FILES + 1)
    slot = 100 / SHOWN_FILES
    removed = {name: step for name, step in pic.removed}
    live = dict(pic.files)
    spares = pic.spares
    x_of: dict[int, float] = {}
    for i, number in enumerate(range(start, last + 1)):
        x = i * slot
        x_of[number] = x
        name = file_name(number)
        ax.text(x + slot / 2, 8.45, f"file {number}", ha="center", va="center", fontsize=SMALL)
        if number in live:
            _segment(ax, x + 0.4, 5.6, slot - 0.8, 1.6, LOG_SPACE_COLOURS["unused"])
            used = (slot - 0.8) * min(1.0, live[number] / pic.partition)
            ax.add_patch(Rectangle((x + 0.4, 5.6), used, 1.6, facecolor=LOG_SPACE_COLOURS["used"],
                                   edgecolor="#424242", lw=0.8))
            ax.text(x + slot / 2, 5.1, f"{live[number]} B", ha="center", va="center", fontsize=SMALL)
        elif name in removed:
            _segment(ax, x + 0.4, 5.6, slot - 0.8, 1.6, LOG_SPACE_COLOURS["removed"], f"removed\nstep {removed[name]}")
        elif number > pic.files[-1][0] and spares > 0:
            spares -= 1
            _segment(ax, x + 0.4, 5.6, slot - 0.8, 1.6, LOG_SPACE_COLOURS["spare"], "spare", linestyle="--")
        else:
            _segment(ax, x + 0.4, 5.6, slot - 0.8, 1.6, LOG_SPACE_COLOURS["unused"], "none yet", linestyle=":")

    def at(lsn: LSN) -> float | None:
        if lsn.file not in x_of:
            return None
        return x_of[lsn.file] + 0.4 + (slot - 0.8) * min(1.0, lsn.offset / pic.partition)

    marks = [(f"{t.name} ({t.state}) first", t.first_lsn,
              transaction_colour(t.name)) for t in pic.transactions if not t.first_lsn.is_null]
    marks += [("master", pic.master, LOG_SPACE_COLOURS["master"])] if pic.master is not None else []
    marks += [("tail", pic.tail, LOG_SPACE_COLOURS["tail"])]
    handles = []
    # Each mark a line through the file and a marker above it; a marker that would cover another's (LSNs
    # close together) goes on the next tier up, so every mark stays visible.
    marker_w = MARK_PT / 72 * 100 / (0.98 * WIDTH) * 1.2  # a marker's width in x units, and a little room
    placed: list[tuple[float, int]] = []
    for label, lsn, colour in marks:
        x = at(lsn)
        if x is None:
            continue
        tier = next(t for t in range(len(marks) + 1) if all(abs(x - px) >= marker_w for px, pt in placed if pt == t))
        placed.append((x, tier))
        y = 7.45 + MARK_TIER * tier
        ax.plot([x, x], [5.5, y], color=colour, lw=1.6)
        handles.append(ax.plot([x], [y], marker="v", markersize=MARK_PT, color=colour, markeredgecolor="#212121",
                               markeredgewidth=0.6, linestyle="", label=f"{label} {lsn}")[0])
    ax.text(0, 9.3, f"head: file {pic.head}   tail: {pic.tail}   master checkpoint: {pic.master}"
            + (f"   (crashed {pic.crashed})" if pic.crashed else ""), ha="left", va="center", fontsize=TEXT)
    # the room as one bar: used by nobody yet is split into reservations, the checkpoint reserve and free space
    ax.text(0, 3.9, f"room left in the log: {pic.room} B = reserved for rollbacks {pic.reserved} B + "
            f"for a checkpoint {pic.chkpt_reserve} B + free {pic.free} B", ha="left", va="center", fontsize=TEXT)
    total = max(pic.room, pic.reserved + pic.chkpt_reserve, 1)
    x = 0.0
    parts = [(t.name, t.reserved, transaction_colour(t.name)) for t in pic.transactions if t.reserved]
    parts += [("checkpoint", pic.chkpt_reserve, LOG_SPACE_COLOURS["checkpoint"]),
              ("free", pic.free, LOG_SPACE_COLOURS["free"])]
    for label, amount, colour in parts:
        w = 100 * amount / total
        _segment(ax, x, 1.6, w, 1.5, colour, f"{label}\n{amount} B")
        x += w
    if handles:
        ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, -0.02), ncol=min(4, len(handles)),
                  fontsize=SMALL, frameon=False)
    if title:
        fig.suptitle(title_lines(title), x=0.01, ha="left", fontsize=TITLE)
    return fig


def draw_reservations(pic: LogSpacePicture, *, title: str | None = None) -> Figure:
    """Per transaction that has not ended: the bytes it logged and the bytes it holds for its rollback."""
    fig = new_figure(WIDTH, 3.2)
    ax = fig.add_axes((0.16, 0.12, 0.8, 0.72))
    rows = pic.transactions or (TxnSpace("none", "", LSN(0, 0), 0, 0),)
    top = max([max(t.logged, t.reserved) for t in rows] + [1])
    for i, t in enumerate(rows):
        y = len(rows) - 1 - i
        for dy, amount, kind in ((0.18, t.logged, "logged"), (-0.18, t.reserved, "held")):
            ax.barh(y + dy, amount, height=0.34, color=LOG_SPACE_COLOURS[kind], edgecolor="#424242", lw=0.8,
                    label=kind if i == 0 else None)
            ax.text(amount + top * 0.01, y + dy, f"{amount} B", va="center", ha="left", fontsize=SMALL)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{t.name} {t.state}".strip() for t in reversed(rows)], fontsize=SMALL)
    ax.set_xlim(0, top * 1.25)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.tick_params(axis="x", labelsize=SMALL)
    fig.legend(handles=ax.patches[:2], labels=["logged (its entries)", "held for its rollback"], fontsize=SMALL,
               loc="upper right", ncol=2, frameon=False)
    if title:
        fig.suptitle(title, x=0.01, ha="left", fontsize=TITLE)
    return fig
