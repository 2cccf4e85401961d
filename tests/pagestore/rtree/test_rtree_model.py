"""Property test: R*-trees against a brute-force model, with savepoints, rollbacks and aborts.

Seeded random workloads on 512-byte pages and a small fanout (so nodes
split and overflow every few inserts, and forced reinsertion and condensing
are frequent): two transactions at a time (no lock manager, so their
operations interleave on the one tree; each owns the elements it inserted),
inserting, removing, searching with all four conditions, taking savepoints
and rolling back to them, committing and aborting. After every step the
tree's invariants (:func:`minidb.pagestore.rtree.check_rtree`) hold and its
contents are exactly the model's; every search returns what a scan of the
model returns.
"""

import random

import pytest

from minidb.pagestore import Box, DuplicateEntryError, EntryNotFoundError, check_rtree

from tests.pagestore.sm_helpers import new_sm

CONDITIONS = {
    "overlap": lambda e, q: e.overlaps(q),
    "cover": lambda e, q: e.covers(q),
    "inside": lambda e, q: q.covers(e),
    "exact": lambda e, q: e == q,
}


def brute_force(entries, query, cond):
    return sorted((b, el) for b, el in entries if CONDITIONS[cond](b, query))


def random_box(rng, size=100):
    x, y = rng.randrange(size), rng.randrange(size)
    return Box(x, y, x + rng.choice([0, 0, 1, 3, 8]), y + rng.choice([0, 1, 2, 6]))


class Model:
    def __init__(self, sm, ix, rng):
        self.sm, self.ix, self.rng = sm, ix, rng
        self.committed: set = set()
        self.xct = [None, None]
        self.own = [set(), set()]  # what each transaction inserted and has not removed (its elements)
        self.gone = [set(), set()]  # committed entries of its own it removed
        self.saves = [[], []]
        self.serial = 0

    def expected(self):
        out = set(self.committed)
        for p in (0, 1):
            out = (out - self.gone[p]) | self.own[p]
        return sorted(out)

    def begin(self, p):
        if self.xct[p] is None:
            self.xct[p], self.own[p], self.gone[p], self.saves[p] = self.sm.begin(), set(), set(), []
        return self.xct[p]

    def insert(self, p):
        t = self.begin(p)
        self.serial += 1
        entry = (random_box(self.rng), b"%d-%d" % (p, self.serial))
        self.sm.rtree_insert(t, self.ix, *entry)
        self.own[p].add(entry)

    def remove(self, p):
        t = self.begin(p)
        mine = sorted(self.own[p] | {e for e in self.committed - self.gone[p] - self.gone[1 - p]
                                     if e[1].startswith(b"%d-" % p)})
        if not mine:
            return
        entry = self.rng.choice(mine)
        self.sm.rtree_remove(t, self.ix, *entry)
        if entry in self.own[p]:
            self.own[p].discard(entry)
        else:
            self.gone[p].add(entry)

    def search(self, p):
        t = self.begin(p)
        query, cond = random_box(self.rng, 100), self.rng.choice(list(CONDITIONS))
        if self.rng.random() < 0.3:  # a big window, or an existing box (for exact and cover)
            query = Box(query.xlo, query.ylo, query.xhi + 40, query.yhi + 40)
        elif self.expected() and self.rng.random() < 0.5:
            query = self.rng.choice(self.expected())[0]
        assert self.sm.rtree_search(t, self.ix, query, cond) == brute_force(self.expected(), query, cond)

    def save(self, p):
        t = self.begin(p)
        self.saves[p].append((self.sm.save_point(t), set(self.own[p]), set(self.gone[p])))

    def rollback(self, p):
        if self.xct[p] is not None and self.saves[p]:
            i = self.rng.randrange(len(self.saves[p]))
            point, own, gone = self.saves[p][i]
            self.sm.rollback_to(self.xct[p], point)
            self.own[p], self.gone[p] = set(own), set(gone)
            del self.saves[p][i + 1:]

    def commit(self, p):
        if self.xct[p] is not None:
            self.sm.commit(self.xct[p])
            self.committed = (self.committed - self.gone[p]) | self.own[p]
            self.xct[p] = None
            self.own[p], self.gone[p] = set(), set()

    def abort(self, p):
        if self.xct[p] is not None:
            self.sm.abort(self.xct[p])
            self.xct[p] = None
            self.own[p], self.gone[p] = set(), set()

    def check(self):
        tree = self.sm.rtrees.tree(self.ix)
        problems, found = check_rtree(self.sm.volume, tree.root)
        assert problems == []
        assert found == self.expected()


OPS = ["insert"] * 10 + ["remove"] * 5 + ["search"] * 3 + ["save", "rollback", "commit", "abort"]


@pytest.mark.parametrize("seed", range(6))
def test_random_workload_matches_the_model(seed):
    rng = random.Random(seed)
    sm = new_sm(num_pages=1024, frames=12)
    with sm.transaction() as t:
        ix = sm.create_rtree(t, fanout=rng.choice([4, 5, 6, 8]))
    model = Model(sm, ix, rng)
    for _ in range(260):
        getattr(model, rng.choice(OPS))(rng.randrange(2))
        model.check()
    model.commit(0), model.commit(1)
    model.check()
    assert sm.check() == []


def test_the_workloads_restructure_in_every_way():
    """The property test is only as good as what it exercises: forced reinsertions, splits, nodes dissolved,
    the root growing and shrinking all happen in its workloads (the R*-tree manager's trace, counted)."""
    kinds = ("reinsert", "splits:", "dissolved", "grows", "shrinks")
    seen = dict.fromkeys(kinds, 0)
    for seed in range(3):
        rng = random.Random(seed)
        sm = new_sm(num_pages=1024, frames=12)
        with sm.transaction() as t:
            ix = sm.create_rtree(t, fanout=4)
        model = Model(sm, ix, rng)
        for _ in range(260):
            getattr(model, rng.choice(OPS))(rng.randrange(2))
        for step in sm.rtrees.trace.lines:
            seen.update({k: seen[k] + 1 for k in kinds if k in step})
    assert seen["reinsert"] > 50 and seen["splits:"] > 20 and seen["dissolved"] > 10
    assert seen["grows"] >= 3 and seen["shrinks"] >= 1, seen


def test_duplicate_and_absent_entries_are_refused_and_change_nothing():
    sm = new_sm()
    with sm.transaction() as t:
        ix = sm.create_rtree(t, fanout=4)
        sm.rtree_insert(t, ix, (0, 0, 1, 1), b"a")
        sm.rtree_insert(t, ix, (0, 0, 1, 1), b"b")  # the same box with another element is another entry
    t = sm.begin()
    before = t.last_lsn
    with pytest.raises(DuplicateEntryError):
        sm.rtree_insert(t, ix, Box(0, 0, 1, 1), b"a")
    with pytest.raises(EntryNotFoundError):
        sm.rtree_remove(t, ix, Box(0, 0, 1, 2), b"a")
    assert t.last_lsn == before
    assert sm.rtree_search(t, ix, (0, 0, 1, 1), "exact") == [(Box(0, 0, 1, 1), b"a"), (Box(0, 0, 1, 1), b"b")]
