"""The volume demonstration of ``notebooks/03_volume_extents.ipynb`` and the tour.

A tiny volume (64 pages of 512 bytes, 4 pages per extent: 16 extents, store
0 in extent 0, stores 1 and 2 in extents 1 and 2) on a simulated disk, and a
script of volume operations, one per step. :func:`volume_step` is the pure
function behind the notebook's slider: it formats a fresh volume, replays
the script up to step ``k``, and returns the extent map after it, the log
entries that step wrote, and the picture (the extents the step touched
outlined in red).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from matplotlib.figure import Figure

from minidb.io import SimDisk
from minidb.log import LogEntry, LogManager
from minidb.pagestore import AllocMode, BufferPool, PageId, StoreId, Volume
from minidb.viz.extents import ExtentMap, draw_extent_map, extent_map_layout

NUM_PAGES, EXT_SZ, PAGE_SIZE = 64, 4, 512
S3, S4, S5 = StoreId(1, 3), StoreId(1, 4), StoreId(1, 5)
APPEND, COMPACT = AllocMode.APPEND, AllocMode.COMPACT

# (what the step does, the call) -- each call gets the volume
SCRIPT: list[tuple[str, Any]] = [
    ("create store s(1.3)", lambda v: v.create_store()),
    ("create store s(1.4)", lambda v: v.create_store()),
    ("allocate a page in s(1.3), append", lambda v: v.alloc_page(S3, APPEND)),
    ("allocate a page in s(1.3), append", lambda v: v.alloc_page(S3, APPEND)),
    ("allocate a page in s(1.3), append", lambda v: v.alloc_page(S3, APPEND)),
    ("allocate a page in s(1.3), append", lambda v: v.alloc_page(S3, APPEND)),
    ("allocate a page in s(1.3), append: its extent is full", lambda v: v.alloc_page(S3, APPEND)),
    ("allocate a page in s(1.4), append", lambda v: v.alloc_page(S4, APPEND)),
    ("free p(1.3.13)", lambda v: v.free_page(PageId(1, 3, 13))),
    ("allocate a page in s(1.3), append: past the last allocated page", lambda v: v.alloc_page(S3, APPEND)),
    ("allocate a page in s(1.3), compact: the lowest reserved page", lambda v: v.alloc_page(S3, COMPACT)),
    ("free p(1.3.20)", lambda v: v.free_page(PageId(1, 3, 20))),
    ("free p(1.3.21): the last page of x(1.5)", lambda v: v.free_page(PageId(1, 3, 21))),
    ("create store s(1.5)", lambda v: v.create_store()),
    ("destroy s(1.4): mark it for deletion", lambda v: v.destroy_store(S4)),
    ("remove s(1.4): free all its extents", lambda v: v.remove_store(S4)),
]
STEPS = len(SCRIPT)


def _clock() -> float:
    return 1_700_000_000.0


def new_demo_volume(frames: int = 8) -> tuple[SimDisk, LogManager, BufferPool, Volume]:
    disk = SimDisk("volume-demo")
    log = LogManager(disk, clock=_clock)
    bp = BufferPool(frames, page_size=PAGE_SIZE, log=log)
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


def volume_step(step: int) -> VolumeStep:
    """The volume after the first ``step`` operations of the script (0: just formatted)."""
    if not 0 <= step <= STEPS:
        raise ValueError(f"step must be between 0 and {STEPS}, not {step}")
    _, log, _, volume = new_demo_volume()
    result: Any = "formatted"
    entries: list[LogEntry] = []
    for k in range(step):
        before = log.last_lsn
        result = SCRIPT[k][1](volume)
        entries = [e for e in log.scan() if e.lsn > before]
    description = SCRIPT[step - 1][0] if step else "format a volume of 64 pages, 4 pages per extent"
    layout = extent_map_layout(volume)
    result_text = "done" if result is None else (", ".join(map(str, result)) if isinstance(result, list) else str(result))
    figure = draw_extent_map(layout, title=f"step {step}: {description}", highlight=touched_extents(entries))
    return VolumeStep(step, description, result_text, tuple(brief_entry(e) for e in entries), layout,
                      volume.dump_extents(only_used=True), figure)
