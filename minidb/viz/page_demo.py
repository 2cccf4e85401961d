"""The slotted-page demonstration of ``notebooks/02_pages.ipynb``.

A 512-byte file page goes through a *script* (:mod:`minidb.viz.script`) of
inserts, frees, commits and rollbacks by transactions named ``"T1"``,
``"T2"``, ...: a transaction begins when the script first names it, and its
number says its age (1 is the oldest), so a transaction that begins later
must have a larger number. The oldest active transaction, which the page
needs to know when reserved space becomes free, is the lowest-numbered one
that has begun and not ended. :func:`page_step` is the pure function behind
the notebook's slider: it replays the script from a fresh page up to step
``k`` and returns the page, its picture and what the step did.

The default script, :data:`SCRIPT` (records are the bytes of short names,
padded with dots to their size)::

     1  T1 inserts alice (40 B)          slot 0
     2  T1 inserts bob (60 B)            slot 1
     3  T1 inserts carol (30 B)          slot 2
     4  T1 commits
     5  T2 frees bob's slot 1            slot 1 reserved: nrsvd 60, rsvd_tid 2
     6  T3 inserts big (330 B)           refused: 310 usable for T3, not 334
     7  T2 inserts dave (50 B)           slot 3, using its own reserved bytes
     8  T2 commits
     9  T4 inserts erin (20 B)           the oldest active is T3: T2's reservation is void, slot 1 reused
    10  T4 frees carol's slot 2          slot 2 reserved for T4; a hole between bob's and dave's bytes
    11  T4 inserts frank (250 B)         T4 uses its own 30 reserved bytes; fits after coalescing

A rollback (``("abort", "T4")``) undoes the transaction's changes newest
first, as a rolling-back transaction: its inserts are freed (not reserved),
the records it freed come back in their own slots.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from matplotlib.figure import Figure

from minidb.errors import MinidbError
from minidb.pagestore import PageId, PageTag, SlottedPage, SpaceUser
from minidb.pagestore.pages.page import FOOTER_SIZE, HEADER_SIZE, SLOT_SIZE
from minidb.viz.pages import PageLayout, draw_page, page_layout
from minidb.viz.script import Op, checked, op_table, script_error

PAGE_SIZE = 512
PID = PageId(1, 3, 12)
MAX_RECORD = PAGE_SIZE - HEADER_SIZE - FOOTER_SIZE - SLOT_SIZE

OPS = op_table(
    Op("insert", ("txn", "name", "size"), "the transaction inserts a record of size bytes: the name, padded with dots"),
    Op("remove", ("txn", "slot"), "the transaction frees the record in that slot; the space stays reserved for it"),
    Op("commit", ("txn",), "the transaction ends"),
    Op("abort", ("txn",), "the transaction rolls back its inserts and frees on this page, newest first, and ends"),
)
SCRIPT: list[tuple] = [
    ("insert", "T1", "alice", 40),
    ("insert", "T1", "bob", 60),
    ("insert", "T1", "carol", 30),
    ("commit", "T1"),
    ("remove", "T2", 1),
    ("insert", "T3", "big", 330),
    ("insert", "T2", "dave", 50),
    ("commit", "T2"),
    ("insert", "T4", "erin", 20),
    ("remove", "T4", 2),
    ("insert", "T4", "frank", 250),
]


@dataclass(frozen=True)
class PageStep:
    step: int
    description: str
    outcome: str
    layout: PageLayout
    page: SlottedPage
    figure: Figure

    def summary(self) -> str:
        return f"step {self.step}: {self.description}\n  -> {self.outcome}"


def fresh_page() -> SlottedPage:
    page = SlottedPage(bytearray(PAGE_SIZE))
    page.format(PID, PageTag.FILE)
    return page


def record(name: str, size: int) -> bytes:
    return name.encode().ljust(size, b".")


@dataclass
class _Run:
    """The page and the transactions of a script being replayed."""

    page: SlottedPage = field(default_factory=fresh_page)
    active: dict[int, list[tuple]] = field(default_factory=dict)  # tid -> its undo list, oldest first
    ended: dict[int, str] = field(default_factory=dict)  # tid -> "committed" | "rolled back"
    names: dict[int, str] = field(default_factory=dict)  # slot -> the name of its record

    def user(self, tid: int, rolling_back: bool = False) -> SpaceUser:
        return SpaceUser(tid=tid, oldest_active=min(self.active), rolling_back=rolling_back)


def _tid(step: int, op: tuple, run: _Run) -> int:
    """The transaction ``op`` names, begun now if it is new; a script error if it cannot act."""
    match = re.fullmatch(r"T([1-9]\d*)", op[1]) if isinstance(op[1], str) else None
    if not match:
        raise script_error(step, op, f"a transaction is named 'T1', 'T2', ..., not {op[1]!r}")
    tid = int(match.group(1))
    if tid in run.ended:
        raise script_error(step, op, f"{op[1]} has already {run.ended[tid]}")
    if tid not in run.active:
        if op[0] in ("commit", "abort"):
            raise script_error(step, op, f"no transaction {op[1]} has begun")
        youngest = max([*run.active, *run.ended], default=0)
        if tid < youngest:
            raise script_error(step, op, f"{op[1]} begins after T{youngest}: number transactions in the order "
                                         "they begin (the number is the age)")
        run.active[tid] = []
    return tid


def _insert(step: int, op: tuple, run: _Run, tid: int) -> str:
    _, txn, name, size = op
    if not isinstance(name, str) or not name or not isinstance(size, int) \
            or not len(name.encode()) <= size <= MAX_RECORD:
        raise script_error(step, op, f"insert takes a name and a size in bytes, at least the name's length "
                                     f"and at most {MAX_RECORD}")
    page = run.page
    holes_before = page.nfree - page.contiguous_free
    try:
        slot = page.insert(record(name, size), run.user(tid))
    except MinidbError as error:
        return f"refused: {error}"
    run.active[tid].append(("insert", slot))
    run.names[slot] = name
    coalesced = " after coalescing the holes" if holes_before and page.nfree == page.contiguous_free else ""
    return f"slot {slot} at offset {page.slot_entry(slot)[0]}{coalesced}"


def _remove(step: int, op: tuple, run: _Run, tid: int) -> str:
    slot = op[2]
    if not isinstance(slot, int) or not run.page.is_in_use(slot):
        raise script_error(step, op, f"slot {slot!r} holds no record (slots in use: "
                                     f"{[s for s, _ in run.page.records()]})")
    data = run.page.remove(slot, run.user(tid))
    run.active[tid].append(("remove", slot, data))
    return f"slot {slot} freed ({len(data)} B), now {run.page.slot_state(slot)}"


def _abort(run: _Run, tid: int) -> str:
    user = run.user(tid, rolling_back=True)
    undone = []
    for action in reversed(run.active[tid]):
        if action[0] == "insert":
            run.page.remove(action[1], user)
            undone.append(f"{run.names[action[1]]} removed from slot {action[1]}")
        else:
            run.page.insert_at(action[1], action[2], user)
            undone.append(f"{run.names[action[1]]} back in slot {action[1]}")
    return ", ".join(undone) or "nothing to undo on this page"


def _describe(op: tuple, run: _Run) -> str:
    if op[0] == "insert":
        return f"{op[1]} inserts {op[2]} ({op[3]} B)"
    if op[0] == "remove":
        owner = run.names.get(op[2]) if isinstance(op[2], int) and run.page.is_in_use(op[2]) else None
        return f"{op[1]} frees {owner}'s slot {op[2]}" if owner else f"{op[1]} frees slot {op[2]}"
    return f"{op[1]} {'commits' if op[0] == 'commit' else 'rolls back'}"


def apply_step(run: _Run, step: int, op: tuple) -> tuple[str, str]:
    """Apply operation ``op`` (step ``step``, from 1) to the run; return (description, outcome)."""
    tid = _tid(step, op, run)
    description = _describe(op, run)
    if op[0] == "insert":
        outcome = _insert(step, op, run, tid)
    elif op[0] == "remove":
        outcome = _remove(step, op, run, tid)
    else:
        outcome = "committed" if op[0] == "commit" else "rolled back: " + _abort(run, tid)
        del run.active[tid]
        run.ended[tid] = "committed" if op[0] == "commit" else "rolled back"
    return description, outcome


def page_step(step: int, script: Sequence[Sequence[object]] = SCRIPT) -> PageStep:
    """The page after the first ``step`` operations of ``script`` (0: freshly formatted)."""
    ops = checked(script, OPS)
    if not 0 <= step <= len(ops):
        raise ValueError(f"step must be between 0 and {len(ops)}, not {step}")
    run = _Run()
    description, outcome = "format the page", "formatted: an empty file page"
    for k, op in enumerate(ops[:step], 1):
        description, outcome = apply_step(run, k, op)
    layout = page_layout(run.page)
    figure = draw_page(layout, title=f"step {step}: {description}")
    return PageStep(step, description, outcome, layout, run.page, figure)
