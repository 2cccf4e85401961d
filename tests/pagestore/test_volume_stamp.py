"""A page store's volume proves it is as new as its log's last checkpoint, and its log files that
they are its own.

Each checkpoint stamps the volume (two slots after its pages, fsynced) with its ``chkpt_begin``
before it becomes the master; a volume whose stamp is older than the master is an older copy
restored from a backup, and opening refuses it: restart would redo from the master checkpoint
only and miss the pages written before it. The volume header records the environment id its
log files must carry.
"""

import pytest

from minidb.errors import ForeignLogFileError
from minidb.io import SimDisk
from minidb.pagestore.errors import VolumeCorruptionError
from minidb.pagestore.sm import StorageManager

from tests.corruption.state import disk_with

VOLUME = "v1.vol"


def clock():
    return 1_700_000_000.0


def durable(disk):
    return {name: disk.durable_bytes(name) for name in disk.list()}


def open_sm(disk):
    return StorageManager.open(disk, frames=16, clock=clock, restart_trace=False)


def store_with_checkpoints(letter=b"x", env_seed=None):
    """A page store whose records were flushed and checkpointed twice; (disk, older volume, contents)."""
    disk = SimDisk("ps")
    sm = StorageManager.format(disk, num_pages=64, ext_sz=4, page_size=512, frames=16, clock=clock,
                               restart_trace=False, env_seed=env_seed)
    with sm.transaction() as t:
        fid = sm.create_file(t)
    older = durable(disk)[VOLUME]  # stamped by the checkpoints of formatting and restart only
    for i in range(2):
        with sm.transaction() as t:
            for j in range(6):
                sm.create_rec(t, fid, letter * 40 + b"%d.%d" % (i, j))
        sm.bp.force_all()
        sm.checkpoint()
    contents = sm.contents()
    sm.close()
    return disk, older, contents


def test_a_volume_older_than_the_master_checkpoint_is_refused():
    disk, older, contents = store_with_checkpoints()
    assert open_sm(disk_with(durable(disk))).contents() == contents
    files = {**durable(disk), VOLUME: older}
    with pytest.raises(VolumeCorruptionError, match="v1.vol: the volume is older than its log's last checkpoint"):
        open_sm(disk_with(files))


def test_a_stamp_newer_than_the_master_is_what_a_crash_before_the_master_write_leaves():
    disk, _, contents = store_with_checkpoints()
    sm = open_sm(disk)
    sm.volume.file.stamp_checkpoint(sm.log.end_lsn)  # as if a checkpoint crashed after stamping
    image = durable(disk)
    sm.close()
    assert open_sm(disk_with(image)).contents() == contents


def test_the_volume_header_names_the_environment_its_log_files_belong_to():
    disk, _, _ = store_with_checkpoints()
    sibling, _, _ = store_with_checkpoints(b"y", env_seed=1)
    sm = open_sm(disk)
    assert sm.volume.header.env_id == sm.log.env_id
    sm.close()
    first = "00000001.jdb"  # the log's first file: the volume, not the first file, is the arbiter
    with pytest.raises(ForeignLogFileError, match=f"{first} belongs to another environment"):
        open_sm(disk_with({**durable(disk), first: durable(sibling)[first]}))
