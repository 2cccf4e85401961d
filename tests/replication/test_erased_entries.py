"""A replicated entry erased inside the VLSN index's range is corruption: lookups by VLSN never skip it.

The data eraser truncates the VLSN index before it erases a file, so an entry that a feeder, syncup or
recovery reaches by VLSN is never erased. One that is (a forged erasure, even in its well-formed form)
was once returned as an ``Erased`` entry, and the VLSN stream changed silently; now the scanners name it.
"""

import pytest

from minidb.errors import CorruptionError
from minidb.log import file_name
from minidb.logstore.eraser import ERASER_STATS, erase_file, locate
from minidb.stats import Stats

from tests.corruption.build_replication import build, open_env
from tests.corruption.state import disk_with


def test_an_erased_replicated_entry_inside_the_index_range_is_corruption_naming_it():
    state = build()
    start = open_env(disk_with(state.files)).recovery_info.scan_start
    first = state.model["vlsns"][0]
    # The first replicated entry before the recovery interval, in a file the eraser could erase: recovery
    # itself does not read it, only a lookup by VLSN does.
    vlsn, lsn, _ = next(item for item in state.model["vlsns"] if item[1].file < start.file)
    assert vlsn >= first[0]
    disk = disk_with(state.files)
    with disk.open(file_name(lsn.file)) as f:
        buf = f.read_all()
    erase_file(disk, lsn.file, locate(buf, [lsn.offset]), Stats("Eraser", ERASER_STATS))
    env = open_env(disk)  # recovery reads from the checkpoint on: it opens
    with pytest.raises(CorruptionError, match=rf"{file_name(lsn.file)} at offset 0x{lsn.offset:x}: the entry of "
                                              rf"VLSN {vlsn} at {lsn} is erased"):
        env.vlsn_index.find(vlsn)
    with pytest.raises(CorruptionError, match=str(lsn)):
        env.vlsn_index.backward_scanner().find(vlsn)
