"""Exercise 06a: the compensation entry rollback logs for each entry (see README.md).

Entry types are the page store's own (``T[name]``); LSNs are written ``L(0x140)``
for offset 0x140 of log file 1. Each entry's values are what the log holds:
the page id, the entry's fields, and the transaction's ``txn_id`` and
``txn_prev_lsn``.
"""

from types import SimpleNamespace

from minidb.log import LSN, NULL_LSN
from minidb.pagestore.wal.logdef import PAGESTORE_TYPES as T

PAGE = {"vol": 1, "store": 3, "page": 12}


def L(offset: int) -> LSN:
    return LSN(1, offset)


def entry(name, txn_prev, tid=3, **fields):
    return T[name], {**PAGE, **fields, "txn_id": tid, "txn_prev_lsn": txn_prev}


def test_the_readme_worked_example(impl):
    assert impl.compensation(*entry("rec_splice", L(0x100), slot=0, start=1, old=b"b", new=b"xyz")) == (
        "clr_rec_splice", {"slot": 0, "start": 1, "old": b"xyz", "new": b"b", "undo_nxt": L(0x100)})
    assert impl.compensation(*entry("rec_insert", NULL_LSN, slot=0, data=b"ab")) == (
        "clr_rec_insert", {"slot": 0, "data": b"ab", "undo_nxt": NULL_LSN})


def test_a_removal_is_compensated_by_putting_the_record_back(impl):
    assert impl.compensation(*entry("rec_remove", L(0x2c0), slot=1, data=b"x" * 60)) == (
        "clr_rec_remove", {"slot": 1, "data": b"x" * 60, "undo_nxt": L(0x2c0)})


def test_undo_next_is_the_entry_before_the_undone_one(impl):
    """Not NULL, not the undone entry's own LSN: its txn_prev_lsn."""
    for prev in (L(0x40), L(0x1000), LSN(7, 0x18)):
        name, fields = impl.compensation(*entry("rec_insert", prev, slot=4, data=b"r"))
        assert fields["undo_nxt"] == prev


def test_a_clr_carries_its_own_fields_only(impl):
    """The page id and the transaction's fields are added when the CLR is logged."""
    _, fields = impl.compensation(*entry("rec_splice", L(0x80), slot=2, start=0, old=b"", new=b"abc"))
    assert set(fields) == {"slot", "start", "old", "new", "undo_nxt"}


def test_a_logical_undo_is_closed_by_a_compensate_entry(impl):
    """The volume's maps and the B+tree are undone by an inverse operation, then `compensate`."""
    for name, fields in [("alloc_pages_in_ext", {"snum": 3, "ext": 6, "pmap": 4}),
                         ("btree_insert", {"root": 20, "unique": True, "idx": 2, "key": b"k", "el": b"e"}),
                         ("store_operation", {"snum": 5, "op": 0, "value": 1, "old_value": 0})]:
        assert impl.compensation(*entry(name, L(0x300), **fields)) == ("compensate", {"undo_nxt": L(0x300)})


def test_nothing_is_logged_for_an_entry_that_is_not_undoable(impl):
    """Redo-only entries and state markers are passed over, not compensated."""
    assert impl.compensation(*entry("page_format", L(0x100), tag=2, store_flags=0)) is None
    assert impl.compensation(*entry("create_ext_list", L(0x100), snum=3, prev=0, next=0, exts=[{"ext": 6}])) is None
    assert impl.compensation(*entry("xct_abort", L(0x100))) is None


def test_a_compensation_entry_is_never_compensated(impl):
    """A CLR met by a rollback (an earlier one was interrupted) is jumped over, not undone again."""
    assert impl.compensation(*entry("clr_rec_insert", L(0x180), slot=0, data=b"ab", undo_nxt=NULL_LSN)) is None
    assert impl.compensation(*entry("clr_rec_splice", L(0x140), slot=0, start=1, old=b"xyz", new=b"b",
                                    undo_nxt=L(0x100))) is None


def test_the_compensate_closing_a_compensated_action_is_not_compensated(impl):
    """A B+tree split logged anchor 0x200, its pieces, then compensate with undo_nxt 0x200."""
    assert impl.compensation(*entry("compensate", L(0x380), undo_nxt=L(0x200))) is None


def test_the_arguments_are_not_changed(impl):
    entry_type, values = entry("rec_splice", L(0x100), slot=0, start=1, old=b"b", new=b"xyz")
    copy = dict(values)
    impl.compensation(entry_type, values)
    assert values == copy


def rollback(impl, log, start, stop=None):
    """The test's own rollback: walk the chain from ``start``, jump over compensation entries, log what
    ``impl`` says at fresh LSNs after the log's end; stop early after ``stop`` CLRs (a crash)."""
    logged, lsn, next_free = [], start, max(log).offset + 0x40
    while lsn != NULL_LSN and (stop is None or len(logged) < stop):
        entry_type, values = log[lsn]
        answer = impl.compensation(entry_type, values)
        if answer is not None:
            name, fields = answer
            logged.append((lsn, name, fields["undo_nxt"]))
            log[L(next_free)] = (T[name], {**PAGE, **fields, "txn_id": 3, "txn_prev_lsn": max(log)})
            next_free += 0x40
        lsn = values["undo_nxt"] if entry_type.compensation else values["txn_prev_lsn"]
    return logged


def test_a_whole_rollback_skips_a_closed_compensated_action(impl):
    """T3 inserted, split a leaf (a compensated action: pieces 0x140-0x1c0 closed by compensate 0x200,
    anchor 0x100), formatted a page, inserted again. Rollback undoes 0x280 and 0x100 only."""
    log = {L(0x100): entry("rec_insert", NULL_LSN, slot=0, data=b"a"),
           L(0x140): entry("page_insert", L(0x100), idx=0, entries=[{"data": b"k"}]),
           L(0x180): entry("page_remove", L(0x140), idx=4, entries=[{"data": b"k"}]),
           L(0x1c0): entry("btree_header", L(0x180), level=1, pid0=12),
           L(0x200): entry("compensate", L(0x1c0), undo_nxt=L(0x100)),
           L(0x240): entry("page_format", L(0x200), tag=2, store_flags=0),
           L(0x280): entry("rec_insert", L(0x240), slot=1, data=b"b")}
    assert rollback(impl, log, L(0x280)) == [(L(0x280), "clr_rec_insert", L(0x240)),
                                           (L(0x100), "clr_rec_insert", NULL_LSN)]


def test_an_action_cut_short_is_undone_piece_by_piece(impl):
    """A crash came in the middle of the split (no compensate yet): each piece is undone logically."""
    log = {L(0x100): entry("rec_insert", NULL_LSN, slot=0, data=b"a"),
           L(0x140): entry("page_insert", L(0x100), idx=0, entries=[{"data": b"k"}]),
           L(0x180): entry("page_remove", L(0x140), idx=4, entries=[{"data": b"k"}])}
    assert rollback(impl, log, L(0x180)) == [(L(0x180), "compensate", L(0x140)), (L(0x140), "compensate", L(0x100)),
                                           (L(0x100), "clr_rec_insert", NULL_LSN)]


def test_a_rollback_interrupted_by_a_crash_resumes_without_undoing_twice(impl):
    """The first rollback logs one CLR, then crashes; the next starts at the transaction's last entry,
    that CLR, and jumps over what it compensated: each entry is undone exactly once."""
    log = {L(0x100): entry("rec_insert", NULL_LSN, slot=0, data=b"a"),
           L(0x140): entry("rec_splice", L(0x100), slot=0, start=0, old=b"a", new=b"bb"),
           L(0x180): entry("rec_remove", L(0x140), slot=0, data=b"bb")}
    first = rollback(impl, log, L(0x180), stop=1)
    second = rollback(impl, log, max(log))
    assert [lsn for lsn, _, _ in first + second] == [L(0x180), L(0x140), L(0x100)]
    assert [name for _, name, _ in first + second] == ["clr_rec_remove", "clr_rec_splice", "clr_rec_insert"]


# Typical wrong solutions; each must fail at least one test above (exercises/test_stubs_fail.py).
TWINS = {"rec_insert": ("slot", "data"), "rec_remove": ("slot", "data"), "rec_splice": ("slot", "start", "old", "new")}


def _clr(entry_type, values, *, no_swap=False, twin_for_logical=False, clr_again=False, redo_only_too=False,
         all_fields=False):
    if entry_type.compensation and not clr_again:
        return None
    if not entry_type.undoable and not entry_type.compensation and not redo_only_too:
        return None
    prev = values["txn_prev_lsn"]
    if entry_type.name not in TWINS and not (twin_for_logical and entry_type.undoable):
        return "compensate", {"undo_nxt": prev}
    swap = {"old": "new", "new": "old"} if entry_type.name == "rec_splice" and not no_swap else {}
    fields = dict(values) if all_fields else {f: values[swap.get(f, f)] for f in TWINS.get(entry_type.name, ())}
    return f"clr_{entry_type.name}", {**fields, "undo_nxt": prev}


MUTANTS = {
    "splice_bytes_not_swapped": {"compensation": lambda *a: _clr(*a, no_swap=True)},
    "a_clr_twin_for_a_logical_entry": {"compensation": lambda *a: _clr(*a, twin_for_logical=True)},
    "a_clr_is_compensated_again": {"compensation": lambda *a: _clr(*a, clr_again=True)},
    "redo_only_entries_compensated": {"compensation": lambda *a: _clr(*a, redo_only_too=True)},
    "the_whole_entry_copied_into_the_clr": {"compensation": lambda *a: _clr(*a, all_fields=True)},
}


EXAMPLES = [("rec_splice", {"slot": 0, "start": 1, "old": b"b", "new": b"xyz"}),
            ("rec_insert", {"slot": 0, "data": b"ab"}),
            ("rec_remove", {"slot": 1, "data": b"x" * 60}),
            ("alloc_pages_in_ext", {"snum": 3, "ext": 6, "pmap": 4}),
            ("btree_insert", {"root": 20, "unique": True, "idx": 2, "key": b"k", "el": b"e"}),
            ("store_operation", {"snum": 5, "op": 0, "value": 1, "old_value": 0}),
            ("page_format", {"tag": 2, "store_flags": 0}),
            ("xct_abort", {}),
            ("compensate", {"undo_nxt": L(0x200)}),
            ("clr_rec_insert", {"slot": 0, "data": b"ab", "undo_nxt": NULL_LSN}),
            ("clr_rec_splice", {"slot": 0, "start": 1, "old": b"xyz", "new": b"b", "undo_nxt": L(0x100)})]


def random_cases(rng):
    """For ``minidb grade``: entries of every kind (physical, logical, redo-only, markers, CLRs) with
    random slots, bytes, transactions and txn_prev_lsn."""
    for _ in range(300):
        name, fields = rng.choice(EXAMPLES)
        fields = dict(fields)
        for field in ("slot", "start"):
            if field in fields:
                fields[field] = rng.randrange(0, 8)
        for field in ("data", "old", "new"):
            if field in fields:
                fields[field] = bytes(rng.randrange(97, 123) for _ in range(rng.randrange(0, 6)))
        prev = rng.choice([NULL_LSN, L(rng.randrange(0x26, 0x1000)), LSN(rng.randrange(2, 9), rng.randrange(0x26, 0x400))])
        entry_type, values = entry(name, prev, tid=rng.randrange(1, 9), **fields)
        flags = SimpleNamespace(name=entry_type.name, undoable=entry_type.undoable, logical=entry_type.logical,
                                compensation=entry_type.compensation)  # the attributes the function may read
        yield "compensation", (flags, values), {}
