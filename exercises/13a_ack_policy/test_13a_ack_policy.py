"""Exercise 13a: how many acks a commit needs, and counting one ack (see README.md).

A commit's acks so far are a tuple of replica names, in the order they came; VLSNs are plain integers.
"""

POLICIES = ("ALL", "SIMPLE_MAJORITY", "NONE")


def test_the_readme_example_a_majority_of_three(impl):
    required = impl.required_acks("SIMPLE_MAJORITY", 3)
    assert required == 1
    assert impl.count_ack(required, 3, (), "n2", 3) == (("n2",), True)
    assert impl.count_ack(required, 3, ("n2",), "n3", 3) == (("n2", "n3"), True)


def test_all_needs_every_replica(impl):
    assert [impl.required_acks("ALL", n) for n in (1, 2, 3, 5, 7)] == [0, 1, 2, 4, 6]


def test_a_simple_majority_counts_the_master_as_one_vote(impl):
    """More than half of the nodes: 2 of 3, 3 of 4, 3 of 5; the master is one of them."""
    assert [impl.required_acks("SIMPLE_MAJORITY", n) for n in (3, 4, 5, 6, 7)] == [1, 2, 2, 3, 3]


def test_a_group_of_one_or_two(impl):
    """Alone, the master is the majority; with one replica, a majority of two nodes is both."""
    assert [impl.required_acks(p, 1) for p in POLICIES] == [0, 0, 0]
    assert [impl.required_acks(p, 2) for p in POLICIES] == [1, 1, 0]


def test_none_needs_no_ack(impl):
    assert [impl.required_acks("NONE", n) for n in (1, 3, 9)] == [0, 0, 0]
    assert impl.count_ack(0, 5, (), "n2", 5) == (("n2",), True)


def test_the_commit_returns_at_exactly_the_acks_it_needs(impl):
    """A group of five under ALL (4 acks), the Commit at VLSN 9 (the worked example of ack.py)."""
    assert impl.count_ack(4, 9, ("n2", "n3"), "n4", 9) == (("n2", "n3", "n4"), False)
    assert impl.count_ack(4, 9, ("n2", "n3", "n4"), "n5", 9) == (("n2", "n3", "n4", "n5"), True)


def test_a_replica_that_acks_twice_counts_once(impl):
    """n3 reconnected and acknowledged the same Commit again."""
    assert impl.count_ack(4, 9, ("n2", "n3", "n4"), "n3", 9) == (("n2", "n3", "n4"), False)
    assert impl.count_ack(2, 9, ("n2",), "n2", 9) == (("n2",), False)


def test_an_ack_for_another_commits_vlsn_does_not_count(impl):
    assert impl.count_ack(4, 9, ("n2", "n3", "n4"), "n5", 8) == (("n2", "n3", "n4"), False)
    assert impl.count_ack(1, 12, (), "n2", 13) == ((), False)


def test_an_ack_before_the_master_knows_its_commits_vlsn_counts(impl):
    """The feeder sent the Commit the moment it was logged; the ack came back before the master read its VLSN."""
    assert impl.count_ack(1, None, (), "n3", 7) == (("n3",), True)
    assert impl.count_ack(2, None, ("n2",), "n4", 40) == (("n2", "n4"), True)


def test_a_late_ack_after_the_commit_returned(impl):
    """Under SIMPLE_MAJORITY of three, n2's ack released the commit; n3's comes later: counted, still released."""
    assert impl.count_ack(1, 7, ("n2",), "n3", 7) == (("n2", "n3"), True)


def test_the_order_of_the_acks_is_kept(impl):
    assert impl.count_ack(3, 4, ("n5", "n2"), "n3", 4) == (("n5", "n2", "n3"), True)


# -- typical wrong solutions (exercises/test_stubs_fail.py runs each: every one must fail a test) ----------------
def _required(policy, size, *, majority_without_master=False, all_counts_master=False, majority_rounds_up=False):
    if policy == "ALL":
        return size if all_counts_master else size - 1
    if policy == "SIMPLE_MAJORITY":
        if majority_without_master:
            return size // 2 + 1
        return (size + 1) // 2 if majority_rounds_up else size // 2
    return 0


def _count(required, commit_vlsn, acked_by, replica, vlsn, *, twice=False, any_vlsn=False, unknown_refused=False,
           strictly_more=False):
    if not any_vlsn and (commit_vlsn != vlsn if unknown_refused else commit_vlsn not in (None, vlsn)):
        counted = acked_by
    else:
        counted = acked_by + (replica,) if twice or replica not in acked_by else acked_by
    if twice:
        return counted, len(counted) >= required
    return counted, (len(counted) > required if strictly_more else len(counted) >= required)


MUTANTS = {
    "a_majority_without_the_master": {"required_acks": lambda p, n: _required(p, n, majority_without_master=True)},
    "all_counts_the_master_too": {"required_acks": lambda p, n: _required(p, n, all_counts_master=True)},
    "a_majority_of_the_replicas": {"required_acks": lambda p, n: _required(p, n, majority_rounds_up=True)},
    "a_replica_counted_twice": {"count_ack": lambda *a: _count(*a, twice=True)},
    "the_vlsn_is_not_checked": {"count_ack": lambda *a: _count(*a, any_vlsn=True)},
    "an_unknown_commit_vlsn_refuses_the_ack": {"count_ack": lambda *a: _count(*a, unknown_refused=True)},
    "released_only_past_the_count": {"count_ack": lambda *a: _count(*a, strictly_more=True)},
}


def random_cases(rng):
    """For ``minidb grade``: every policy in groups of 1 to 9 nodes; acks from random replicas (some again),
    for the Commit's VLSN, another one, or a Commit whose VLSN the master does not know yet."""
    for size in range(1, 10):
        for policy in POLICIES:
            yield "required_acks", (policy, size), {}
    for _ in range(300):
        size = rng.randrange(2, 8)
        replicas = [f"n{i}" for i in range(2, size + 1)]
        required = rng.randrange(0, size)
        acked = tuple(rng.sample(replicas, rng.randrange(0, len(replicas) + 1)))
        commit_vlsn = rng.choice([None, rng.randrange(1, 50)])
        vlsn = commit_vlsn if commit_vlsn is not None and rng.random() < 0.7 else rng.randrange(1, 50)
        yield "count_ack", (required, commit_vlsn, acked, rng.choice(replicas), vlsn), {}
