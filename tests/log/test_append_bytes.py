"""Appending writes exactly the reference bytes, for every entry type and every header option.

``LogManager.append`` encodes an entry's item with the type's codec and packs its header with
:func:`minidb.log.header.pack_header`; the bytes expected are :func:`~minidb.log.header.pack_entry`
over the reference codec's item (the field table walked field by field). A seeded (derandomized) property run appends random entries
drawn from all registered types, plain, provisional and replicated (VLSN given or allocated), in a
log small enough that files flip and the buffer is written often; it compares every entry's bytes in
the files with the expected ones, and where files flip and how often the buffer is written with a
model of the rules (``where_entries_go``).
"""

from hypothesis import HealthCheck, given, settings, strategies as st

import minidb.cli.engines  # noqa: F401  (registers every engine's entry types, replication's too)
from minidb.io import SimDisk
from minidb.log import FILE_HEADER, LSN, Provisional, file_name, known_types
from minidb.log.codec import Codec
from minidb.log.header import REPLICATED, VLSN_PRESENT, pack_entry
from minidb.log.manager import FILE_HEADER_SIZE

from tests.log.helpers import new_log
from tests.log.test_types import values_for

TYPES = [t for t in known_types() if t is not FILE_HEADER]
FILE_MAX, BUFFER_SIZE = 2048, 300
SEEDED = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# how an entry is appended: (provisional, replicated, give a VLSN)
OPTIONS = st.sampled_from([
    (Provisional.NO, False, False),  # the plain entry: the fast test in append
    (Provisional.YES, False, False),
    (Provisional.BEFORE_CKPT_END, False, False),
    (Provisional.NO, True, False),  # replicated, the VLSN allocated under the latch
    (Provisional.NO, False, True),  # a VLSN given
    (Provisional.YES, True, True),
])


@st.composite
def appends(draw):
    entry_type = draw(st.sampled_from(TYPES))
    return entry_type, draw(values_for(entry_type)), draw(OPTIONS)



@SEEDED
@given(st.lists(appends(), min_size=1, max_size=40))
def test_appended_entries_are_the_reference_bytes(batch):
    disk = SimDisk("append-bytes")
    log = new_log(disk, file_max=FILE_MAX, buffer_size=BUFFER_SIZE)
    allocated = []  # the VLSNs the allocator gave, in order
    log.vlsn_allocator = lambda: allocated.append(1000 + len(allocated)) or allocated[-1]
    expected = []  # (lsn, the reference's bytes) of each entry appended
    for number, (entry_type, values, (provisional, replicated, give_vlsn)) in enumerate(batch, 1):
        lsn = log.append(entry_type, values, provisional=provisional, replicated=replicated,
                         vlsn=number if give_vlsn else None)
        flags, vlsn = provisional.value, None
        if replicated or give_vlsn:
            flags |= REPLICATED | VLSN_PRESENT
            vlsn = number if give_vlsn else allocated[-1]
        prev = expected[-1][0].offset if expected and expected[-1][0].file == lsn.file else 0
        item = Codec(entry_type.name, entry_type.all_fields).encode(values)
        expected.append((lsn, pack_entry(entry_type.code, flags, prev, item, vlsn)))
    lsns, writes = where_entries_go([len(data) for _, data in expected])
    assert [lsn for lsn, _ in expected] == lsns  # files flip where they should
    assert log.stats["nWrites"] == writes  # and the buffer is written when it should be
    log.sync()
    files = {n: _file(disk, n) for n in {lsn.file for lsn in lsns}}
    for lsn, data in expected:
        assert files[lsn.file][lsn.offset:lsn.offset + len(data)] == data, f"entry at {lsn}"
    last, data = expected[-1]
    assert len(files[last.file]) == last.offset + len(data)
    assert log.stats["nEntries"] == len(expected) + len(files)  # and a FileHeader per file
    assert log.stats["nBytes"] == sum(len(d) for _, d in expected) + FILE_HEADER_SIZE * len(files)
    log.close()


def where_entries_go(sizes):
    """The LSNs of entries of these sizes, and the buffer writes before a sync, by the rules of the
    module documentation: a file flips when the next entry would pass ``file_max`` (unless the file
    holds only its FileHeader), the buffer is written when the next entry would not fit in it."""
    file, offset, last_offset, buffered, writes, lsns = 1, FILE_HEADER_SIZE, 0, FILE_HEADER_SIZE, 0, []
    for size in sizes:
        if offset + size > FILE_MAX and last_offset:
            writes += 1  # the old file's last bytes, before its fsync
            file, offset, last_offset, buffered = file + 1, FILE_HEADER_SIZE, 0, FILE_HEADER_SIZE
        if buffered and buffered + size > BUFFER_SIZE:
            writes, buffered = writes + 1, 0
        lsns.append(LSN(file, offset))
        last_offset, offset, buffered = offset, offset + size, buffered + size
    return lsns, writes


def _file(disk, number):
    with disk.open(file_name(number)) as f:
        return f.read_all()
