"""Exercise 04a: choose the buffer pool's victim frame by Shore's clock rules.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/04a_clock_replacement --exercise-impl=student
"""

from __future__ import annotations


def choose_victim(frames: list[tuple[bool, bool, bool]], hand: int) -> tuple[int | None, int, list[int]]:
    """Sweep the frames like a clock hand and choose the frame to replace.

    ``frames[i]`` is ``(pinned, dirty, referenced)`` for frame ``i``;
    ``hand`` is the index of the next frame the hand examines.

    Return ``(victim, hand_after, cleared)``:

    - ``victim``: the index of the chosen frame, or None if every frame is pinned;
    - ``hand_after``: where the hand rests (just past the victim; after three
      fruitless passes it is back where it started);
    - ``cleared``: the indexes of the frames whose reference bit the hand
      cleared, in the order it cleared them.

    Do not change ``frames``. See README.md for the exact rules.
    """
    raise NotImplementedError("choose_victim: your code here")
