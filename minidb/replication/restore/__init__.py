"""Network restore (JE's ``NetworkRestore`` and ``LogFileFeeder``): a node gets a member's log files over the wire.

Reading order: ``staging`` (the ``restore.*`` staging area, its marker, the
install that rolls forward, what it deletes), ``checksums`` (each file's
CRC-32, cached), ``server`` (the member: the file list, the files protected
while they are sent, the chunks), ``client`` (the node: receive, check, verify, install).

Invariants: the node's own files go only after every new file is on its
disk, checked against the member's CRC-32s and verified as a log; the
marker, written last and fsynced, is the one moment the restore happens, so
a crash or a dropped connection leaves the old log (and a staging area that
is discarded) or an install the next open finishes, never half of each;
the member's files being sent are protected from the cleaner and the eraser.
"""

from minidb.replication.restore.checksums import FileChecksums
from minidb.replication.restore.client import NetworkRestore, ReceivedFile
from minidb.replication.restore.server import LogFileFeeder
from minidb.replication.restore.staging import FileInfo, StagingDisk, finish_restore, install

__all__ = ["NetworkRestore", "ReceivedFile", "LogFileFeeder", "FileChecksums", "FileInfo", "StagingDisk",
           "finish_restore", "install"]
