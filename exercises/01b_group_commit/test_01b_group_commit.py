"""Exercise 01b: group commit, one step of a sync request at a time (see README.md).

Log positions are whole numbers (byte positions in the log); an entry is durable when it starts before
``durable_end``. ``step`` below names the arguments, with the defaults of a quiet log."""

SERVED, FOLLOW, LEAD, GATHER, WRITE, SYNC = "served", "follow", "lead", "gather", "write", "sync"
BOUND = 0.005  # half of a 10 ms fsync


def step(impl, lsn, durable_end, *, in_flight=False, leading=False, written_end=None, waiting=0, expected=1,
         waited=0.0, max_wait=BOUND):
    return impl.commit_step(lsn, durable_end, in_flight, leading, written_end, waiting, expected, waited, max_wait)


def test_the_readme_worked_example(impl):
    assert step(impl, 140, 100) == (LEAD, None)
    assert step(impl, 140, 100, leading=True, waiting=1, expected=3) == (GATHER, None)
    assert step(impl, 140, 100, leading=True, waiting=2, expected=3, waited=0.001) == (WRITE, None)
    assert step(impl, 140, 100, leading=True, written_end=220, waiting=2, expected=3) == (SYNC, 220)
    assert step(impl, 180, 100, in_flight=True, waiting=2) == (FOLLOW, None)
    assert step(impl, 180, 220) == (SERVED, None)
    assert step(impl, 200, 220, in_flight=True) == (SERVED, None)


def test_an_entry_that_starts_at_the_durable_end_is_not_durable(impl):
    assert step(impl, 100, 100) == (LEAD, None)
    assert step(impl, 100, 100, in_flight=True) == (FOLLOW, None)
    assert step(impl, 99, 100) == (SERVED, None)


def test_a_durable_entry_never_waits_for_the_fsync_in_flight(impl):
    """Another leader's fsync is running, for later entries: an entry already durable returns at once."""
    for waiting in (0, 3):
        assert step(impl, 40, 100, in_flight=True, waiting=waiting, expected=4) == (SERVED, None)


def test_one_leader_at_a_time(impl):
    assert step(impl, 300, 100, in_flight=False) == (LEAD, None)
    assert step(impl, 300, 100, in_flight=True) == (FOLLOW, None)
    assert step(impl, 300, 100, in_flight=True, waiting=5, expected=6) == (FOLLOW, None)


def test_the_leader_gathers_the_followers_the_previous_batch_had(impl):
    """The previous fsync served four requests: its leader and three followers. So the next leader waits
    until three followers wait, or its bound is over."""
    leader = dict(leading=True, expected=4, max_wait=BOUND)
    for waiting in (0, 1, 2):
        assert step(impl, 500, 100, waiting=waiting, waited=0.002, **leader) == (GATHER, None)
    assert step(impl, 500, 100, waiting=3, waited=0.002, **leader) == (WRITE, None)
    assert step(impl, 500, 100, waiting=4, **leader) == (WRITE, None)


def test_the_gather_is_bounded(impl):
    leader = dict(leading=True, waiting=1, expected=4, max_wait=BOUND)
    assert step(impl, 500, 100, waited=0.0049, **leader) == (GATHER, None)
    assert step(impl, 500, 100, waited=BOUND, **leader) == (WRITE, None)
    assert step(impl, 500, 100, waited=0.5, **leader) == (WRITE, None)


def test_a_lone_committer_and_a_zero_bound_never_wait(impl):
    """The previous fsync served its leader alone: nobody to wait for. A bound of 0 (commit_delay 0, or
    no fsync measured yet) turns the gather off."""
    assert step(impl, 500, 100, leading=True, expected=1) == (WRITE, None)
    assert step(impl, 500, 100, leading=True, expected=5, waiting=0, max_wait=0.0) == (WRITE, None)


def test_the_fsync_covers_everything_written(impl):
    """The leader's entry is at 500, but the buffer it wrote ends at 900 (the followers' entries, and
    those appended while it gathered): one fsync makes them all durable."""
    assert step(impl, 500, 100, leading=True, written_end=900, waiting=3, expected=4) == (SYNC, 900)
    assert step(impl, 500, 100, leading=True, written_end=540) == (SYNC, 540)


def run_commits(impl, arrivals, entry=40):
    """A scripted log: ``arrivals[i]`` committers append an entry each and call sync while fsync ``i`` is
    in flight (arrivals[0]: before any). A leader gathers until its followers wait (they all are already)
    or the clock, moving a millisecond at a time, reaches its bound. Returns how many requests each
    fsync served, and how long each leader gathered."""
    durable, end, expected, batches, gathers = 0, 0, 1, [], []
    pending = []
    for arriving in arrivals + [0]:
        lsns = []
        for _ in range(arriving):
            lsns.append(end)
            end += entry
        pending += lsns
        if not pending:
            continue
        leader, followers = pending[0], pending[1:]
        assert step(impl, leader, durable, expected=expected) == (LEAD, None)
        for lsn in followers:
            assert step(impl, lsn, durable, in_flight=True) == (FOLLOW, None)
        waited = 0.0
        while step(impl, leader, durable, leading=True, waiting=len(followers), expected=expected,
                   waited=waited) == (GATHER, None):
            waited += 0.001  # nobody else comes: the clock moves on
            assert waited <= BOUND + 1e-9, "the leader gathered past its bound"
        gathers.append(round(waited, 3))
        action, target = step(impl, leader, durable, leading=True, written_end=end, waiting=len(followers),
                              expected=expected)
        assert action == SYNC
        durable = target
        served = [lsn for lsn in pending if step(impl, lsn, durable) == (SERVED, None)]
        pending = [lsn for lsn in pending if lsn not in served]
        batches.append(len(served))
        expected = max(1, len(served))
    return batches, gathers


def test_committers_arriving_during_an_fsync_share_the_next_one(impl):
    """One committer; three arrive during its fsync and share the next one, whose leader does not wait
    (the previous batch was its leader alone); then two arrive, and their leader waits for the two
    followers the previous batch had, but only one comes: it waits out its bound."""
    assert run_commits(impl, [1, 3, 2]) == ([1, 3, 2], [0.0, 0.0, 0.005])


# Typical wrong solutions; each must fail at least one test above (exercises/test_stubs_fail.py).
def _step(lsn, durable_end, in_flight, leading, written_end, waiting, expected, waited, max_wait, *,
          own_entry_only=False, follow_first=False, unbounded=False, at_end_is_durable=False, count_leader=False):
    if not leading:
        if follow_first and in_flight:
            return FOLLOW, None
        if lsn < durable_end or (at_end_is_durable and lsn == durable_end):
            return SERVED, None
        return (FOLLOW, None) if in_flight else (LEAD, None)
    if written_end is None:
        wanted = expected if count_leader else expected - 1
        if waiting < wanted and (unbounded or waited < max_wait):
            return GATHER, None
        return WRITE, None
    return SYNC, (lsn + 1 if own_entry_only else written_end)


MUTANTS = {
    "the_leader_syncs_only_its_own_entry": {"commit_step": lambda *a: _step(*a, own_entry_only=True)},
    "a_durable_entry_waits_for_the_fsync_in_flight": {"commit_step": lambda *a: _step(*a, follow_first=True)},
    "the_leader_gathers_without_a_bound": {"commit_step": lambda *a: _step(*a, unbounded=True)},
    "an_entry_at_the_durable_end_counts_as_durable": {"commit_step": lambda *a: _step(*a, at_end_is_durable=True)},
    "the_leader_waits_for_itself_too": {"commit_step": lambda *a: _step(*a, count_leader=True)},
}


def random_cases(rng):
    """Random states of a sync request, every role: minidb's answer and yours must be equal."""
    for _ in range(300):
        durable = rng.randrange(0, 4096)
        lsn = max(0, durable + rng.choice([-200, -1, 0, 0, 1, 40, 300]))
        leading = rng.random() < 0.6
        written = None
        if leading and rng.random() < 0.4:
            written = lsn + rng.choice([1, 40, 400])
        max_wait = rng.choice([0.0, 0.002, 0.005])
        waited = rng.choice([0.0, 0.001, max_wait, max_wait * 2])
        yield "commit_step", (lsn, durable, rng.random() < 0.5 and not leading, leading, written,
                              rng.randrange(0, 6), rng.randrange(1, 7), waited, max_wait), {}
