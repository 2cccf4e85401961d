"""Fingerprints and digests, without threads (the cycles themselves are in test_deadlocks.py)."""

import threading

import pytest
from hypothesis import given, settings, strategies as st

from minidb.pagestore.lock.dreadlocks import Fingerprints, bits_of, contains, digest_step, format_bits, mask_of


def test_bits_and_masks():
    assert bits_of(0b1010) == (1, 3) and mask_of([1, 3]) == 0b1010 and format_bits(mask_of([0, 6, 12, 15])) \
        == "{0,6,12,15}"
    assert contains(0b1110, 0b0110) and not contains(0b1100, 0b0110)


def test_the_worked_example_digest_steps():
    t1, t2 = mask_of([12, 15]), mask_of([0, 6])
    first = digest_step(t1, [t2])  # T1 waits for T2, which runs
    assert first.digest == mask_of([0, 6, 12, 15]) and first.cycle_with is None
    second = digest_step(t2, [first.digest])  # T2 waits for T1
    assert second.cycle_with == 0


def test_the_cycle_is_seen_at_the_first_blocker_that_holds_the_fingerprint():
    me = mask_of([1, 2])
    step = digest_step(me, [mask_of([3]), mask_of([1, 5]), mask_of([1, 2, 9]), mask_of([1, 2])])
    assert step.cycle_with == 2 and step.digest == mask_of([1, 2, 3, 5, 9])


def in_thread(fingerprints):
    got = []
    thread = threading.Thread(target=lambda: got.append(fingerprints.current()))
    thread.start()
    thread.join()
    return got[0]


def test_live_threads_get_bits_of_their_own_until_none_are_left():
    fp = Fingerprints(bitmap_bits=8, bits_per_fingerprint=2, seed=3)
    held = []
    barrier = threading.Barrier(5)
    release = threading.Event()

    def live():
        held.append(fp.current())
        barrier.wait()
        release.wait()

    threads = [threading.Thread(target=live) for _ in range(4)]
    for t in threads:
        t.start()
    barrier.wait()
    assert len(held) == 4 and all(len(bits_of(f)) == 2 for f in held)
    assert bin(sum(held)).count("1") == 8 and fp.collisions == 0  # disjoint: all 8 bits used once
    fifth = fp.current()  # the main thread: no free bit left, it must share
    assert fp.collisions == 1 and any(fifth & f for f in held)
    assert fp.current() == fifth  # a thread keeps its fingerprint
    release.set()
    for t in threads:
        t.join()


def test_bits_return_to_the_pool_when_a_thread_ends():
    fp = Fingerprints(bitmap_bits=4, bits_per_fingerprint=2, seed=0)
    for _ in range(10):  # one at a time: never more than one live thread, never a collision
        in_thread(fp)
    assert fp.collisions == 0 and len(fp.assigned) == 10


def test_assignment_is_seeded():
    a, b = Fingerprints(64, 3, seed=7), Fingerprints(64, 3, seed=7)
    assert [in_thread(a) for _ in range(3)] == [in_thread(b) for _ in range(3)]


def test_bad_sizes():
    with pytest.raises(ValueError, match="bits_per_fingerprint must be between 1 and bitmap_bits"):
        Fingerprints(bitmap_bits=2, bits_per_fingerprint=3)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 2**16 - 1), st.lists(st.integers(0, 2**16 - 1), max_size=6))
def test_digest_step_rules(fingerprint, blockers):
    step = digest_step(fingerprint, blockers)
    assert contains(step.digest, fingerprint) and all(contains(step.digest, d) for d in blockers)
    hits = [i for i, d in enumerate(blockers) if contains(d, fingerprint)]
    assert step.cycle_with == (hits[0] if hits else None)
