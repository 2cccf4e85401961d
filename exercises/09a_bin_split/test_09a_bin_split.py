"""Exercise 09a: a BIN split in the log store's tree (see README.md).

``apply`` carries out what the implementation answered on plain lists: a
BIN is ``(low, high, keys)`` (high None: +infinity), a parent IN is two
parallel lists, its slot keys and the node ids they name.
"""

from __future__ import annotations

import random

NEW_ID = 99


def apply(impl, low, high, keys, parent_keys, parent_ids, bin_id):
    """The BIN, its new sibling and the parent after the split, as the tree would hold them."""
    mid, separator, index = impl.split_point(list(keys), list(parent_ids), bin_id)
    left = (low, separator, keys[:mid])
    right = (separator, high, keys[mid:])
    parent_keys = parent_keys[:index] + [separator] + parent_keys[index:]
    parent_ids = parent_ids[:index] + [NEW_ID] + parent_ids[index:]
    return left, right, parent_keys, parent_ids


def well_formed(node):
    low, high, keys = node
    return keys == sorted(set(keys)) and all(low <= k and (high is None or k < high) for k in keys)


def test_the_readme_worked_example(impl):
    keys = [b"k1", b"k2", b"k3", b"k4", b"k5"]
    assert impl.split_point(keys, [2], 2) == (2, b"k3", 1)


def test_an_even_count_splits_in_two_equal_halves(impl):
    keys = [b"a", b"c", b"e", b"g", b"i", b"k"]
    assert impl.split_point(keys, [4, 8], 8) == (3, b"g", 2)


def test_an_odd_count_moves_the_larger_half(impl):
    keys = [bytes([65 + i]) for i in range(7)]
    mid, separator, _ = impl.split_point(keys, [1], 1)
    assert (mid, separator) == (3, b"D")


def test_the_new_slot_goes_right_after_the_bins_own(impl):
    keys = [b"m1", b"m2", b"m3", b"m4", b"m5"]
    assert impl.split_point(keys, [5, 9, 7], 9)[2] == 2
    assert impl.split_point(keys, [9, 5, 7], 9)[2] == 1
    assert impl.split_point(keys, [5, 7, 9], 9)[2] == 3


def test_the_separator_keeps_every_range_right(impl):
    """BIN 9 covers [b"h", b"p") under IN slots b"" (BIN 5), b"h" (BIN 9), b"p" (BIN 7)."""
    keys = [b"h", b"ha", b"k", b"m", b"o"]
    left, right, parent_keys, parent_ids = apply(impl, b"h", b"p", keys, [b"", b"h", b"p"], [5, 9, 7], 9)
    assert well_formed(left) and well_formed(right)
    assert left == (b"h", b"k", [b"h", b"ha"]) and right == (b"k", b"p", [b"k", b"m", b"o"])
    assert parent_keys == [b"", b"h", b"k", b"p"] and parent_ids == [5, 9, NEW_ID, 7]


def test_a_search_from_the_parent_finds_every_key_where_it_went(impl):
    keys = [b"b", b"d", b"f", b"h", b"j", b"l", b"n"]
    left, right, parent_keys, parent_ids = apply(impl, b"", None, keys, [b""], [3], 3)
    for key in keys:
        slot = max(i for i, k in enumerate(parent_keys) if k <= key)  # the last slot key at or below it
        holder = left if parent_ids[slot] == 3 else right
        assert key in holder[2], (key, parent_keys, parent_ids)


def test_many_random_splits_keep_the_tree_well_formed_and_even(impl):
    rng = random.Random(9)
    for _ in range(200):
        n = rng.randrange(2, 40)
        keys = sorted(set(rng.randbytes(rng.randrange(1, 4)) for _ in range(n)))
        if len(keys) < 2:
            continue
        siblings = rng.randrange(1, 6)
        parent_ids = rng.sample(range(1, 50), siblings)
        position = rng.randrange(siblings)
        low = keys[0][:1] if rng.random() < 0.5 else keys[0]
        parent_keys = [bytes([i]) for i in range(siblings)]  # only their order matters here
        left, right, new_keys, new_ids = apply(impl, low, None, keys, parent_keys, parent_ids, parent_ids[position])
        assert well_formed(left) and well_formed(right)
        assert left[2] + right[2] == keys and 0 <= len(right[2]) - len(left[2]) <= 1
        assert new_ids[position] == parent_ids[position] and new_ids[position + 1] == NEW_ID
        assert new_keys[position + 1] == right[0] == right[2][0]


# Typical wrong solutions; each must fail at least one test above (exercises/test_stubs_fail.py).
def _split(keys, parent_node_ids, node_id, *, lower_larger=False, last_kept=False, before=False, at_end=False):
    mid = (len(keys) + 1) // 2 if lower_larger else len(keys) // 2
    separator = keys[mid - 1] if last_kept else keys[mid]
    index = parent_node_ids.index(node_id) + (0 if before else 1)
    return mid, separator, len(parent_node_ids) if at_end else index


MUTANTS = {
    "lower_half_is_the_larger": {"split_point": lambda k, p, n: _split(k, p, n, lower_larger=True)},
    "separator_is_the_last_key_kept": {"split_point": lambda k, p, n: _split(k, p, n, last_kept=True)},
    "new_slot_before_the_bins_own": {"split_point": lambda k, p, n: _split(k, p, n, before=True)},
    "new_slot_at_the_end_of_the_parent": {"split_point": lambda k, p, n: _split(k, p, n, at_end=True)},
}


def random_cases(rng):
    """For ``minidb grade``: full BINs of random sorted keys, their place among the parent's slots."""
    for _ in range(300):
        keys = sorted({bytes([rng.randrange(97, 123)]) * rng.randrange(1, 4) + b"%02d" % rng.randrange(100)
                       for _ in range(rng.randrange(2, 14))})
        if len(keys) < 2:
            keys = [b"a", b"b"]
        parent_ids = rng.sample(range(1, 50), rng.randrange(1, 6))
        yield "split_point", (keys, parent_ids, rng.choice(parent_ids)), {}
