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

The function is pure: it reads frame states and returns the decision
(victim, where the hand rests, which reference bits to clear, the steps it
took). The buffer pool applies it; notebooks and the exercise replay it.
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
    steps: tuple[ClockStep, ...]


def choose_victim(frames: Sequence[ClockFrame], hand: int) -> ClockChoice:
    """Sweep from ``hand`` by the rules above; see the module documentation.

    ``frames`` may be anything with ``pinned``, ``dirty`` and ``referenced``
    attributes (the buffer pool passes its control blocks).
    """
    n = len(frames)
    if n == 0:
        raise ValueError("a buffer pool without frames has no victim")
    if not 0 <= hand < n:
        raise ValueError(f"hand {hand} is outside 0..{n - 1}")
    referenced = [f.referenced for f in frames]
    cleared: list[int] = []
    steps: list[ClockStep] = []
    for pass_no in range(1, PASSES + 1):
        for _ in range(n):
            index = hand
            hand = (hand + 1) % n
            frame = frames[index]
            if frame.pinned:
                steps.append(ClockStep(pass_no, index, "pinned"))
                continue
            if referenced[index] and pass_no < PASSES:
                referenced[index] = False
                cleared.append(index)
                steps.append(ClockStep(pass_no, index, "ref cleared"))
                continue
            if frame.dirty and pass_no == 1:
                steps.append(ClockStep(pass_no, index, "dirty, skipped"))
                continue
            steps.append(ClockStep(pass_no, index, "victim"))
            return ClockChoice(index, hand, tuple(cleared), pass_no, tuple(steps))
    return ClockChoice(None, hand, tuple(cleared), PASSES, tuple(steps))


def exercise_form(frames: Sequence[ClockFrame], hand: int) -> tuple[int | None, int, list[int]]:
    """:func:`choose_victim` in exercise 04a's form: ``frames`` as (pinned, dirty, referenced) tuples in,
    ``(victim, hand_after, cleared)`` out (``exercises/04a_clock_replacement/reference.py``)."""
    choice = choose_victim([ClockFrame(*frame) for frame in frames], hand)
    return choice.victim, choice.hand, list(choice.cleared)


def _from_exercise(hook: impl.Hook, student: Callable) -> Callable[[Sequence[ClockFrame], int], ClockChoice]:
    """A student's ``choose_victim`` (exercise 04a's form) as the buffer pool's: a :class:`ClockChoice`
    whose steps are the cleared bits and the victim (pass 0: the student's function does not say)."""
    def choose(frames: Sequence[ClockFrame], hand: int) -> ClockChoice:
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
        return ClockChoice(victim, after, cleared, 0, tuple(steps))
    return choose


VICTIM = impl.register("04a_clock_replacement", "choose_victim", choose_victim, _from_exercise)
