"""Exercise 07a: the split of a full B+tree leaf (see README.md).

Sort keys are written as three-digit byte strings (b"010" < b"020"), so that
byte order is number order; a page holds ``ROOM`` bytes of entries, as a
512-byte minidb page does.
"""

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

ROOM = 442


def keys(*numbers: int) -> list[bytes]:
    return [b"%03d" % n for n in numbers]


def sides(sort_keys, sizes, new_key, new_size, m):
    """The bytes of the left and the right page after a split at ``m``, the new entry on its side."""
    left, right = sum(sizes[:m]), sum(sizes[m:])
    return (left, right + new_size) if new_key >= sort_keys[m] else (left + new_size, right)


def test_the_readme_worked_example(impl):
    """Eight entries of 50 bytes, 90 arrives: splits at 4 and at 5 are equally even; the first wins."""
    assert impl.leaf_split(keys(10, 20, 30, 40, 50, 60, 70, 80), [50] * 8, b"090", 50, ROOM) == (4, b"050")


def test_a_new_key_in_the_middle_counts_on_the_left(impl):
    """15 goes left: at m=3 the pages hold 200 and 250 bytes, at m=4 250 and 200: the first."""
    assert impl.leaf_split(keys(10, 20, 30, 40, 50, 60, 70, 80), [50] * 8, b"015", 50, ROOM) == (3, b"040")


def test_the_separator_is_the_first_key_of_the_right_page(impl):
    m, separator = impl.leaf_split(keys(10, 20, 30, 40), [100] * 4, b"025", 20, ROOM)
    assert (m, separator) == (2, b"030")


def test_a_large_new_entry_moves_the_split_point(impl):
    """A 98-byte entry arriving at the right end: three small entries follow it to the right, not four."""
    sort_keys, sizes = keys(*range(10, 170, 10)), [20] * 16
    assert impl.leaf_split(sort_keys, sizes, b"999", 98, ROOM) == (10, b"110")


def test_a_large_new_entry_at_the_left_end(impl):
    sort_keys, sizes = keys(*range(10, 170, 10)), [20] * 16
    assert impl.leaf_split(sort_keys, sizes, b"001", 98, ROOM) == (6, b"070")


def test_entries_of_different_sizes_are_weighed_by_bytes_not_counted(impl):
    """One big entry on the left balances four small ones on the right."""
    assert impl.leaf_split(keys(10, 20, 30, 40, 50, 60), [200, 20, 40, 40, 40, 40], b"070", 20, ROOM) == (1, b"020")


def test_both_pages_keep_an_old_entry(impl):
    """Moving no entry at all and giving the right page only the new one would be the most even: not allowed."""
    m, separator = impl.leaf_split(keys(10, 20, 30), [60, 60, 60], b"040", 180, ROOM)
    assert (m, separator) == (2, b"030")


def test_two_entries_split_one_and_one(impl):
    assert impl.leaf_split(keys(10, 20), [200, 200], b"015", 40, ROOM) == (1, b"020")


def test_no_split_fits(impl):
    """Two entries of 300 bytes and a new one of 200: whichever way, one page holds 500 bytes."""
    with pytest.raises(ValueError):
        impl.leaf_split(keys(10, 20), [300, 300], b"030", 200, ROOM)


def test_the_arguments_are_not_changed(impl):
    sort_keys, sizes = keys(10, 20, 30, 40), [100] * 4
    impl.leaf_split(sort_keys, sizes, b"025", 20, ROOM)
    assert sort_keys == keys(10, 20, 30, 40) and sizes == [100] * 4


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(1, 999), min_size=2, max_size=30, unique=True), st.data())
def test_rules_that_always_hold(impl, numbers, data):
    """The split keeps an old entry on each side, both pages fit, the separator is the right page's first
    key, and no other split point is more even. (The impl fixture is a module: safe to share.)"""
    numbers.sort()
    sort_keys = keys(*numbers)
    sizes = [data.draw(st.integers(8, 98)) for _ in numbers]
    new = data.draw(st.integers(0, 1000).filter(lambda n: n not in numbers))
    new_key, new_size = b"%04d" % new if new == 1000 else b"%03d" % new, data.draw(st.integers(8, 98))
    room = (sum(sizes) + new_size) // 2 + 2 * 98  # a balanced split always fits
    m, separator = impl.leaf_split(sort_keys, sizes, new_key, new_size, room)
    assert 1 <= m <= len(numbers) - 1 and separator == sort_keys[m]
    left, right = sides(sort_keys, sizes, new_key, new_size, m)
    assert left <= room and right <= room
    for other in range(1, len(numbers)):
        o_left, o_right = sides(sort_keys, sizes, new_key, new_size, other)
        if o_left <= room and o_right <= room:
            assert abs(left - right) <= abs(o_left - o_right)
            if other < m:
                assert abs(left - right) < abs(o_left - o_right), "a tie goes to the first split point"


# Typical wrong solutions; each must fail at least one test above (exercises/test_stubs_fail.py).
def _split(sort_keys, sizes, new_key, new_size, room, *, count_new=True, ends=False, last_on_tie=False,
           separator_left=False):
    best = None
    points = range(0, len(sizes) + 1) if ends else range(1, len(sizes))
    for m in points:
        left, right = sum(sizes[:m]), sum(sizes[m:])
        goes_right = m == len(sizes) or (m > 0 and new_key >= sort_keys[m]) if ends else new_key >= sort_keys[m]
        if count_new:
            left, right = (left, right + new_size) if goes_right else (left + new_size, right)
        diff = abs(left - right)
        if left <= room and right <= room and (best is None or diff < best[1] or (last_on_tie and diff == best[1])):
            best = (m, diff)
    if best is None:
        raise ValueError("no split fits")
    m = best[0]
    if separator_left:
        return m, sort_keys[m - 1]
    return m, sort_keys[m] if m < len(sort_keys) else new_key


MUTANTS = {
    "separator_is_the_last_key_on_the_left": {
        "leaf_split": lambda *a: _split(*a, separator_left=True)},
    "the_new_entry_is_not_counted": {
        "leaf_split": lambda *a: _split(*a, count_new=False)},
    "a_page_may_keep_no_old_entry": {
        "leaf_split": lambda *a: _split(*a, ends=True)},
    "the_last_split_point_wins_a_tie": {
        "leaf_split": lambda *a: _split(*a, last_on_tie=True)},
}


def random_cases(rng):
    """For ``minidb grade``: random leaves (sizes, keys) and a new entry, a page just big enough or roomy."""
    for _ in range(300):
        n = rng.randrange(2, 12)
        keys = [k.to_bytes(2, "big") for k in sorted(rng.sample(range(1 << 16), n + 1))]
        new_key = keys.pop(rng.randrange(n + 1))
        sizes = [rng.randrange(8, 60) for _ in keys]
        new_size = rng.randrange(8, 60)
        room = (sum(sizes) + new_size) // 2 + max(sizes + [new_size]) + rng.randrange(0, 40)
        yield "leaf_split", (keys, sizes, new_key, new_size, room), {}
