"""The demonstration of ``notebooks/11_cleaner_eraser.ipynb``: the log cleaner and the data eraser at work.

A *script* of operations (:mod:`minidb.viz.script`) runs on a log store on a
:class:`~minidb.io.SimDisk` with tiny log files (:data:`FILE_MAX` bytes), so
a few dozen records fill a dozen files and the cleaner and the eraser have
something to do. The operations (:data:`OPS`): ``put``, ``update`` (the key
must exist), ``delete``, ``fill`` (put ``count`` filler records ``f00``,
``f01``...: done again, it updates them), ``checkpoint`` (step 9 deletes the
files cleaned before it), ``clean`` (the cleaner cleans files while its
selector picks one), ``erase_cycle`` (one cycle of the data eraser, a day
long, on a :class:`~minidb.logstore.eraser.throttle.ManualClock`: the cycle
runs in milliseconds), ``crash`` and ``recover``.

The default :data:`SCRIPT`: bob and carol are written, then filler records
that are overwritten at once (their first versions are obsolete); a record
``secret`` is written, then deleted; two checkpoints; the cleaner picks the
emptiest files (its reason quotes the thresholds: clean while the total is
under 50%), sorts each entry into live or obsolete and migrates the live LNs
to the end of the log; the files stay on disk until the next checkpoint's
CkptEnd, which deletes those at the head of the log; a cleaned file above a
file still in use waits. Then an eraser cycle zeroes the bytes of ``secret``
in the files the cleaner left, and the log survives a crash and recovery.

:func:`cleaner_step` is the pure function behind the notebook's pictures: it
runs the first ``k`` steps from a fresh disk and returns the log's state after
each step (:class:`Snapshot`), every cleaning (:class:`Cleaning`) and erasure
(:class:`Erasure`) so far. :func:`eraser_crash` crashes the simulated disk at
one write or fsync of the eraser's cycle, reopens it and checks it: the
function behind the notebook's last control (:func:`eraser_crash_explorer`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any

from matplotlib.figure import Figure

from minidb.errors import MinidbError
from minidb.io import CrashMode, SimDisk
from minidb.io.simdisk import Event
from minidb.log import LSN
from minidb.log.files import file_name, log_file_numbers
from minidb.log.verify import verify_log
from minidb.logstore import Environment, EnvironmentConfig
from minidb.logstore.cleaner.selector import total_utilization
from minidb.logstore.eraser import DataEraser, EraserConfig, ManualClock, erasing_of
from minidb.logstore.eraser.throttle import Planned, schedule
from minidb.logstore.tools.verify import records
from minidb.viz.script import Op, checked, op_table, script_error

FILE_MAX = 700  # bytes per log file: a dozen small files
DAY = 86_400_000  # the eraser's period, in ms
START_MS = 1_700_000_000_000
DB = "accounts"
KEEP_MODES = {"nothing unsynced": CrashMode.nothing(), "everything written": CrashMode.everything(),
              "a torn write": CrashMode.torn(seed=11)}

OPS = op_table(
    Op("put", ("key", "data"), "write the record key (a new one or a new version)"),
    Op("update", ("key", "data"), "write a new version of an existing record: the old one becomes obsolete"),
    Op("delete", ("key",), "delete an existing record: every version of it becomes obsolete"),
    Op("fill", ("count",), "put count filler records f00, f01, ...; again, it updates them"),
    Op("checkpoint", (), "take a checkpoint; after its CkptEnd, step 9 deletes the files cleaned before it"),
    Op("clean", (), "run the cleaner: clean files while the selector picks one"),
    Op("erase_cycle", (), "run one cycle (one day, on a demo clock) of the data eraser"),
    Op("crash", (), "the machine fails: the disk keeps only what was synced"),
    Op("recover", (), "open the environment again (recovery)"),
)

SCRIPT: list[tuple] = [
    ("put", "bob", "balance 250"),
    ("put", "carol", "balance 75"),
    ("fill", 6),
    ("put", "alice", "balance 100"),
    ("fill", 6),
    ("put", "secret", "pin 4711 for dave"),
    ("put", "dave", "balance 30"),
    ("update", "alice", "balance 90"),
    ("delete", "secret"),
    ("checkpoint",),
    ("fill", 6),
    ("fill", 4),
    ("checkpoint",),
    ("clean",),
    ("checkpoint",),
    ("erase_cycle",),
    ("crash",),
    ("recover",),
]

# The states of a log file, in the order a file goes through them.
WRITTEN, CURRENT, CLEANED, DELETED = "written", "being written", "cleaned, waiting for CkptEnd", "deleted"


def config() -> EnvironmentConfig:
    """The demo's environment: tiny files; cleaned files leave from the log's head only, so a cleaned file
    above a file in use waits for the eraser (:func:`middle_file_steps` shows them deleted wherever they lie)."""
    return EnvironmentConfig(file_max=FILE_MAX, node_max_entries=8, checkpoint_bytes_interval=None,
                             clock=lambda: START_MS / 1000, trace=False, cleaner_delete_middle_files=False)


@dataclass(frozen=True)
class FileBar:
    """One log file after a step: its live and obsolete bytes (utilization tracker) and its state."""

    number: int
    live: int
    obsolete: int  # reclaimable: obsolete, and the file's own summaries (they go with it)
    state: str


@dataclass(frozen=True)
class Snapshot:
    """The log after one step."""

    step: int
    operation: tuple
    said: str
    files: tuple[FileBar, ...]
    total_utilization: float  # over the files not deleted nor cleaned, as the selector sees it


@dataclass(frozen=True)
class Entry:
    """One entry of a cleaned file, as the cleaner judged it."""

    lsn: LSN
    size: int
    type_name: str
    live: bool
    moved_to: LSN | None  # a migrated LN's new LSN


@dataclass
class Cleaning:
    """One file cleaned at one step: why it was picked, its entries sorted, where the live LNs went."""

    step: int
    reason: str
    file_number: int
    entries: list[Entry]
    dirtied: list[str]

    @property
    def live(self) -> list[Entry]:
        return [e for e in self.entries if e.live]


@dataclass
class Erasure:
    """One eraser cycle: its files, its planned and actual pace, what it erased, the files' bytes around it."""

    step: int
    start_ms: int
    end_ms: int
    lengths: dict[int, int]  # file -> bytes, the files the cycle selected
    plan: list[Planned]
    erased: list[LSN]
    before: dict[int, bytes]
    after: dict[int, bytes]
    events: tuple[int, int]  # the disk's events of the cycle: first, after last
    messages: list[str]


@dataclass
class Demo:
    disk: SimDisk = field(default_factory=lambda: SimDisk("cleaner"))
    clock: ManualClock = field(default_factory=lambda: ManualClock(START_MS))
    env: Environment | None = None
    snapshots: list[Snapshot] = field(default_factory=list)
    cleanings: list[Cleaning] = field(default_factory=list)
    erasures: list[Erasure] = field(default_factory=list)
    versions: dict[str, list[str]] = field(default_factory=dict)  # key -> every data it was written with
    deleted: set[str] = field(default_factory=set)  # the keys and data of deleted records
    cleaned_at: dict[int, int] = field(default_factory=dict)  # file -> the step that cleaned it
    fills: int = 0
    frozen: tuple = ((), 0.0)  # the files and total utilization when the machine crashed

    def __post_init__(self) -> None:
        self.env = Environment.open(self.disk, config())
        self.env.database(DB)

    # -- running -----------------------------------------------------------------------------
    def run(self, script: Sequence[tuple], upto: int) -> None:
        for step, operation in enumerate(script[:upto], 1):
            name, *args = operation
            if self.env is None and name != "recover":
                raise script_error(step, operation, "the machine has crashed: ('recover',) first")
            if self.env is not None and name == "recover":
                raise script_error(step, operation, "the environment is open: nothing to recover ('crash',) first")
            said = getattr(self, "_" + name)(step, operation, *args)
            self.snapshots.append(Snapshot(step, operation, said, self.files(), self.total()))

    def _key(self, step: int, operation: tuple, key: object, exists: bool | None) -> str:
        if not isinstance(key, str) or not key:
            raise script_error(step, operation, f"a key is a non-empty string, not {key!r}")
        if exists is not None and (self.env.database(DB).get(key) is not None) != exists:
            raise script_error(step, operation, f"no record {key!r} to {operation[0]}" if exists
                               else f"record {key!r} exists already")
        return key

    def _put(self, step: int, operation: tuple, key: object, data: object) -> str:
        self.env.database(DB).put(self._key(step, operation, key, None), str(data))
        self.versions.setdefault(key, []).append(str(data))
        return f"put {key}"

    def _update(self, step: int, operation: tuple, key: object, data: object) -> str:
        self.env.database(DB).put(self._key(step, operation, key, True), str(data))
        self.versions[key].append(str(data))
        return f"updated {key}: its old version is obsolete"

    def _delete(self, step: int, operation: tuple, key: object) -> str:
        self.env.database(DB).delete(self._key(step, operation, key, True))
        self.deleted |= {key, *self.versions.pop(key, [])}
        return f"deleted {key}: all its versions are obsolete"

    def _fill(self, step: int, operation: tuple, count: object) -> str:
        if not isinstance(count, int) or not 1 <= count <= 50:
            raise script_error(step, operation, f"count is a whole number from 1 to 50, not {count!r}")
        self.fills += 1
        db = self.env.database(DB)
        for i in range(count):
            db.put(f"f{i:02d}", f"filler {self.fills}")
        return f"{count} filler records written (round {self.fills})"

    def _checkpoint(self, step: int, operation: tuple) -> str:
        head = self.env.log.head
        self.env.checkpoint()
        gone = list(range(head, self.env.log.head))
        waiting = sorted(self.env.cleaner.cleaned)
        return ("checkpoint: after its CkptEnd, deleted " + ", ".join(f"file {n}" for n in gone) if gone
                else "checkpoint: no file deleted") + (f"; cleaned files {waiting} wait for the files below them"
                                                       if waiting else "")

    def _clean(self, step: int, operation: tuple) -> str:
        env, lines = self.env, []
        while True:
            done = env.clean_log(max_files=1)
            selection = env.cleaner.last_selection
            if not done:
                lines.append(f"stop: {selection.reason}")
                return "cleaner: " + "; ".join(lines)
            result = done[0]
            live = set(result.live)
            entries = [Entry(e.lsn, e.size, e.type_name, e.lsn in live, result.migrated.get(e.lsn))
                       for e in env.log.scan(LSN(result.file_number, 0), LSN(result.file_number + 1, 0))
                       if e.lsn.file == result.file_number]
            self.cleanings.append(Cleaning(step, selection.reason, result.file_number, entries, result.dirtied))
            self.cleaned_at[result.file_number] = step
            lines.append(f"{selection.reason}: {len(result.live)} live, {len(result.obsolete)} obsolete")

    def _erase_cycle(self, step: int, operation: tuple) -> str:
        env, disk = self.env, self.disk
        eraser = DataEraser(env, EraserConfig(run_eraser=True, erase_period_ms=DAY), self.clock)
        before = {n: disk.open(file_name(n)).read_all() for n in log_file_numbers(disk)}
        first = len(disk.events)
        cycle = eraser.start_cycle()
        lengths = {n: disk.size(file_name(n)) for n in cycle.remaining}
        eraser.run_cycle()
        after = {n: disk.open(file_name(n)).read_all() for n in log_file_numbers(disk)}
        erased = [LSN(n, offset) for n in lengths for offset in changed_entries(before[n], after[n], n)]
        self.erasures.append(Erasure(step, cycle.start_ms, cycle.end_ms, lengths,
                                     schedule(cycle.start_ms, cycle.end_ms, list(lengths.values())), erased,
                                     before, after, (first, len(disk.events)), list(eraser.messages)))
        stats = eraser.load_stats()
        return (f"eraser: a cycle over files {sorted(lengths)}: {stats['eraserFilesErased']} file(s) erased, "
                f"{len(erased)} entries, {stats['eraserWriteBytes']} bytes overwritten")

    def _crash(self, step: int, operation: tuple) -> str:
        self.frozen = (self.files(), self.total())
        self.env.crash(CrashMode.nothing())
        self.env = None
        return "crash: only what was synced survives"

    def _recover(self, step: int, operation: tuple) -> str:
        self.env = Environment.open(self.disk, config())
        return f"recovered: {len(self.records())} records"

    # -- looking ------------------------------------------------------------------------------
    def records(self) -> dict[bytes, bytes]:
        return records(self.env).get(DB, {}) if self.env is not None else {}

    def files(self) -> tuple[FileBar, ...]:
        if self.env is None:
            return self.frozen[0]
        env = self.env
        report = {s.file_number: s for s in env.utilization_report()}
        bars = []
        for number in range(1, env.log.end_lsn.file + 1):
            summary = report.get(number)
            if number < env.log.head or summary is None:
                bars.append(FileBar(number, 0, 0, DELETED))
                continue
            state = (CURRENT if number == env.log.end_lsn.file else CLEANED if number in env.cleaner.cleaned
                     else WRITTEN)
            # live: what a cleaning would copy (a file's own summaries go with it, so they count as reclaimable)
            bars.append(FileBar(number, summary.live_size, summary.total_size - summary.live_size, state))
        return tuple(bars)

    def total(self) -> float:
        if self.env is None:
            return self.frozen[1]
        cleaned = self.env.cleaner.cleaned
        return total_utilization([s for s in self.env.utilization_report() if s.file_number not in cleaned])


def changed_entries(before: bytes, after: bytes, number: int) -> list[int]:
    """Offsets of the entries whose type byte the eraser overwrote (0xff now, not before)."""
    from minidb.log.scan import FileScanner

    return [offset for offset, header in FileScanner(after, number) if header.erased
            and offset + 4 < len(before) and before[offset + 4] != after[offset + 4]]


def _key(script: Sequence[Sequence[Any]]) -> tuple[tuple, ...]:
    return tuple(tuple(op) for op in checked(script, OPS))


def run_script(script: Sequence[Sequence[Any]] = SCRIPT, upto: int | None = None) -> Demo:
    """The demo after the first ``upto`` steps of ``script`` (all of them by default), from a fresh disk."""
    ops = _key(script)
    upto = len(ops) if upto is None else upto
    if not 0 <= upto <= len(ops):
        raise ValueError(f"step {upto} is not between 0 and {len(ops)}")
    return _run(ops, upto)


@lru_cache(maxsize=32)
def _run(script: tuple[tuple, ...], upto: int) -> Demo:
    demo = Demo()
    demo.run(script, upto)
    return demo


def step_of(script: Sequence[Sequence[Any]], name: str, nth: int = 1) -> int:
    """The step number (from 1) of the ``nth`` operation ``name`` of ``script``."""
    found = [i for i, op in enumerate(script, 1) if op[0] == name]
    if len(found) < nth:
        raise ValueError(f"the script has no {'' if nth == 1 else f'{nth}th '}{name!r} operation")
    return found[nth - 1]


@dataclass(frozen=True)
class CleanerStep:
    """The demo after ``step`` steps: what each step said, the log's files, and a picture of them."""

    step: int
    said: tuple[str, ...]
    snapshots: tuple[Snapshot, ...]
    demo: Demo
    figure: Figure | None

    def summary(self) -> str:
        return "\n".join(f"{i:2d} {line}" for i, line in enumerate(self.said, 1))


def cleaner_step(step: int, script: Sequence[Sequence[Any]] = SCRIPT, draw: bool = True) -> CleanerStep:
    """Run the first ``step`` operations; the utilization bars of the files after the last one."""
    from minidb.viz.cleaner import draw_utilization

    demo = run_script(script, step)
    snaps = tuple(demo.snapshots)
    figure = None
    if draw and snaps:
        figure = draw_utilization(snaps[-1], title=f"after step {step} {snaps[-1].operation}")
    return CleanerStep(step, tuple(s.said for s in snaps), snaps, demo, figure)


# -- crashing inside the eraser's write protocol ----------------------------------------------------
def protocol_events(script: Sequence[Sequence[Any]] = SCRIPT) -> list[Event]:
    """The writes and fsyncs of log files during the script's first eraser cycle (the crash points offered)."""
    demo = run_script(script, step_of(script, "erase_cycle"))
    first, last = demo.erasures[-1].events
    return [e for e in demo.disk.events[first:last] if e.kind in ("write", "fsync") and e.name.endswith(".jdb")]


#: The write protocol's three fsyncs of a file, in order (the eraser's steps 3, 4 and 6).
FSYNC_ROLES = ("the touch", "the type bytes made durable", "the last: the erased forms made durable")


def fsync_role(events: Sequence[Event], index: int) -> str:
    """Which of the protocol's fsyncs of its file ``events[index]`` is (counted among the file's fsyncs so far)."""
    name = events[index].name
    number = sum(1 for e in events[:index] if e.kind == "fsync" and e.name == name)
    return FSYNC_ROLES[number] if number < len(FSYNC_ROLES) else f"fsync {number + 1}"


def point_names(events: Sequence[Event]) -> list[str]:
    """Each crash point of the cycle, described; an fsync says which of the protocol's fsyncs it is."""
    return [describe_event(e) + (f" ({fsync_role(events, i)})" if e.kind == "fsync" else "")
            for i, e in enumerate(events)]


def point_label(events: Sequence[Event], index: int) -> str:
    """A crash point in a few words, for the control's readout: ``3: fsync file 3, the type bytes made durable``."""
    event = events[index]
    file = int(event.name.split(".")[0])
    if event.kind == "fsync":
        what = f"fsync file {file}, {fsync_role(events, index)}"
    elif len(event.data) == 1:
        what = f"file {file}: type byte 0xff at 0x{event.offset - 4:x}"
    elif len(event.data) == 4:
        what = f"file {file}: checksum at 0x{event.offset:x}"
    else:
        what = f"file {file}: erased item at 0x{event.offset:x}"
    return f"{index + 1}: {what}"


def describe_event(event: Event) -> str:
    if event.kind == "fsync":
        return f"fsync of {event.name}"
    if len(event.data) == 1 and event.data == b"\xff":
        return f"write of 0xff over the type byte at 0x{event.offset - 4:x} in {event.name}"
    if len(event.data) > 1 and not any(event.data[1:]):
        return (f"write of the erased item at 0x{event.offset:x} in {event.name} (type 0x{event.data[0]:02x}, then "
                f"{len(event.data) - 1} zeros)")
    if len(event.data) == 4:
        return f"write of the erased form's checksum at 0x{event.offset:x} in {event.name}"
    return f"write of {len(event.data)} bytes at 0x{event.offset:x} in {event.name}"


@dataclass(frozen=True)
class CrashResult:
    point: int
    event: str
    keep: str
    verified: bool
    records_ok: bool
    erased: int  # the secret's entries erased on the reopened disk
    secret_left: bool  # a byte string of a deleted record still in some file
    error: str | None
    figure: Figure | None

    def summary(self) -> str:
        if self.error:
            return f"crash after {self.event}: reopening failed: {self.error}"
        return (f"crash after {self.event} (keeping {self.keep}): the log verifies: {self.verified}; "
                f"every record as before the cycle: {self.records_ok}; entries erased: {self.erased}; "
                f"deleted data still on disk: {'yes (erase it again next cycle)' if self.secret_left else 'no'}")


def eraser_crash(point: int, keep: str = "nothing unsynced", script: Sequence[Sequence[Any]] = SCRIPT,
                 draw: bool = True) -> CrashResult:
    """Crash the disk right after protocol event ``point`` (from 1) of the first eraser cycle; reopen and check."""
    from minidb.viz.cleaner import draw_crash_hexdump

    events = protocol_events(script)
    if not 1 <= point <= len(events):
        raise ValueError(f"crash point {point} is not between 1 and {len(events)}")
    if keep not in KEEP_MODES:
        raise ValueError(f"keep {keep!r} is not one of {list(KEEP_MODES)}")
    demo = run_script(script, step_of(script, "erase_cycle"))
    erasure = demo.erasures[-1]
    want = records(demo.env).get(DB, {})
    event, described = events[point - 1], point_names(events)[point - 1]
    image = demo.disk.crash_image(event.index, KEEP_MODES[keep])
    try:
        verified = verify_log(image, erasing_of(image)).ok  # entries the intent names may be half erased
        env = Environment.open(image, config())  # which finishes a recorded erasure first
        got = records(env).get(DB, {})
    except MinidbError as e:
        return CrashResult(point, described, keep, False, False, 0, True, f"{type(e).__name__}: {e}", None)
    erased = sum(1 for lsn in erasure.erased if env.is_entry_erased(lsn))
    left = secret_left(image, demo.deleted)
    figure = draw_crash_hexdump(erasure, image, title=f"after a crash at {described}") if draw else None
    return CrashResult(point, described, keep, verified, got == want, erased, left, None, figure)


def secret_left(disk: SimDisk, secrets: set[str]) -> bool:
    """Does any log file still hold the key or data of a deleted record?"""
    files = [disk.open(file_name(n)).read_all() for n in log_file_numbers(disk)]
    return any(secret.encode() in data for secret in secrets for data in files)


def eraser_crash_explorer(script: Sequence[Sequence[Any]] = SCRIPT) -> Any:
    """The notebook's last control: which write or fsync of the eraser's cycle the crash follows, what it keeps."""
    import ipywidgets as widgets

    from minidb.viz.widgets import Explorer, show_figure_and_text

    events = protocol_events(script)
    # Each point named on the slider (which write, which of the protocol's fsyncs), its number the value.
    points = [(point_label(events, i), i + 1) for i in range(len(events))]
    controls = {"point": widgets.SelectionSlider(options=points, value=(len(events) + 1) // 2,
                                                 description="crash after"),
                "keep": widgets.Dropdown(options=list(KEEP_MODES), value="nothing unsynced",
                                         description="unsynced kept")}
    return Explorer(partial(eraser_crash, script=script), controls, show_figure_and_text)


__all__ = ["OPS", "SCRIPT", "Demo", "FileBar", "Snapshot", "Cleaning", "Erasure", "Entry", "CleanerStep",
           "CrashResult", "cleaner_step", "run_script", "step_of", "protocol_events", "eraser_crash",
           "eraser_crash_explorer", "secret_left", "describe_event", "point_names", "point_label", "KEEP_MODES"]
