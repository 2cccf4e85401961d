"""The corruption harness in ``make test``: a seeded sample of every engine's cases, none WRONG, LOST or CRASH.

At most 5 cases of each (engine, kind of damage, file), a few hundred in all;
``make fuzz`` runs every case. A failure lists each bad case (engine, file,
offset, kind) with what open returned or removed, and the table of all
outcomes.
"""

import pytest

from tests.corruption import BUILDERS
from tests.corruption.cases import all_cases, sample
from tests.corruption.classify import BAD, run_cases, table

PER_GROUP = 5


@pytest.mark.parametrize("engine", sorted(BUILDERS))
def test_corruption_harness_no_wrong_lost_or_crash(engine, tmp_path):
    state = BUILDERS[engine]()
    cases = sample(all_cases(state), PER_GROUP)
    assert len(cases) >= 50, len(cases)
    results = run_cases(state, cases, tmp_path / "case")
    bad = [result for result in results if result.outcome in BAD]
    listing = "\n".join(str(result) for result in bad)
    assert not bad, f"{len(bad)} of {len(results)} cases went bad:\n{listing}\n\n{table(results)}"
