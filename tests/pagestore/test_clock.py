"""Clock replacement: the pure victim choice, pass by pass."""

import random

import pytest

from minidb.pagestore.buffer.clock import ClockFrame, choose_victim


def frames(spec: str) -> list[ClockFrame]:
    """One letter group per frame: p pinned, d dirty, r referenced, - nothing (e.g. "r p d r")."""
    return [ClockFrame("p" in f, "d" in f, "r" in f) for f in spec.split()]


def test_module_worked_example():
    choice = choose_victim(frames("r p d r"), hand=0)
    assert choice.victim == 0 and choice.hand == 1 and choice.passes == 2
    assert choice.cleared == (0, 3)
    assert [str(s) for s in choice.steps] == [
        "pass 1: frame 0 ref cleared", "pass 1: frame 1 pinned", "pass 1: frame 2 dirty, skipped",
        "pass 1: frame 3 ref cleared", "pass 2: frame 0 victim",
    ]


def test_first_pass_takes_the_first_clean_unreferenced_frame_from_the_hand():
    choice = choose_victim(frames("- d - -"), hand=1)
    assert (choice.victim, choice.hand, choice.passes, choice.cleared) == (2, 3, 1, ())


def test_dirty_frames_only_in_the_second_pass():
    choice = choose_victim(frames("dr d p dr"), hand=0)
    # pass 1: 0 cleared, 1 dirty, 2 pinned, 3 cleared; pass 2: frame 0 (dirty, now unreferenced)
    assert (choice.victim, choice.passes, choice.cleared) == (0, 2, (0, 3))


def test_all_referenced_clean_frames_lose_their_bits_then_the_hand_takes_the_first():
    choice = choose_victim(frames("r r r"), hand=2)
    assert (choice.victim, choice.hand, choice.cleared, choice.passes) == (2, 0, (2, 0, 1), 2)


def test_every_frame_pinned_means_no_victim():
    choice = choose_victim(frames("p pr p"), hand=1)
    assert choice.victim is None and choice.hand == 1 and choice.cleared == ()
    assert len(choice.steps) == 9  # three passes over three frames


def test_pinned_frames_keep_their_reference_bits():
    choice = choose_victim(frames("pr -"), hand=0)
    assert choice.victim == 1 and choice.cleared == ()


def test_a_scripted_sequence_of_victims():
    """Four frames, the hand carried from sweep to sweep, bits set again by fixes."""
    state = frames("r d r -")
    hand, victims = 0, []
    for refix in (None, 3, 0, None):
        choice = choose_victim(state, hand)
        hand = choice.hand
        victims.append(choice.victim)
        state = [ClockFrame(f.pinned, f.dirty and i != choice.victim, f.referenced and i not in choice.cleared)
                 for i, f in enumerate(state)]
        # the victim's frame now holds a new, just-fixed (referenced, clean) page
        state[choice.victim] = ClockFrame(False, False, True)
        if refix is not None:
            state[refix] = ClockFrame(state[refix].pinned, state[refix].dirty, True)
    # 1: bits of 0 and 2 cleared, 1 dirty, 3 clean -> 3. 2: frame 0 lost its bit -> 0.
    # 3: 1 dirty, 2 clean -> 2. 4: from frame 3 every clean frame is referenced; pass 1 clears
    # 3, 0, 2 (1 is dirty), pass 2 finds frame 3 first: the dirty frame 1 survives all four.
    assert victims == [3, 0, 2, 3]


@pytest.mark.parametrize("bad", [-1, 4])
def test_a_hand_outside_the_pool_is_refused(bad):
    with pytest.raises(ValueError, match="hand"):
        choose_victim(frames("- - - -"), bad)


class CountingFrames(list):
    """Frames that count how many times the sweep reads one."""

    reads = 0

    def __getitem__(self, index):
        self.reads += 1
        return super().__getitem__(index)

    def __iter__(self):
        for index in range(len(self)):
            yield self[index]


def test_a_sweep_reads_only_the_frames_it_examines():
    """No copy of every frame's bit: a victim right at the hand costs one read in a pool of 100,000."""
    pool = CountingFrames(frames("r " * 50_000 + "- " * 50_000))
    choice = choose_victim(pool, hand=70_000)
    assert (choice.victim, choice.hand) == (70_000, 70_001)
    assert [str(s) for s in choice.steps] == ["pass 1: frame 70000 victim"]
    assert pool.reads == 1
    assert choose_victim(pool, hand=70_000, record=False).steps == ()  # the pool's normal path: no records


def test_pass_1_passes_over_at_most_dirty_skips_dirty_frames():
    """The module's worked example: six dirty frames, dirty_skips=2."""
    choice = choose_victim(frames("d d d d d d"), hand=0, dirty_skips=2)
    assert (choice.victim, choice.hand, choice.passes, choice.examined) == (2, 3, 1, 3)
    assert [str(s) for s in choice.steps] == ["pass 1: frame 0 dirty, skipped", "pass 1: frame 1 dirty, skipped",
                                              "pass 1: frame 2 victim"]
    unbounded = choose_victim(frames("d d d d d d"), hand=0)  # Shore's rule: round once, then frame 0
    assert (unbounded.victim, unbounded.passes, unbounded.examined) == (0, 2, 7)


def test_a_pool_no_larger_than_dirty_skips_sweeps_by_shores_rule():
    rng = random.Random(4)
    for _ in range(300):
        n = rng.randint(1, 6)
        state = [ClockFrame(rng.random() < 0.2, rng.random() < 0.6, rng.random() < 0.5) for _ in range(n)]
        hand = rng.randrange(n)
        bounded, shore = choose_victim(state, hand, dirty_skips=n), choose_victim(state, hand)
        assert bounded == shore
        assert shore.examined == len(shore.steps)
