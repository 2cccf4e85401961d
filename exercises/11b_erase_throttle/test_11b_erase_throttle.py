"""Tests of exercise 11b: the throttle's arithmetic, on JE's worked figures and on delays.

``impl`` (exercises/conftest.py) is reference.py or student.py, depending on ``--exercise-impl``.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from minidb.logstore.eraser.throttle import Planned

DAY = 86_400_000
HOUR = 3_600_000


def ends(plan) -> dict[tuple[int, int], float]:
    return {(p.file, p.component): p.end_ms for p in plan}


def test_the_estimate_is_three_times_the_files_length(impl):
    assert impl.work_estimate([1000, 2000]) == 9000
    assert impl.work_estimate([]) == 0


def test_a_files_components_split_the_write_protocol_18_16_50_16(impl):
    assert impl.file_components(1000) == [(1, 1000), (2, 1000), (3, 180), (4, 160), (5, 500), (6, 160)]
    assert sum(units for _, units in impl.file_components(2000)) == pytest.approx(6000)


def test_pace_waits_when_early(impl):
    """9 600 ms per unit, 1 000 units done at 1 000 000 ms: wait until 9 600 000 ms."""
    assert impl.pace(0, 9600, 1000, 1_000_000) == pytest.approx((8_600_000, 0))


def test_pace_on_time_neither_waits_nor_moves(impl):
    assert impl.pace(0, 9600, 1000, 9_600_000) == pytest.approx((0, 0))


def test_pace_late_moves_the_schedule_instead_of_catching_up(impl):
    """An hour late: no wait, and the rest of the schedule starts an hour later."""
    assert impl.pace(0, 9600, 1000, 9_600_000 + HOUR) == pytest.approx((0, HOUR))


def test_the_worked_example(impl):
    plan = impl.schedule(0, DAY, [1000, 2000])
    assert [(p.file, p.component) for p in plan] == [(f, c) for f in (0, 1) for c in range(1, 7)]
    at = ends(plan)
    assert at[(0, 1)] == pytest.approx(9_600_000)
    assert at[(0, 5)] == pytest.approx(27_264_000)
    assert at[(1, 6)] == pytest.approx(DAY)
    assert not any(p.late for p in plan)
    assert [p.units for p in plan[:6]] == pytest.approx([1000, 1000, 180, 160, 500, 160])


def test_the_schedule_starts_at_the_cycles_start(impl):
    start = 1_700_000_000_000
    assert ends(impl.schedule(start, start + DAY, [1000, 2000]))[(0, 1)] == pytest.approx(start + 9_600_000)


def test_a_delay_shifts_the_rest_without_catching_up_and_the_cycle_is_aborted_late(impl):
    """Eight hours lost before the second file's first component, which may take 5 h 20 min (19 200 000 ms):
    it ends 2 h 40 min late, everything after it too, and the items of file 2 would be zeroed after the day."""
    plan = impl.schedule(0, DAY, [1000, 2000], {(1, 1): 8 * HOUR})
    at, shift = ends(plan), 8 * HOUR - 19_200_000
    assert at[(0, 6)] == pytest.approx(28_800_000)
    assert at[(1, 1)] == pytest.approx(28_800_000 + 8 * HOUR)
    assert at[(1, 2)] == pytest.approx(67_200_000 + shift)
    assert at[(1, 4)] == pytest.approx(73_728_000 + shift)
    assert plan[-1] == Planned(1, 5, pytest.approx(1000), pytest.approx(83_328_000 + shift), True)
    assert [p.late for p in plan].count(True) == 1


def test_a_short_delay_is_absorbed_by_the_next_wait(impl):
    """Half an hour lost inside a wait the throttle would have waited anyway changes nothing after it."""
    plan = impl.schedule(0, DAY, [1000, 2000], {(0, 2): 0.5 * HOUR})
    assert ends(plan) == pytest.approx(ends(impl.schedule(0, DAY, [1000, 2000])))


def _late_never_flagged(start_ms, end_ms, lengths, delays=None):
    from minidb.logstore.eraser.throttle import schedule

    return [replace(p, late=False) for p in schedule(start_ms, end_ms, lengths, delays)]


def _wrong_pace_catches_up(base_ms, ms_per_unit, done, now_ms):
    target = base_ms + done * ms_per_unit
    return max(0.0, target - now_ms), base_ms


MUTANTS = {
    "estimate_is_the_length": {"work_estimate": lambda lengths: sum(lengths)},
    "protocol_split_evenly": {"file_components": lambda length: [(1, length), (2, length)]
                              + [(c, 0.25 * length) for c in (3, 4, 5, 6)]},
    "pace_catches_up": {"pace": _wrong_pace_catches_up},
    "late_never_flagged": {"schedule": _late_never_flagged},
}


# What student.py may import from the modules that implement this exercise (minidb grade refuses the rest).
STUDENT_MAY_IMPORT = {"minidb.logstore.eraser.throttle": ["Planned"]}


def random_cases(rng):
    """For ``minidb grade``: files of random lengths (multiples of 100 bytes, so every share is a whole
    number), paces early, on time and late, cycles with and without delays."""
    for _ in range(60):
        lengths = [rng.randrange(1, 50) * 100 for _ in range(rng.randrange(0, 5))]
        yield "work_estimate", (lengths,), {}
        yield "file_components", (rng.randrange(1, 50) * 100,), {}
        base, per_unit, done = rng.randrange(0, 10) * 1000, rng.randrange(1, 100), rng.randrange(0, 5000)
        yield "pace", (base, per_unit, done, base + per_unit * done + rng.choice([-HOUR, -1, 0, 1, HOUR])), {}
        if lengths:
            delays = {(rng.randrange(len(lengths)), rng.randrange(1, 7)): rng.choice([HOUR, DAY // 2])
                      for _ in range(rng.randrange(0, 3))}
            yield "schedule", (0, DAY, lengths), {"delays": delays or None}
