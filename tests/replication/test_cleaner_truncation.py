"""The log cleaner deletes files the VLSN index covers only after the index was truncated at its head."""

import pytest

from minidb.io import SimDisk
from minidb.log.files import file_name
from minidb.replication import ReplicatedEnvironment, VLSNIndexConfig
from minidb.replication.errors import NetworkRestoreRequiredError
from minidb.replication.syncup.rollback import check_hard_recovery

from tests.replication.helpers import churn, small_config


def churned(min_size):
    disk = SimDisk("rep")
    renv = ReplicatedEnvironment.open(disk, small_config(file_max=4096),
                                      VLSNIndexConfig(stride=4, max_mappings=1000, min_vlsn_index_size=min_size))
    churn(renv)
    return disk, renv


def test_the_vlsn_index_is_truncated_before_its_files_are_deleted():
    disk, renv = churned(min_size=10)
    env, index = renv.env, renv.vlsn_index
    first_before = index.range.first
    cleaned = [c.file_number for c in env.clean_log()]
    assert 1 in cleaned
    seen = []
    env.cleaner.protector.add_deletion_listener(  # runs after the index's own listener
        lambda last: seen.append((index.range.first, file_name(last) in disk.list())) or True)
    env.checkpoint()
    assert seen[0][0] > first_before and seen[0][1]  # the index was truncated while the files were still there
    assert file_name(1) not in disk.list()
    renv.close()


def test_files_the_index_cannot_let_go_are_kept():
    disk, renv = churned(min_size=10_000)  # the index keeps every VLSN: truncation is refused
    env = renv.env
    assert env.clean_log()
    env.checkpoint()
    assert file_name(1) in disk.list() and env.log.head == 1
    renv.close()


def test_deletion_and_erasure_share_one_rule_for_files_holding_vlsns():
    for min_size, released in ((10, True), (10_000, False)):
        for call in ("before_file_deletion", "release_file_for_erasure"):
            disk, renv = churned(min_size)
            index = renv.vlsn_index
            first = index.range.first
            assert getattr(index, call)(1) is released, (min_size, call)
            assert (index.range.first > first) is released  # the head was truncated past file 1 first
            renv.close()


def test_files_holding_no_vlsn_may_be_deleted_but_not_erased():
    disk = SimDisk("rep-empty")
    renv = ReplicatedEnvironment.open(disk, small_config(file_max=4096), VLSNIndexConfig(stride=4, min_vlsn_index_size=1))
    renv.env.checkpoint()
    renv.env.log.force_flip()  # file 1: the environment's own entries, no replicated one
    db = renv.database("accounts")
    for i in range(10):
        db.put(f"k{i:03d}", "v")
    index = renv.vlsn_index
    assert index.last_vlsn_up_to_file(1) == 0 and not index.range.is_empty
    assert index.before_file_deletion(1) is True
    assert index.release_file_for_erasure(1) is False
    assert index.release_files(1, without_vlsns=True) and not index.release_files(1, without_vlsns=False)
    renv.close()


def test_hard_recovery_is_refused_when_the_cleaner_deleted_the_log_it_would_read():
    """A rollback across a checkpoint recovers from the last checkpoint before its matchpoint: if the
    cleaner deleted the files from that checkpoint on (or the log's start, with no such checkpoint), a
    network restore is needed, and the check comes before anything changes."""
    disk, renv = churned(min_size=10)
    env = renv.env
    env.clean_log()
    env.checkpoint()
    first = env.log.head
    assert first > 1 and file_name(1) not in disk.list()
    early = next(e.lsn for e in env.log.scan() if e.vlsn is not None)  # before every checkpoint left
    with pytest.raises(NetworkRestoreRequiredError, match=f"needs hard recovery, which reads the log from its "
                                                          f"start .* but the log now begins in file {first}"):
        check_hard_recovery(env, 1, early)
    late = env.checkpointer.last_ckpt_end  # a matchpoint after the last checkpoint: its log is all there
    check_hard_recovery(env, renv.range.last, late)
    renv.close()
