"""The middle-file scenario for notebook 11: a cleaned file deleted above a protected one."""

from minidb.viz.cleaner_demo import CLEANED, DELETED
from minidb.viz.middle_files_demo import PROTECTED, middle_file_steps


def test_a_middle_file_goes_while_the_file_below_it_is_protected_and_the_log_stays_whole():
    steps = middle_file_steps()
    cleaned, deleted, recovered, last = steps[2], steps[3], steps[5], steps[-1]
    assert cleaned.states[1] == PROTECTED and cleaned.states[2] == cleaned.states[3] == CLEANED
    assert deleted.states[1] == PROTECTED and deleted.states[2] == deleted.states[3] == DELETED
    assert deleted.head == 1 and deleted.recorded == (2, 3)
    assert recovered.states[2] == DELETED and recovered.recorded == (2, 3)
    assert last.head == 4 and last.states[1] == DELETED
    assert all(s.verified for s in steps)
