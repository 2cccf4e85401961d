"""Exercise 04a: the clock's victim, pass by pass (see README.md).

Frames are written as strings, one word per frame: ``p`` pinned, ``d`` dirty,
``r`` referenced, ``-`` none of these; "r p d r" is four frames.
"""

from hypothesis import HealthCheck, given, settings, strategies as st


def frames(spec: str) -> list[tuple[bool, bool, bool]]:
    return [("p" in word, "d" in word, "r" in word) for word in spec.split()]


def test_the_readme_worked_example(impl):
    """pass 1 clears frames 0 and 3, skips pinned 1 and dirty 2; pass 2 takes frame 0."""
    assert impl.choose_victim(frames("r p d r"), 0) == (0, 1, [0, 3])


def test_a_clean_unreferenced_frame_at_the_hand_is_taken_at_once(impl):
    assert impl.choose_victim(frames("- - - -"), 2) == (2, 3, [])


def test_the_hand_starts_where_it_is_told(impl):
    """Frame 0 would do, but the sweep starts at 1: frame 1 is dirty, frame 2 is the first clean one."""
    assert impl.choose_victim(frames("- d - -"), 1) == (2, 3, [])


def test_the_hand_wraps_around(impl):
    """From frame 3: 3 is dirty, then around to frame 0."""
    assert impl.choose_victim(frames("- - - d"), 3) == (0, 1, [])


def test_the_hand_rests_past_a_victim_in_the_last_frame(impl):
    assert impl.choose_victim(frames("p p -"), 0) == (2, 0, [])


def test_dirty_frames_wait_for_the_second_pass(impl):
    """Only dirty unpinned frames: none qualifies in pass 1; pass 2 takes the first from the hand."""
    assert impl.choose_victim(frames("d p d"), 1) == (2, 0, [])


def test_a_referenced_clean_frame_gets_a_second_chance_over_a_later_clean_one(impl):
    assert impl.choose_victim(frames("r -"), 0) == (1, 0, [0])


def test_referenced_dirty_frames_lose_their_bits_too(impl):
    """The bit is looked at before the dirty flag: frame 0 loses its bit in pass 1."""
    assert impl.choose_victim(frames("dr r"), 0) == (0, 1, [0, 1])


def test_every_frame_referenced(impl):
    """Pass 1 clears every bit; pass 2 takes the frame at the hand."""
    assert impl.choose_victim(frames("r r r"), 2) == (2, 0, [2, 0, 1])


def test_pinned_frames_are_never_victims_and_keep_their_bits(impl):
    victim, hand, cleared = impl.choose_victim(frames("pr pr - pr"), 0)
    assert (victim, hand, cleared) == (2, 3, [])


def test_every_frame_pinned(impl):
    """Three fruitless passes: no victim, the hand back where it was, no bit touched."""
    assert impl.choose_victim(frames("p pr pd"), 1) == (None, 1, [])


def test_the_frames_are_not_changed(impl):
    given_frames = frames("r p d r")
    copy = list(given_frames)
    impl.choose_victim(given_frames, 0)
    assert given_frames == copy


def test_a_scripted_sequence_of_sweeps(impl):
    """Four frames; after each sweep the victim holds a new page (clean, referenced)
    and the hand stays where the sweep left it. The dirty frame 1 outlives the others."""
    state = frames("r d r -")
    hand, victims = 0, []
    for _ in range(4):
        victim, hand, cleared = impl.choose_victim(state, hand)
        victims.append(victim)
        state = [(p, d, r and i not in cleared) for i, (p, d, r) in enumerate(state)]
        state[victim] = (False, False, True)
    assert victims == [3, 0, 2, 3]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), min_size=1, max_size=9), st.data())
def test_rules_that_always_hold(impl, pool, data):
    """The victim is unpinned; the hand rests past it; only unpinned referenced frames lose
    their bits, each once; a dirty victim means every clean unpinned frame was referenced.
    (The impl fixture is a module, the same for every example: safe to share.)"""
    hand = data.draw(st.integers(0, len(pool) - 1))
    victim, hand_after, cleared = impl.choose_victim(pool, hand)
    unpinned = [i for i, (p, _, _) in enumerate(pool) if not p]
    if not unpinned:
        assert (victim, hand_after, cleared) == (None, hand, [])
        return
    assert victim in unpinned and hand_after == (victim + 1) % len(pool)
    assert len(set(cleared)) == len(cleared)
    assert all(not pool[i][0] and pool[i][2] for i in cleared)
    if pool[victim][1]:
        assert all(i in cleared for i in unpinned if not pool[i][1])
    if pool[victim][2]:
        assert victim in cleared


def test_the_reference_bit_comes_before_dirty_in_the_first_pass(impl):
    """Frame 0 is dirty and referenced: the first pass clears its bit (a second chance) rather than
    passing it over as dirty, so the clean frame 1 is chosen with frame 0 in ``cleared``."""
    DIRTY_REF, CLEAN = (False, True, True), (False, False, False)
    assert impl.choose_victim([DIRTY_REF, CLEAN], 0) == (1, 0, [0])


def test_a_dirty_frame_whose_bit_was_cleared_is_taken_in_the_second_pass(impl):
    """Both frames dirty, frame 0 referenced: pass 1 clears frame 0's bit and passes frame 1 over
    (dirty); pass 2 takes frame 0, the first frame it meets that is neither pinned nor referenced."""
    assert impl.choose_victim([(False, True, True), (False, True, False)], 0) == (0, 1, [0])


# Typical wrong solutions; each must fail at least one test above (exercises/test_stubs_fail.py).
def _clock(frames, hand, *, dirty_first=False, clear_pinned=False, rest_at_victim=False):
    n, referenced, cleared = len(frames), [f[2] for f in frames], []
    for pass_no in (1, 2, 3):
        for _ in range(n):
            index, hand = hand, (hand + 1) % n
            pinned, dirty, _ = frames[index]
            if pinned:
                if clear_pinned and referenced[index] and pass_no < 3:
                    referenced[index] = False
                    cleared.append(index)
                continue
            if dirty_first and dirty and pass_no == 1:
                continue
            if referenced[index] and pass_no < 3:
                referenced[index] = False
                cleared.append(index)
                continue
            if dirty and pass_no == 1:
                continue
            return index, index if rest_at_victim else hand, cleared
    return None, hand, cleared


MUTANTS = {
    "dirty_checked_before_the_reference_bit": {
        "choose_victim": lambda frames, hand: _clock(frames, hand, dirty_first=True)},
    "pinned_frames_lose_their_reference_bit": {
        "choose_victim": lambda frames, hand: _clock(frames, hand, clear_pinned=True)},
    "hand_rests_on_the_victim": {
        "choose_victim": lambda frames, hand: _clock(frames, hand, rest_at_victim=True)},
}


def random_cases(rng):
    """For ``minidb grade``: random frame states (some all pinned, some all dirty) and hands."""
    for _ in range(300):
        n = rng.randrange(1, 9)
        pinned, dirty, referenced = rng.random(), rng.random(), rng.random()
        frames = [(rng.random() < pinned, rng.random() < dirty, rng.random() < referenced) for _ in range(n)]
        yield "choose_victim", (frames, rng.randrange(n)), {}
