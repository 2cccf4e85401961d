"""Clock replacement: which buffer frame gives up its page for a new one.

When a page is fixed that is not in the buffer pool, the buffer manager
looks for a free frame, and if there is none it chooses a *victim*. It
sweeps the frames like the hand of a clock, noting and clearing *reference
bits* (set each time a frame's page is fixed): a cheap way to get close to
LRU without LRU's bookkeeping. Following Shore:

- **pass 1** considers only *clean* frames: a dirty victim must be written
  first, which is slower, so clean ones are preferred;
- **pass 2** considers dirty frames too;
- **pass 3** (and later) considers *any* unpinned frame, referenced or not.

A frame that is *pinned* (fixed by someone) is never a victim, and the hand
leaves its reference bit alone. In passes 1 and 2, the hand clears the
reference bit of every unpinned frame it passes that has it set, and moves
on: that frame gets a second chance. The hand starts where the last sweep
stopped and rests just past the victim.

Worked example, four frames, the hand at frame 0::

    frame        0      1      2      3
    pinned       no     yes    no     no
    dirty        no     no     yes    no
    referenced   yes    no     no     yes

pass 1: frame 0 is referenced (bit cleared), frame 1 pinned, frame 2 dirty
(skipped in pass 1), frame 3 referenced (bit cleared); pass 2: frame 0,
clean, unreferenced now: the victim. The hand rests at frame 1; bits of
frames 0 and 3 were cleared. :func:`choose_victim` returns exactly that.

**What a victim costs.** A miss must not cost time in proportion to the
pool's size. The sweep reads the frames where they are and copies nothing:
it needs no copy of the reference bits, because pass 1 examines every
frame, so by pass 2 every unpinned frame is unreferenced (its bit was either
clear or cleared), and passes 2 and 3 need not look at the bits at all. Each
frame the hand examines is then one of:

- *referenced*: its bit is cleared. A fix set that bit, so these steps are
  paid for by fixes, at most one per fix;
- *dirty, skipped*: at most ``dirty_skips`` per sweep (below);
- *pinned*: bounded by the frames fixed at the moment, few in practice;
- *the victim*: one per sweep.

So a sweep examines a constant number of frames, amortised, whatever the
pool's size. Shore's pass 1 passes over every dirty frame; in a pool that is
all dirty (a bulk load into a pool smaller than its tree) that is the whole
pool for every miss, before pass 2 takes the frame the hand started at. The
buffer pool therefore bounds it: pass 1 passes over at most ``dirty_skips``
dirty frames, then takes the next unreferenced dirty frame as the victim,
still in pass 1 (the pool writes it, and cleans the dirty frames just ahead of
the hand with it: :mod:`.bufferpool`). A pool of at most ``dirty_skips``
frames never reaches the bound, so it sweeps exactly by Shore's rule.
Without ``dirty_skips`` (exercise 04a's form) there is no bound. Every pinned
frame is the one case that sweeps the whole pool: three passes find no
victim, and the hand is back where it started.

Worked example, ``dirty_skips=2``, six frames, all dirty and unreferenced,
the hand at 0: frames 0 and 1 are passed over, frame 2 is the victim in pass
1; the hand rests at 3. Three frames examined; Shore's rule would examine six
and then take frame 0 in pass 2.

The function is pure: it reads frame states and returns the decision
(victim, where the hand rests, which reference bits to clear, how many frames
it examined and, when asked with ``record``, a :class:`ClockStep` for each).
The buffer pool applies it, and asks for the steps only when its trace is on
(the pictures' pool, notebook 04); notebooks and the exercise replay it.
The buffer pool calls it through ``VICTIM``, an exercise hook
(:mod:`minidb.impl`): under ``MINIDB_IMPL=student`` exercise
04a's ``choose_victim`` chooses instead (its answer has no per-step record:
its steps are the cleared bits and the victim, in pass 0).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from minidb import impl

PASSES = 3


@dataclass(frozen=True)
class ClockFrame:
    """What the clock needs to know about one frame."""

    pinned: bool
    dirty: bool
    referenced: bool


@dataclass(frozen=True)
class ClockStep:
    """One frame examined: in which pass, and what the hand did."""

    pass_no: int
    frame: int
    action: str  # "pinned" | "ref cleared" | "dirty, skipped" | "victim"

    def __str__(self) -> str:
        return f"pass {self.pass_no}: frame {self.frame} {self.action}"


@dataclass(frozen=True)
class ClockChoice:
    victim: int | None  # None: every frame is pinned
    hand: int  # where the hand rests afterwards
    cleared: tuple[int, ...]  # frames whose reference bit was cleared, in order
    passes: int  # the pass that found the victim (PASSES if none did)
    steps: tuple[ClockStep, ...]  # one per frame examined; empty unless the caller asked for them (record)
    examined: int = 0  # how many frames the hand examined (the length of steps, recorded or not)


def choose_victim(frames: Sequence[ClockFrame], hand: int, dirty_skips: int | None = None,
                  record: bool = True) -> ClockChoice:
    """Sweep from ``hand`` by the rules above; see the module documentation.

    ``frames`` may be anything with ``pinned``, ``dirty`` and ``referenced``
    attributes (the buffer pool passes its control blocks); they are read,
    never changed. ``dirty_skips``: how many dirty frames pass 1 may pass over
    (None: as many as there are, Shore's rule and exercise 04a's). ``record``:
    make a :class:`ClockStep` of every frame examined (pictures and traces);
    the buffer pool asks for them only when someone will read them.
    """
    n = len(frames)
    if n == 0:
        raise ValueError("a buffer pool without frames has no victim")
    if not 0 <= hand < n:
        raise ValueError(f"hand {hand} is outside 0..{n - 1}")
    skips_left = n if dirty_skips is None else dirty_skips
    cleared: list[int] = []
    steps: list[ClockStep] = []
    examined = 0
    for pass_no in range(1, PASSES + 1):
        for _ in range(n):
            index = hand
            hand = (hand + 1) % n
            examined += 1
            frame = frames[index]
            if frame.pinned:
                action = "pinned"
            elif pass_no == 1 and frame.referenced:  # after pass 1, no unpinned frame is referenced
                cleared.append(index)
                action = "ref cleared"
            elif pass_no == 1 and frame.dirty and skips_left > 0:
                skips_left -= 1
                action = "dirty, skipped"
            else:
                if record:
                    steps.append(ClockStep(pass_no, index, "victim"))
                return ClockChoice(index, hand, tuple(cleared), pass_no, tuple(steps), examined)
            if record:
                steps.append(ClockStep(pass_no, index, action))
    return ClockChoice(None, hand, tuple(cleared), PASSES, tuple(steps), examined)


def exercise_form(frames: Sequence[ClockFrame], hand: int) -> tuple[int | None, int, list[int]]:
    """:func:`choose_victim` in exercise 04a's form: ``frames`` as (pinned, dirty, referenced) tuples in,
    ``(victim, hand_after, cleared)`` out (``exercises/04a_clock_replacement/reference.py``)."""
    choice = choose_victim([ClockFrame(*frame) for frame in frames], hand)
    return choice.victim, choice.hand, list(choice.cleared)


def _from_exercise(hook: impl.Hook, student: Callable) -> Callable[..., ClockChoice]:
    """A student's ``choose_victim`` (exercise 04a's form) as the buffer pool's: a :class:`ClockChoice`
    whose steps are the cleared bits and the victim (pass 0: the student's function does not say). The
    student's sweep follows Shore's rule whole: it has no bound on dirty frames passed over, and it is
    given every frame (an O(n) copy per miss: the exercise is about the decision, not its cost)."""
    def choose(frames: Sequence[ClockFrame], hand: int, dirty_skips: int | None = None,
               record: bool = True) -> ClockChoice:
        n = len(frames)
        answer = student([(bool(f.pinned), bool(f.dirty), bool(f.referenced)) for f in frames], hand)
        try:
            victim, after, cleared = answer
            cleared = tuple(cleared)
        except (TypeError, ValueError):
            raise hook.wrong(f"returned {answer!r}, not (victim, hand_after, cleared)") from None
        for name, index in [("victim", victim), ("hand_after", after), *(("a cleared frame", i) for i in cleared)]:
            if not (index is None and name == "victim") and not (isinstance(index, int) and 0 <= index < n):
                raise hook.wrong(f"returned {name} {index!r}, not a frame index 0..{n - 1}")
        if victim is not None and frames[victim].pinned:
            raise hook.wrong(f"chose frame {victim}, which is pinned")
        steps = [ClockStep(0, i, "ref cleared") for i in cleared] + ([ClockStep(0, victim, "victim")] if victim is not None else [])
        return ClockChoice(victim, after, cleared, 0, tuple(steps), len(steps))
    return choose


VICTIM = impl.register("04a_clock_replacement", "choose_victim", choose_victim, _from_exercise)
