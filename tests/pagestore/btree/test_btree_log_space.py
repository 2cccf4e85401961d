"""B+trees on a bounded log: their entries reserve log space, so a refused transaction can always abort."""

import pytest

from minidb.pagestore import OutOfLogSpaceError

from tests.pagestore.sm_helpers import new_sm

PARTITION = 6000


def test_an_index_workload_refused_by_the_log_still_aborts_and_leaves_a_sound_tree():
    sm = new_sm("btree-space", num_pages=256, log_size=4 * PARTITION, partitions=4)
    with sm.transaction() as t:
        ix = sm.create_index(t, "i4")
    t = sm.begin()
    with pytest.raises(OutOfLogSpaceError):
        for k in range(1000):
            sm.index_insert(t, ix, k, b"e" * 20)
    assert sm.log_space.held(t.txn_id) > 0
    sm.abort(t)
    assert sm.log_space.total == 0
    with sm.transaction() as t:
        assert list(sm.index_scan(t, ix)) == []
    assert sm.indexes.check(ix) == []
    entries = [e for e in sm.log.scan() if e.type_name == "page_insert"]
    assert len(entries) >= 4  # splits happened before the log refused
