"""Exercise 05a: compatibility, supremum, the queue's wakeup, one Dreadlocks step (see README.md).

Queues are written as words, one per request in arrival order: ``1:SH`` granted, ``2:EX*`` waiting,
``3:SH>EX`` converting from SH to EX. "1:SH 2:SH>EX 3:IS*" is the worked example.
"""

from hypothesis import HealthCheck, given, settings, strategies as st

MODES = ["NL", "IS", "IX", "SH", "SIX", "UD", "EX"]


def queue(spec: str):
    entries = []
    for word in spec.split():
        txn, mode = word.split(":")
        if mode.endswith("*"):
            entries.append((int(txn), "waiting", mode[:-1], None))
        elif ">" in mode:
            old, new = mode.split(">")
            entries.append((int(txn), "converting", old, new))
        else:
            entries.append((int(txn), "granted", mode, None))
    return entries


def bits(*numbers):
    mask = 0
    for n in numbers:
        mask |= 1 << n
    return mask


# -- part 1 -------------------------------------------------------------------------
def test_compatible_rows_of_the_table(impl):
    rows = {
        "NL": "+++++++", "IS": "+++++--", "IX": "+++----", "SH": "++-+---",
        "SIX": "++-----", "UD": "+--+---", "EX": "+------",
    }
    for requested, row in rows.items():
        got = "".join("+" if impl.compatible(requested, granted) else "-" for granted in MODES)
        assert got == row, f"row {requested}"


def test_compatible_is_not_symmetric_at_sh_and_ud(impl):
    assert impl.compatible("UD", "SH") is True
    assert impl.compatible("SH", "UD") is False


def test_intention_modes_go_together(impl):
    assert impl.compatible("IX", "IS") and impl.compatible("IS", "IX") and impl.compatible("IX", "IX")
    assert not impl.compatible("IX", "SH") and not impl.compatible("SH", "IX")


# -- part 2 -------------------------------------------------------------------------
def test_supremum_rows_of_the_table(impl):
    rows = {
        "NL": "NL IS IX SH SIX UD EX", "IS": "IS IS IX SH SIX UD EX", "IX": "IX IX IX SIX SIX EX EX",
        "SH": "SH SH SIX SH SIX UD EX", "SIX": "SIX SIX SIX SIX SIX SIX EX", "UD": "UD UD EX UD SIX UD EX",
        "EX": "EX EX EX EX EX EX EX",
    }
    for a, row in rows.items():
        assert " ".join(impl.supremum(a, b) for b in MODES) == row, f"row {a}"


def test_a_reader_that_will_write_below_holds_six(impl):
    assert impl.supremum("SH", "IX") == "SIX" and impl.supremum("IX", "SH") == "SIX"


# -- part 3 -------------------------------------------------------------------------
def test_the_readme_worked_example(impl):
    assert impl.wakeup(queue("1:SH 2:SH>EX 3:IS*")) == []
    assert impl.wakeup(queue("2:SH>EX 3:IS*")) == [2]


def test_waiters_first_come_first_served(impl):
    """T1 left; T2 and T3 read together; T4's EX stops the line, so T5's SH waits although it would fit."""
    assert impl.wakeup(queue("2:SH* 3:SH* 4:EX* 5:SH*")) == [2, 3]


def test_the_first_waiter_that_does_not_fit_stops_everyone(impl):
    assert impl.wakeup(queue("1:IX 2:SH* 3:IS*")) == []


def test_a_conversion_goes_before_earlier_waiters(impl):
    """T1 and T2 hold SH, T3 waits for EX, T2 converts to EX. T1 left: T2's conversion first."""
    assert impl.wakeup(queue("2:SH>EX 3:EX*")) == [2]


def test_a_granted_conversion_counts_with_its_new_mode(impl):
    """T1 converts IS to IX; T2 then asks SH, which conflicts with the new IX, not with the old IS."""
    assert impl.wakeup(queue("1:IS>IX 2:SH*")) == [1]


def test_conversions_are_checked_against_every_other_holder(impl):
    """Two conversions: T1 IS->IX fits next to T2's IS; then T2 IS->SH meets T1's new IX: pending."""
    assert impl.wakeup(queue("1:IS>IX 2:IS>SH 3:IS*")) == [1]


def test_compare_with_each_holder_not_the_strongest_mode(impl):
    """IS and SH are held: UD fits next to SH but not next to IS."""
    assert impl.wakeup(queue("1:IS 2:SH 3:UD*")) == []
    assert impl.wakeup(queue("2:SH 3:UD* 4:SH*")) == [3]  # and then SH does not fit next to UD


def test_waiters_granted_in_one_call_count_for_those_behind(impl):
    assert impl.wakeup(queue("2:IX* 3:SH*")) == [2]
    assert impl.wakeup(queue("2:SH* 3:SH* 4:IS* 5:IX*")) == [2, 3, 4]


def test_nothing_to_do(impl):
    assert impl.wakeup(queue("1:EX")) == [] and impl.wakeup([]) == []


def test_the_queue_is_not_changed(impl):
    given = queue("2:SH>EX 3:EX* 4:SH*")
    copy = list(given)
    impl.wakeup(given)
    assert given == copy


# -- part 4 -------------------------------------------------------------------------
def test_the_worked_example_of_dreadlocks(impl):
    t1, t2 = bits(12, 15), bits(0, 6)
    digest, cycle = impl.digest_step(t1, [t2])
    assert digest == bits(0, 6, 12, 15) and cycle is None
    assert impl.digest_step(t2, [digest]) == (bits(0, 6, 12, 15), 0)


def test_part_of_a_fingerprint_is_not_a_cycle(impl):
    me = bits(1, 2)
    assert impl.digest_step(me, [bits(1, 7), bits(2, 9)]) == (bits(1, 2, 7, 9), None)


def test_the_first_blocker_holding_the_whole_fingerprint(impl):
    me = bits(3, 4)
    assert impl.digest_step(me, [bits(5), bits(3, 4, 8), bits(3, 4)]) == (bits(3, 4, 5, 8), 1)


def test_no_blockers(impl):
    assert impl.digest_step(bits(2, 5), []) == (bits(2, 5), None)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(1, 2**16 - 1), st.lists(st.integers(0, 2**16 - 1), max_size=5))
def test_digest_rules_that_always_hold(impl, fingerprint, blockers):
    digest, cycle = impl.digest_step(fingerprint, blockers)
    expected = fingerprint
    for d in blockers:
        expected |= d
    assert digest == expected
    hits = [i for i, d in enumerate(blockers) if d & fingerprint == fingerprint]
    assert cycle == (hits[0] if hits else None)


# Typical wrong solutions (exercises/test_stubs_fail.py requires each to fail a test): minidb's
# answer with one rule broken.
def _compatible(requested, granted):
    from minidb.pagestore.lock import LockMode, modes
    return modes.compatible(LockMode[requested], LockMode[granted])


def _digest(fingerprint, blockers):
    from minidb.pagestore.lock import dreadlocks
    step = dreadlocks.digest_step(fingerprint, list(blockers))
    return step.digest, step.cycle_with


MUTANTS = {
    "compatibility_is_symmetric": {"compatible": lambda r, g: _compatible(r, g) and _compatible(g, r)},
    "a_conversion_takes_the_requested_mode": {"supremum": lambda a, b: b},
    "one_grant_per_wakeup": {"wakeup": lambda queue: [txn for txn, status, *_ in queue if status != "granted"][:1]},
    "no_cycle_is_ever_found": {"digest_step": lambda fingerprint, blockers: (_digest(fingerprint, blockers)[0], None)},
}


def random_cases(rng):
    """For ``minidb grade``: every pair of modes, random queues (granted requests that go together,
    conversions, waiters) and random Dreadlocks digests."""
    for requested in MODES:
        for granted in MODES:
            yield "compatible", (requested, granted), {}
            yield "supremum", (requested, granted), {}
    for _ in range(100):
        together = rng.choice([["IS", "IX"], ["IS", "SH"], ["IX"], ["IS", "SIX"]])
        entries, txn = [], 1
        for _ in range(rng.randrange(0, 4)):
            mode = rng.choice(together)
            if rng.random() < 0.3:
                entries.append((txn, "converting", mode, rng.choice(MODES[1:])))
            else:
                entries.append((txn, "granted", mode, None))
            txn += 1
        for _ in range(rng.randrange(0, 4)):
            entries.append((txn, "waiting", rng.choice(MODES[1:]), None))
            txn += 1
        yield "wakeup", (entries,), {}
    for _ in range(100):
        width = rng.randrange(1, 10)
        yield "digest_step", (1 << rng.randrange(width),
                              [rng.randrange(1 << width) for _ in range(rng.randrange(0, 4))]), {}
