"""Exercise 03a: extent allocation (see README.md).

Page maps are written as strings, page 0 first: ``#`` allocated, ``.``
reserved; ``pmap("##.#")`` is 0b1011. A volume's extents are written as the
list of their owners (0: free).
"""

import pytest

APPEND, COMPACT = "append", "compact"


def pmap(text: str) -> int:
    return sum(1 << i for i, c in enumerate(text) if c == "#")


class Owners:
    """A volume's extent owners that remember which extents were read."""

    def __init__(self, owners):
        self.owners, self.read = list(owners), []

    def __len__(self):
        return len(self.owners)

    def __getitem__(self, ext):
        self.read.append(ext)
        return self.owners[ext]


class Locks:
    """``may_take``: refuses the extents in ``held`` (another transaction's), records every question."""

    def __init__(self, held=()):
        self.held, self.asked = set(held), []

    def __call__(self, ext):
        self.asked.append(ext)
        return ext not in self.held


# -- pages_to_try ---------------------------------------------------------------------------
def test_the_readme_worked_example(impl):
    """Pages 0, 1 and 3 allocated, 2 freed: appending goes after page 3; compacting fills page 2 first."""
    assert impl.pages_to_try(APPEND, pmap("##.#...."), 8) == [4, 5, 6, 7]
    assert impl.pages_to_try(COMPACT, pmap("##.#...."), 8) == [2, 4, 5, 6, 7]


def test_a_new_extent_offers_every_page_in_either_mode(impl):
    assert impl.pages_to_try(APPEND, 0, 4) == [0, 1, 2, 3]
    assert impl.pages_to_try(COMPACT, 0, 4) == [0, 1, 2, 3]


def test_a_full_extent_offers_nothing(impl):
    assert impl.pages_to_try(APPEND, pmap("####"), 4) == []
    assert impl.pages_to_try(COMPACT, pmap("####"), 4) == []


def test_append_never_goes_back_to_a_hole(impl):
    """The last page is allocated: appending needs a new extent, though pages 0-2 are reserved."""
    assert impl.pages_to_try(APPEND, pmap("...#"), 4) == []
    assert impl.pages_to_try(COMPACT, pmap("...#"), 4) == [0, 1, 2]


def test_the_extent_size_bounds_the_pages(impl):
    assert impl.pages_to_try(APPEND, pmap("#"), 2) == [1]
    assert impl.pages_to_try(COMPACT, pmap("#.#"), 3) == [1]


# -- find_free_extents ----------------------------------------------------------------------
def test_the_lowest_free_extent_at_or_after_the_hint(impl):
    owners = Owners([0, 0, 3, 3, 4, 0, 0, 3])
    locks = Locks()
    assert impl.find_free_extents(owners, 2, 1, locks) == ([5], 5)
    assert locks.asked == [5]


def test_the_search_starts_at_the_hint(impl):
    """Extents 0 and 1 hold the volume's own maps (owner 0 as far as the list goes): never looked at."""
    owners = Owners([0, 0, 3, 0, 4])
    assert impl.find_free_extents(owners, 2, 1, Locks()) == ([3], 3)
    assert min(owners.read) >= 2


def test_several_extents_skip_the_owned_ones(impl):
    owners = Owners([0, 0, 3, 0, 4, 0, 0, 0])
    assert impl.find_free_extents(owners, 2, 3, Locks()) == ([3, 5, 6], 3)


def test_an_extent_another_transaction_holds_is_skipped_but_stays_the_hint(impl):
    """Extent 3 is free but locked by another transaction: 5 is taken, and the next search starts at 3
    again (the other transaction may give it up)."""
    owners = Owners([0, 0, 3, 0, 4, 0, 0])
    locks = Locks(held={3})
    assert impl.find_free_extents(owners, 2, 1, locks) == ([5], 3)
    assert locks.asked == [3, 5]


def test_only_free_extents_are_asked_for_and_only_until_enough_are_found(impl):
    """``may_take`` locks what it grants: asking for one more extent than needed would lock it."""
    owners = Owners([0, 0, 0, 3, 0, 0, 0, 0])
    locks = Locks()
    assert impl.find_free_extents(owners, 2, 2, locks) == ([2, 4], 2)
    assert locks.asked == [2, 4]


def test_a_full_volume(impl):
    """Fewer free extents than wanted: what there is (the volume refuses the allocation), and the hint."""
    assert impl.find_free_extents(Owners([0, 0, 3, 0, 4]), 2, 2, Locks()) == ([3], 3)
    assert impl.find_free_extents(Owners([0, 0, 3, 4]), 2, 1, Locks()) == ([], 4)
    assert impl.find_free_extents(Owners([0, 0, 3, 0, 4]), 2, 1, Locks(held={3})) == ([], 3)


def test_a_freed_extent_is_reused_first(impl):
    """Extents 2-6 in use, hint 7. Extent 4 is freed: the volume lowers the hint to 4, and the next
    new extent is 4, not 7."""
    owners = [0, 0, 3, 3, 3, 3, 3, 0, 0]
    assert impl.find_free_extents(Owners(owners), 7, 1, Locks()) == ([7], 7)
    owners[4] = 0
    assert impl.find_free_extents(Owners(owners), min(7, 4), 1, Locks()) == ([4], 4)


def test_a_store_grows_by_appending(impl):
    """A store with one extent (2) on a volume of 4-page extents allocates ten pages the append way:
    pages after the last one, then new extents linked at its tail (the lowest free: 3, then 5; 4 is
    another store's). The test keeps the extent list and page maps; the functions choose."""
    owners, maps, chain, hint = [0, 0, 7, 0, 9, 0, 0], {2: 0}, [2], 3
    owners_view = Owners(owners)
    pages = []
    for _ in range(10):
        tail = chain[-1]
        indexes = impl.pages_to_try(APPEND, maps[tail], 4)
        if not indexes:
            found, hint = impl.find_free_extents(owners_view, hint, 1, Locks())
            tail = found[0]
            owners_view.owners[tail], maps[tail] = 7, 0
            chain.append(tail)
            indexes = impl.pages_to_try(APPEND, 0, 4)
        maps[tail] |= 1 << indexes[0]
        pages.append(tail * 4 + indexes[0])
    assert pages == [8, 9, 10, 11, 12, 13, 14, 15, 20, 21] and chain == [2, 3, 5]


@pytest.mark.parametrize("mode", [APPEND, COMPACT])
def test_every_page_offered_is_reserved_and_in_increasing_order(impl, mode):
    for bits in range(1 << 6):
        indexes = impl.pages_to_try(mode, bits, 6)
        assert indexes == sorted(set(indexes)) and all(0 <= i < 6 and not bits >> i & 1 for i in indexes)


# Typical wrong solutions; each must fail at least one test above (exercises/test_stubs_fail.py).
def _pages(mode, pmap, ext_sz, *, append_fills_holes=False, compact_appends=False):
    if (mode == APPEND and not append_fills_holes) or (mode == COMPACT and compact_appends):
        return list(range(pmap.bit_length(), ext_sz))
    return [i for i in range(ext_sz) if not pmap >> i & 1]


def _extents(owners, start, count, may_take, *, from_zero=False, hint_after_taken=False, take_held=False,
             ask_all=False):
    found, lowest = [], None
    for ext in range(0 if from_zero else start, len(owners)):
        if owners[ext] != 0:
            continue
        lowest = ext if lowest is None else lowest
        if may_take(ext) or take_held:
            if len(found) < count:
                found.append(ext)
            if len(found) == count and not ask_all:
                break
    if hint_after_taken:
        return found, found[-1] + 1 if found else len(owners)
    return found, len(owners) if lowest is None else lowest


MUTANTS = {
    "append_fills_holes": {"pages_to_try": lambda *a: _pages(*a, append_fills_holes=True)},
    "compact_only_after_the_last_page": {"pages_to_try": lambda *a: _pages(*a, compact_appends=True)},
    "search_from_extent_zero": {"find_free_extents": lambda *a: _extents(*a, from_zero=True)},
    "hint_past_the_last_extent_taken": {"find_free_extents": lambda *a: _extents(*a, hint_after_taken=True)},
    "a_held_extent_is_taken": {"find_free_extents": lambda *a: _extents(*a, take_held=True)},
    "every_free_extent_is_locked": {"find_free_extents": lambda *a: _extents(*a, ask_all=True)},
}


def random_cases(rng):
    """For ``minidb grade``: random page maps in both modes, and random volumes (owners, a hint below
    which nothing is free, extents another transaction holds)."""
    for _ in range(150):
        ext_sz = rng.randrange(1, 9)
        yield "pages_to_try", (rng.choice([APPEND, COMPACT]), rng.randrange(0, 1 << ext_sz), ext_sz), {}
    for _ in range(150):
        owners = [rng.choice([0, 0, 1, 2, 3]) for _ in range(rng.randrange(1, 12))]
        first_free = next((e for e, owner in enumerate(owners) if owner == 0), len(owners))
        start = rng.randrange(0, first_free + 1)
        held = [e for e in range(len(owners)) if rng.random() < 0.2]
        yield "find_free_extents", (owners, start, rng.randrange(1, 4), Locks(held)), {}
