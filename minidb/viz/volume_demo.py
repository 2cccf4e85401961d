"""The volume demonstration of ``notebooks/03_volume_extents.ipynb`` and the tour.

A tiny volume (64 pages of 512 bytes, 4 pages per extent: 16 extents, store
0 in extent 0, stores 1 and 2 in extents 1 and 2) on a simulated disk, and a
*script* (:mod:`minidb.viz.script`) of volume operations, one per step, with
stores and pages named as they print (``("alloc", "s(1.3)", "append")``,
``("free", "p(1.3.13)")``). :func:`volume_step` is the pure function behind
the notebook's slider: it formats a fresh volume, replays the script up to
step ``k``, and returns the extent map after it, the log entries that step
wrote, and the picture (the extents the step touched outlined in red). A
step the volume refuses (a store that does not exist, a page outside the
volume) is a :class:`~minidb.viz.script.ScriptError` naming the step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from matplotlib.figure import Figure

from minidb.errors import UserError
from minidb.io import SimDisk
from minidb.log import LogEntry, LogManager
from minidb.pagestore import BUFFER_POOL, AllocMode, BufferPool, PageId, StoreId, Volume
from minidb.pagestore.errors import VolumeFullError
from minidb.pagestore.ids import parse_typed
from minidb.viz.extents import ExtentMap, draw_extent_map, extent_map_layout
from minidb.viz.script import Op, checked, op_table, script_error

NUM_PAGES, EXT_SZ, PAGE_SIZE = 64, 4, 512
MODES = {"append": AllocMode.APPEND, "compact": AllocMode.COMPACT}

OPS = op_table(
    Op("create_store", (), "create a store: the lowest unused store number and one free extent"),
    Op("alloc", ("store", "mode"), "allocate a page in the store, mode 'append' or 'compact'"),
    Op("free", ("page",), "free the page; an extent left with no allocated page goes back to the volume"),
    Op("destroy", ("store",), "mark the store for deletion (what a transaction does)"),
    Op("remove", ("store",), "remove a store marked for deletion: free all its extents (at commit)"),
)
SCRIPT: list[tuple] = [
    ("create_store",),
    ("create_store",),
    ("alloc", "s(1.3)", "append"),
    ("alloc", "s(1.3)", "append"),
    ("alloc", "s(1.3)", "append"),
    ("alloc", "s(1.3)", "append"),
    ("alloc", "s(1.3)", "append"),
    ("alloc", "s(1.4)", "append"),
    ("free", "p(1.3.13)"),
    ("alloc", "s(1.3)", "append"),
    ("alloc", "s(1.3)", "compact"),
    ("free", "p(1.3.20)"),
    ("free", "p(1.3.21)"),
    ("create_store",),
    ("destroy", "s(1.4)"),
    ("remove", "s(1.4)"),
]


def describe(op: tuple) -> str:
    if op[0] == "create_store":
        return "create a store"
    if op[0] == "alloc":
        return f"allocate a page in {op[1]}, {op[2]}"
    if op[0] == "free":
        return f"free {op[1]}"
    return f"destroy {op[1]}: mark it for deletion" if op[0] == "destroy" else f"remove {op[1]}: free all its extents"


def apply_op(volume: Volume, step: int, op: tuple) -> Any:
    """Apply operation ``op`` (step ``step``, from 1) to ``volume``; return what the volume returned."""
    try:
        if op[0] == "create_store":
            return volume.create_store()
        if op[0] == "free":
            return volume.free_page(parse_typed(op[1], PageId))
        store = parse_typed(op[1], StoreId)
        if op[0] == "alloc":
            if not isinstance(op[2], str) or op[2] not in MODES:
                raise UserError(f"the mode is 'append' or 'compact', not {op[2]!r}")
            return volume.alloc_page(store, MODES[op[2]])
        return volume.destroy_store(store) if op[0] == "destroy" else volume.remove_store(store)
    except (UserError, VolumeFullError) as error:
        raise script_error(step, op, str(error)) from None


def run_script(volume: Volume, script: Sequence[Sequence[object]] = SCRIPT) -> list[Any]:
    """Apply every operation of ``script`` (checked first) to ``volume``; return their results."""
    return [apply_op(volume, step, op) for step, op in enumerate(checked(script, OPS), 1)]


def _clock() -> float:
    return 1_700_000_000.0


def new_demo_volume(frames: int = 8) -> tuple[SimDisk, LogManager, BufferPool, Volume]:
    disk = SimDisk("volume-demo")
    log = LogManager(disk, clock=_clock)
    bp = BUFFER_POOL.call(frames, page_size=PAGE_SIZE, log=log)
    volume = Volume.format(disk, bp, log, num_pages=NUM_PAGES, ext_sz=EXT_SZ)
    return disk, log, bp, volume


def brief_entry(entry: LogEntry) -> str:
    """One short line per page-store entry: LSN, type, page, the fields that matter."""
    values = dict(entry.values)
    page = PageId(values.pop("vol"), values.pop("store"), values.pop("page"))
    txn = values.pop("txn_id", 0)
    values.pop("txn_prev_lsn", None)
    if "exts" in values:
        values["exts"] = [item["ext"] for item in values["exts"]]
    if "pmap" in values:
        values["pmap"] = f"{values['pmap']:0{EXT_SZ}b}"[::-1]  # page 0 of the extent first, like the dumps
    if "image" in values:  # a full page image: its size, not its bytes
        values["image"] = f"{len(values['image'])} bytes"
    fields = " ".join(f"{k}={v}" for k, v in values.items())
    return f"{entry.lsn}  {entry.type_name:<18} on {page}  {fields}" + (f"  txn={txn}" if txn else "")


def touched_extents(entries: list[LogEntry]) -> tuple[int, ...]:
    found: set[int] = set()
    for entry in entries:
        values = entry.values
        found.update(item["ext"] for item in values.get("exts", []))
        if "ext" in values:
            found.add(values["ext"])
        if entry.type_name == "store_operation" and values["op"] == "set_first_ext" and values["value"]:
            found.add(values["value"])
    return tuple(sorted(found))


@dataclass(frozen=True)
class VolumeStep:
    step: int
    description: str
    result: str
    entries: tuple[str, ...]
    extent_map: ExtentMap
    extent_dump: str
    figure: Figure

    def summary(self) -> str:
        lines = [f"step {self.step}: {self.description} -> {self.result}",
                 f"log entries written: {len(self.entries)}"]
        return "\n".join(lines + [f"  {line}" for line in self.entries])


def volume_step(step: int, script: Sequence[Sequence[object]] = SCRIPT) -> VolumeStep:
    """The volume after the first ``step`` operations of ``script`` (0: just formatted)."""
    ops = checked(script, OPS)
    if not 0 <= step <= len(ops):
        raise ValueError(f"step must be between 0 and {len(ops)}, not {step}")
    _, log, _, volume = new_demo_volume()
    result: Any = "formatted"
    entries: list[LogEntry] = []
    for k, op in enumerate(ops[:step], 1):
        before = log.last_lsn
        result = apply_op(volume, k, op)
        entries = [e for e in log.scan() if e.lsn > before]
    description = describe(ops[step - 1]) if step else "format a volume of 64 pages, 4 pages per extent"
    layout = extent_map_layout(volume)
    result_text = "done" if result is None else (", ".join(map(str, result)) if isinstance(result, list) else str(result))
    figure = draw_extent_map(layout, title=f"step {step}: {description}", highlight=touched_extents(entries))
    return VolumeStep(step, description, result_text, tuple(brief_entry(e) for e in entries), layout,
                      volume.dump_extents(only_used=True), figure)
