"""The slotted-page demonstration of ``notebooks/02_pages.ipynb``.

A 512-byte file page goes through a short script of inserts and frees by
numbered transactions (tids grow with age: 1 is the oldest). Each step says
who acts, what the oldest active transaction is (the page needs it to know
when reserved space becomes free) and what happens. :func:`page_step` is the
pure function behind the notebook's slider: it replays the script from a
fresh page up to step ``k`` and returns the page, its picture and what the
step did.

The script (records are the bytes of short strings, padded)::

    1  T1 inserts alice (40 B)          slot 0
    2  T1 inserts bob (60 B)            slot 1
    3  T1 inserts carol (30 B)          slot 2      T1 commits after this step
    4  T2 frees bob                     slot 1 reserved: nrsvd 60, rsvd_tid 2
    5  T3 inserts a 330-byte record     refused: 310 usable for T3, not 334
    6  T2 inserts dave (50 B)           slot 3, using its own reserved bytes
    7  T4 inserts erin (20 B)           T2 has committed: the reservation is void, slot 1 reused
    8  T4 frees carol                   slot 2 reserved for T4; a hole between bob's and dave's bytes
    9  T4 inserts frank (250 B)         T4 may use its own reserved bytes; fits after coalescing
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.figure import Figure

from minidb.errors import MinidbError
from minidb.pagestore import PageId, PageTag, SlottedPage, SpaceUser
from minidb.viz.pages import PageLayout, draw_page, page_layout

PAGE_SIZE = 512
PID = PageId(1, 3, 12)


def _record(name: str, size: int) -> bytes:
    return name.encode().ljust(size, b".")


# (description, tid, oldest active tid, action, argument)
SCRIPT = [
    ("T1 inserts alice (40 B)", 1, 1, "insert", _record("alice", 40)),
    ("T1 inserts bob (60 B)", 1, 1, "insert", _record("bob", 60)),
    ("T1 inserts carol (30 B), then commits", 1, 1, "insert", _record("carol", 30)),
    ("T2 frees bob's slot 1: its 60 bytes stay reserved for T2", 2, 2, "remove", 1),
    ("T3 tries to insert 330 bytes while T2 is active", 3, 2, "insert", _record("big", 330)),
    ("T2 inserts dave (50 B), using the space it reserved", 2, 2, "insert", _record("dave", 50)),
    ("T2 has committed; T4 inserts erin (20 B): slot 1 is free again", 4, 3, "insert", _record("erin", 20)),
    ("T4 frees carol's slot 2: reserved for T4 until it ends", 4, 4, "remove", 2),
    ("T4 inserts frank (250 B): it fits only after coalescing", 4, 4, "insert", _record("frank", 250)),
]
STEPS = len(SCRIPT)


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


def apply_step(page: SlottedPage, step: int) -> str:
    """Apply step ``step`` (1-based) of the script to ``page``; return what happened."""
    _, tid, oldest, action, argument = SCRIPT[step - 1]
    user = SpaceUser(tid=tid, oldest_active=oldest)
    try:
        if action == "insert":
            holes_before = page.nfree - page.contiguous_free
            slot = page.insert(argument, user)
            coalesced = " after coalescing the holes" if holes_before and page.nfree == page.contiguous_free else ""
            return f"slot {slot} at offset {page.slot_entry(slot)[0]}{coalesced}"
        data = page.remove(argument, user)
        state = page.slot_state(argument)
        return f"slot {argument} freed ({len(data)} B), now {state}"
    except MinidbError as e:
        return f"refused: {e}"


def page_step(step: int) -> PageStep:
    """The page after the first ``step`` steps of the script (0: freshly formatted)."""
    if not 0 <= step <= STEPS:
        raise ValueError(f"step must be between 0 and {STEPS}, not {step}")
    page = fresh_page()
    outcome = "formatted: an empty file page"
    for k in range(1, step + 1):
        outcome = apply_step(page, k)
    description = SCRIPT[step - 1][0] if step else "format the page"
    layout = page_layout(page)
    figure = draw_page(layout, title=f"step {step}: {description}")
    return PageStep(step, description, outcome, layout, page, figure)
