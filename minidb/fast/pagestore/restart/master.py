"""The check before opening a page store's log, leaving the search for the log's end to its opening.

The reference :func:`~minidb.pagestore.restart.master.check_volume_and_log`
finds where the log ends (:func:`~minidb.log.end.scan_end`: every entry of the
last file read and checksummed) to refuse a log that ends at or before the
master checkpoint's ``chkpt_end``, and hands that end to the log's opening.
The fast restart has the opening search instead (it keeps the entries it
checked, which analysis then reads: ``keep_opening_scan``), so this twin
skips the check's search whenever the log *plainly* reaches
past the ``chkpt_end`` (:func:`reaches_past`): the entry lies in a file before
the last one (only the last file can be torn, the old file is fsynced before
a new one starts), or the last file's entries up to and including it are
intact. On any doubt it runs the whole reference check.

Safe because a yes is never wrong: an intact entry at ``chkpt_end`` in the
last file means the log's end, wherever opening finds it, lies after it; and
the checks that need no scan (files from the head, master record, volume
stamp: :func:`~minidb.pagestore.restart.master.check_log_files`) run as in
the reference. Only a caller that opens the log right after may use it;
``minidb verify`` runs the reference.
"""

from __future__ import annotations

from minidb.io import Disk
from minidb.log.end import read_file
from minidb.log.files import log_file_numbers
from minidb.log.lsn import LSN
from minidb.log.scan import FileScanner
from minidb.pagestore.restart import master
from minidb.pagestore.volume.volfile import volume_file_name


def check_volume_and_log(disk: Disk) -> None:
    """:func:`minidb.pagestore.restart.master.check_volume_and_log`, leaving the log's end to its opening
    when the log plainly reaches past the master checkpoint."""
    volume = volume_file_name(1)
    if disk.exists(volume):
        record = master.check_log_files(disk, volume)
        if record is None or reaches_past(disk, log_file_numbers(disk)[-1], record.end):
            return
    master.check_volume_and_log(disk)  # every check, the search for the log's end included


def reaches_past(disk: Disk, last_file: int, lsn: LSN) -> bool:
    """Whether the log certainly ends after the entry at ``lsn``: it lies in a file before the last one
    (only the last file can be torn), or the last file's entries up to and including it are intact.
    False means "run the reference check" (:func:`~minidb.log.end.find_end`)."""
    if lsn.file < last_file:
        return True
    if lsn.file > last_file:
        return False
    for offset, _header in FileScanner(read_file(disk, last_file), last_file):  # stops at a bad entry
        if offset >= lsn.offset:
            return offset == lsn.offset  # the entry at lsn is intact
    return False
