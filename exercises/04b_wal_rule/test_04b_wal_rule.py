"""Exercise 04b: the write-ahead rule when the buffer pool writes pages (see README.md).

LSNs are real minidb LSNs, written ``L(0x1c0)`` for offset 0x1c0 of log file 1.
"""

from minidb.log import LSN

NO_PAGE_LSN = LSN(0, 0)


def L(offset: int, file: int = 1) -> LSN:
    return LSN(file, offset)


def test_the_readme_worked_example(impl):
    durable = L(0x200)
    assert impl.log_sync_point([L(0x1c0)], durable) is None
    assert impl.log_sync_point([L(0x240)], durable) == L(0x240)
    assert impl.log_sync_point([L(0x120), L(0x2a0), L(0x180)], durable) == L(0x2a0)


def test_an_entry_that_starts_at_the_durable_end_is_not_durable(impl):
    """The durable bytes end at 0x200: the entry at 0x200 is the first one that could be lost."""
    assert impl.log_sync_point([L(0x200)], L(0x200)) == L(0x200)
    assert impl.log_sync_point([L(0x1ff)], L(0x200)) is None


def test_the_largest_page_lsn_of_a_run_counts_wherever_it_is(impl):
    durable = L(0x100)
    assert impl.log_sync_point([L(0x300), L(0x180), L(0x140)], durable) == L(0x300)
    assert impl.log_sync_point([L(0x140), L(0x180), L(0x300)], durable) == L(0x300)
    assert impl.log_sync_point([L(0x140), L(0x300), L(0x180)], durable) == L(0x300)


def test_a_run_already_covered_needs_no_sync(impl):
    assert impl.log_sync_point([L(0x120), L(0x1a0), L(0x80)], L(0x1c0)) is None


def test_pages_no_entry_changed_need_nothing(impl):
    assert impl.log_sync_point([NO_PAGE_LSN], L(0x40)) is None
    assert impl.log_sync_point([NO_PAGE_LSN, NO_PAGE_LSN], L(0x40)) is None
    assert impl.log_sync_point([NO_PAGE_LSN, L(0x80), NO_PAGE_LSN], L(0x40)) == L(0x80)


def test_lsns_compare_by_file_first(impl):
    """The log moved on to file 2: an entry of file 2 at a small offset is after every entry of file 1."""
    assert impl.log_sync_point([L(0x30, file=2), L(0xf00)], L(0xf80)) == L(0x30, file=2)
    assert impl.log_sync_point([L(0xf00)], L(0x30, file=2)) is None


def test_the_arguments_are_not_changed(impl):
    lsns = [L(0x140), NO_PAGE_LSN, L(0x300)]
    impl.log_sync_point(lsns, L(0x100))
    assert lsns == [L(0x140), NO_PAGE_LSN, L(0x300)]


def test_a_sequence_of_evictions_syncs_only_when_needed(impl):
    """The log ends at 0x400, durable up to 0x100. A sync writes the whole log buffer, so after it the
    log is durable up to its end. Four victims: only the first needs a sync; after the log grows, the
    fifth does again."""
    end, durable, syncs = L(0x400), L(0x100), []
    for page_lsn in [L(0x180), L(0x140), L(0x300), L(0x3c0), L(0x460)]:
        if page_lsn == L(0x460):
            end = L(0x480)  # new entries were logged meanwhile
        point = impl.log_sync_point([page_lsn], durable)
        if point is not None:
            assert page_lsn <= point < end
            syncs.append(point)
            durable = end
        assert page_lsn < durable, "a page is written only once its last change is durable"
    assert syncs == [L(0x180), L(0x460)]


def test_a_victim_and_a_cleaner_run_interleaved(impl):
    """The cleaner's run of three pages syncs up to its largest page LSN only (0x280), not the log's
    end; the victim after it, changed at 0x2c0, needs a sync of its own."""
    durable = L(0x100)
    point = impl.log_sync_point([L(0x200), L(0x280), NO_PAGE_LSN], durable)
    assert point == L(0x280)
    durable = L(0x2a0)  # the sync covered the log up to the end of the entry at 0x280
    assert impl.log_sync_point([L(0x2c0)], durable) == L(0x2c0)


# Typical wrong solutions; each must fail at least one test above (exercises/test_stubs_fail.py).
def _sync(page_lsns, durable_end, *, first_only=False, smallest=False, at_end_is_durable=False,
          always=False):
    logged = [lsn for lsn in page_lsns if lsn != NO_PAGE_LSN]
    if not logged:
        return None
    top = logged[0] if first_only else min(logged) if smallest else max(logged)
    if always:
        return top
    durable = top <= durable_end if at_end_is_durable else top < durable_end
    return None if durable else top


MUTANTS = {
    "only_the_first_page_of_a_run": {"log_sync_point": lambda *a: _sync(*a, first_only=True)},
    "the_smallest_page_lsn": {"log_sync_point": lambda *a: _sync(*a, smallest=True)},
    "an_entry_at_the_durable_end_counts_as_durable": {"log_sync_point": lambda *a: _sync(*a, at_end_is_durable=True)},
    "sync_before_every_write": {"log_sync_point": lambda *a: _sync(*a, always=True)},
}


def random_cases(rng):
    """For ``minidb grade``: runs of page LSNs in one or two log files (some pages no entry changed), the
    durable end before, among or after them."""
    for _ in range(300):
        lsns = [NO_PAGE_LSN if rng.random() < 0.15 else L(rng.randrange(0x26, 0x800), file=rng.choice([1, 1, 2]))
                for _ in range(rng.randrange(1, 6))]
        durable = rng.choice(lsns) if rng.random() < 0.3 and lsns[0] != NO_PAGE_LSN else \
            L(rng.randrange(0x26, 0x800), file=rng.choice([1, 2]))
        yield "log_sync_point", (lsns, durable), {}
