"""Exercise 16a: a forward entry's reservation for its rollback, and its admission (see README.md).

The numbers are the page store's on its demo volume: the end's share ``END`` (``xct_abort``, ``xct_end`` and a
``compensate``), a page image ``IMAGE`` (the largest entry: a 512-byte page and its entry's fields).
"""

END, IMAGE = 99, 640


def test_the_readme_example_a_refused_insert(impl):
    assert impl.reserve_for_rollback(64, 1.5, False, False, END, IMAGE, 122) == (96, 0, False)


def test_notebook_16_t2_holds_915_bytes_for_117_logged(impl):
    """T2 creates gamma (61 bytes) and updates alpha (56 bytes), both on the page p(1.3.12)."""
    create = impl.reserve_for_rollback(61, 1.5, True, True, END, IMAGE, 11_000)
    update = impl.reserve_for_rollback(56, 1.5, False, False, END, IMAGE, 10_000)
    assert create == (92 + IMAGE, END, True) and update == (84, 0, True)
    assert sum(create[:2]) + sum(update[:2]) == 915


def test_a_fractional_reservation_is_rounded_up(impl):
    assert impl.reserve_for_rollback(61, 1.5, False, False, END, IMAGE, None)[0] == 92  # 91.5
    assert impl.reserve_for_rollback(10, 0.25, False, False, END, IMAGE, None)[0] == 3  # 2.5
    assert impl.reserve_for_rollback(40, 6, False, False, END, IMAGE, None)[0] == 240


def test_an_entry_with_no_undo_reserves_nothing_of_its_own(impl):
    """A redo-only entry (fudge 0): nothing for its undo; the end's share with the first entry still."""
    assert impl.reserve_for_rollback(50, 0, False, False, END, IMAGE, 1000) == (0, 0, True)
    assert impl.reserve_for_rollback(50, 0, True, False, END, IMAGE, 1000) == (0, END, True)


def test_the_end_is_reserved_once_with_the_first_entry(impl):
    assert impl.reserve_for_rollback(100, 1.5, True, False, END, IMAGE, 5000) == (150, END, True)
    assert impl.reserve_for_rollback(100, 1.5, False, False, END, IMAGE, 5000) == (150, 0, True)


def test_one_page_image_for_the_first_change_to_each_page(impl):
    assert impl.reserve_for_rollback(100, 1.5, False, True, END, IMAGE, 5000) == (150 + IMAGE, 0, True)
    assert impl.reserve_for_rollback(100, 1.5, False, False, END, IMAGE, 5000) == (150, 0, True)
    assert impl.reserve_for_rollback(30, 1.5, True, True, 80, 300, 5000) == (345, 80, True)


def test_the_entry_and_everything_it_reserves_must_fit(impl):
    """100 bytes logged + 150 + 640 reserved + 99 for the end: 989 bytes."""
    assert impl.reserve_for_rollback(100, 1.5, True, True, END, IMAGE, 989) == (790, END, True)
    assert impl.reserve_for_rollback(100, 1.5, True, True, END, IMAGE, 988) == (790, END, False)
    assert impl.reserve_for_rollback(100, 1.5, False, False, END, IMAGE, 249) == (150, 0, False)
    assert impl.reserve_for_rollback(100, 1.5, False, False, END, IMAGE, 250) == (150, 0, True)


def test_a_full_log_refuses_and_an_unbounded_one_never_does(impl):
    assert impl.reserve_for_rollback(20, 1.5, False, False, END, IMAGE, 0) == (30, 0, False)
    assert impl.reserve_for_rollback(20, 1.5, False, False, END, IMAGE, -40) == (30, 0, False)
    assert impl.reserve_for_rollback(4000, 1.5, True, True, END, IMAGE, None) == (6000 + IMAGE, END, True)


# -- typical wrong solutions (exercises/test_stubs_fail.py runs each: every one must fail a test) ----------------
def _reserve(size, fudge, first_entry, first_on_page, end_reserve, page_image, free, *, round_down=False,
             no_image=False, image_always=False, no_end=False, end_always=False, entry_not_counted=False,
             full_is_refused=False):
    own = int(size * fudge) if round_down else -int(-size * fudge // 1)
    with_entry = own + (page_image if (first_on_page or image_always) and not no_image else 0)
    for_end = end_reserve if (first_entry or end_always) and not no_end else 0
    need = with_entry + for_end + (0 if entry_not_counted else size)
    admitted = free is None or (need < free if full_is_refused else need <= free)
    return with_entry, for_end, admitted


MUTANTS = {
    "rounds_the_fudge_down": {"reserve_for_rollback": lambda *a: _reserve(*a, round_down=True)},
    "no_page_image": {"reserve_for_rollback": lambda *a: _reserve(*a, no_image=True)},
    "an_image_with_every_entry": {"reserve_for_rollback": lambda *a: _reserve(*a, image_always=True)},
    "no_room_for_the_end": {"reserve_for_rollback": lambda *a: _reserve(*a, no_end=True)},
    "the_end_with_every_entry": {"reserve_for_rollback": lambda *a: _reserve(*a, end_always=True)},
    "the_entry_itself_is_not_counted": {"reserve_for_rollback": lambda *a: _reserve(*a, entry_not_counted=True)},
    "an_exactly_full_log_refuses": {"reserve_for_rollback": lambda *a: _reserve(*a, full_is_refused=True)},
}


def random_cases(rng):
    """For ``minidb grade``: entries of the page store's sizes and fudge factors, first or not, on a new page or
    not, in a log with room to spare, about exactly enough, too little, or no bound."""
    for _ in range(300):
        size = rng.randrange(20, 700)
        fudge = rng.choice([0, 0.25, 1, 1.5, 1.5, 2, 6])
        first_entry, first_on_page = rng.random() < 0.4, rng.random() < 0.4
        end_reserve, image = rng.choice([(99, 640), (80, 300), (120, 1100)])
        need = size + -int(-size * fudge // 1) + (image if first_on_page else 0) + (end_reserve if first_entry else 0)
        free = rng.choice([None, need + rng.randrange(0, 3000), need, need - 1, rng.randrange(-50, need)])
        yield "reserve_for_rollback", (size, fudge, first_entry, first_on_page, end_reserve, image, free), {}
