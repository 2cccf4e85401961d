"""The page store has no data eraser: an erased entry (type 0xff) in its log is corruption, never skipped.

A forged type byte 0xff over a committed update, or over a transaction's ``xct_end``, once made restart
skip the entry (the update gone, or the whole transaction rolled back) while ``minidb verify`` passed. Now
the forgery fails the entry's checksum (the erased form carries a checksum of its own), and a well-formed
erased entry is refused by restart's analysis and by verify all the same, each naming file and offset.
"""

import struct

import pytest

import minidb.cli
from minidb.errors import CorruptionError
from minidb.log import file_name
from minidb.log.header import ERASED_TYPE, checksum, erased_item, read_header
from minidb.log.verify import verify_log

from tests.pagestore.sm_helpers import entries, new_sm, open_again


def updated_then_crashed(what: str):
    """A committed, durable update whose page is only in the pool when the disk crashes; and the LSN of its
    last ``what`` entry (found before the crash: the log's file handles do not survive it)."""
    sm = new_sm()
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rid = sm.create_rec(t, fid, b"original")
    sm.bp.force_all()
    sm.checkpoint()
    with sm.transaction() as t:
        sm.update_rec(t, rid, 0, b"UPDATED!")
    want = sm.contents()
    target = entries(sm, (what,))[-1].lsn
    sm.disk.crash()
    return sm, want, target


def forge(disk, lsn, well_formed: bool = False) -> None:
    """Set the type byte of the entry at ``lsn`` to 0xff; ``well_formed``: the whole erased form, checksum
    included, as the log store's eraser writes it (naming an LN_TX, 0x41)."""
    with disk.open(file_name(lsn.file)) as f:
        data = bytearray(f.read_all())
        header, _ = read_header(data, lsn.offset)
        data[lsn.offset + 4] = ERASED_TYPE
        if well_formed:
            start = lsn.offset + header.size
            data[start:start + header.item_size] = erased_item(0x41, header.item_size)
            rest = bytes(data[lsn.offset + 6:start + header.item_size])
            data[lsn.offset:lsn.offset + 4] = struct.pack("<I", checksum(ERASED_TYPE, header.flags, rest))
        f.write(0, bytes(data))
        f.fsync()


def verify_exit(disk, tmp_path, capsys) -> tuple[int, str]:
    for name in disk.list():
        with disk.open(name) as f:
            (tmp_path / name).write_bytes(f.read_all())
    code = minidb.cli.main(["verify", str(tmp_path)])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("what", ["rec_splice", "xct_end"])
@pytest.mark.parametrize("well_formed", [False, True], ids=["forged", "well-formed"])
def test_an_erased_committed_update_or_xct_end_is_corruption_at_restart_and_in_verify(what, well_formed, tmp_path,
                                                                                      capsys):
    sm, want, target = updated_then_crashed(what)  # the update's, or its transaction's xct_end
    forge(sm.disk, target, well_formed)
    where = f"{file_name(target.file)} at offset 0x{target.offset:x}"
    with pytest.raises(CorruptionError, match=where):
        open_again(sm.disk)
    report = verify_log(sm.disk)
    assert report.problem is not None and str(report.problem).startswith(where)
    code, out = verify_exit(sm.disk, tmp_path, capsys)
    assert code == 1 and where in out
