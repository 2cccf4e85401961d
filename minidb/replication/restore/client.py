"""The node's side of a network restore (JE's ``NetworkRestore``): ask a member for its log, stage, verify, install.

A node whose syncup ends in :class:`~minidb.replication.errors.NetworkRestoreRequiredError`
(no common sync point, or a rollback past its limit), or a node joining
with an empty directory, replaces its log with a member's. With its
environment closed, it opens a connection to the member (after the
handshake) and steps a :class:`NetworkRestore`:

1. an install a crash cut short is finished, and the incomplete staging
   area of an earlier attempt discarded (:mod:`.staging`);
2. ``FileListRequest``; the member's ``FileList`` and ``FileInfo`` say
   which files, how long, and their CRC-32s (:mod:`.server`);
3. for each file in turn: ``FileRequest``, then ``FileStart``, the
   ``FileChunk`` messages, each written at its offset into ``restore.<name>``
   (a chunk anywhere else, or of another file, is refused), and ``FileEnd``:
   the file is fsynced and its length and CRC-32 must be the listed ones;
4. the staged log is verified by the log's own verifier, the marker is
   written last and fsynced, ``RestoreDone`` is sent, and the files are
   installed (renamed over the node's log, whose old files go only now).

The caller then opens the environment on the restored log. A file that
does not match its checksum, or a staged log that does not verify, raises
:class:`~minidb.replication.errors.RestoreChecksumError` (naming file and
offset): the staging area is discarded and nothing is installed. A dropped
connection raises :class:`~minidb.replication.errors.NetworkRestoreError`:
the node's own files are untouched, and the next attempt starts over. A
crash anywhere leaves either the node's old log (and a staging area the
next attempt or the next open discards) or, once the marker is durable, an
install that the next open finishes (:func:`~.staging.finish_restore`):
never half of each that opens.

Example, on the in-memory network (the member ``n1`` serving ``n4``)::

    restore = NetworkRestore(disk, channel, "bank", "n1", reason="empty directory")
    server = LogFileFeeder(n1_env, accepted_channel, "n4")
    while not restore.done:
        net.deliver(); server.pump(); net.deliver(); restore.pump()
    restore.summary()     # files 1..2 received, 3 021 bytes, every checksum verified
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from minidb.io import Disk, File
from minidb.log.files import file_name
from minidb.replication.errors import ConnectionClosedError, NetworkRestoreError, RestoreChecksumError
from minidb.replication.restore.staging import (
    FileInfo,
    Installed,
    StagingDisk,
    discard,
    install,
    verify_staged,
    write_marker,
)
from minidb.replication.stream import wire


@dataclass(frozen=True)
class ReceivedFile:
    """One file of a restore as the node received it."""

    number: int
    length: int
    checksum: int
    chunks: int
    verified: bool

    @property
    def name(self) -> str:
        return file_name(self.number)


class NetworkRestore:
    """Receives a member's log files into the staging area and installs them (see the module documentation)."""

    def __init__(self, disk: Disk, channel, group_name: str, server_name: str, reason: str = ""):
        self.disk = disk
        self.channel = channel
        self.group_name = group_name
        self.server_name = server_name
        self.staging = StagingDisk(disk)
        install(disk)  # an install a crash cut short is finished first (the old files may be gone already)
        self.discarded = discard(disk)  # an earlier attempt's incomplete staging area
        self.count: int | None = None  # how many files the member listed
        self.log_head = 1
        self.listed: list[FileInfo] = []
        self.received: list[ReceivedFile] = []
        self.bytes_received = 0
        self.chunks_received = 0
        self._file: FileInfo | None = None  # the file being received, and its staged copy:
        self._handle: File | None = None
        self._offset = self._crc = self._chunks = 0  # where the next chunk goes, the CRC-32 so far, chunks taken
        self.installed: Installed | None = None
        self.done = False
        channel.send(wire.encode(group_name, "FileListRequest", reason=reason))

    def pump(self, timeout: float | None = 0) -> int:
        """Take what arrived (waiting up to ``timeout`` for a first message, over TCP); how many messages."""
        moved = 0
        try:
            while not self.done and (message := self.channel.receive(timeout)) is not None:
                timeout = 0
                moved += 1
                self.handle(message)
        except ConnectionClosedError as e:
            self._close_file()
            where = f" in the middle of {self._file.name} (at 0x{self._offset:x})" if self._file is not None else ""
            raise NetworkRestoreError(f"network restore from {self.server_name}: the connection dropped{where} "
                                      f"({e}); nothing was installed, the node may try again") from e
        except RestoreChecksumError:
            self._abandon()
            raise
        return moved

    def handle(self, message: wire.Message) -> None:
        kind = message.type
        if kind == "FileList":
            self.count, self.log_head = message["count"], message["log_head"]
            self._next_file()
        elif kind == "FileInfo":
            self.listed.append(FileInfo(message["file_number"], message["length"], message["checksum"]))
            self._next_file()
        elif kind == "FileStart":
            self._start(message["file_number"], message["length"])
        elif kind == "FileChunk":
            self._chunk(message["file_number"], message["offset"], message["data"])
        elif kind == "FileEnd":
            self._end(message["file_number"], message["length"], message["checksum"])
        elif kind == "RestoreRefused":
            self._abandon()
            raise NetworkRestoreError(f"network restore: {self.server_name} refused: {message['reason']}")

    # -- receiving -----------------------------------------------------------------------------------
    def _expected(self) -> FileInfo | None:
        """The next file to receive, once the whole list arrived."""
        if self.count is None or len(self.listed) < self.count:
            return None
        done = len(self.received)
        return self.listed[done] if done < len(self.listed) else None

    def _next_file(self) -> None:
        if self._file is not None:
            return
        info = self._expected()
        if info is not None:
            self.channel.send(wire.encode(self.group_name, "FileRequest", file_number=info.number))
        elif self.count is not None and len(self.received) == self.count:
            self._finish()

    def _start(self, number: int, length: int) -> None:
        info = self._expected()
        if info is None or info.number != number or info.length != length or self._file is not None:
            raise RestoreChecksumError(self.staging.where(file_name(number)), 0,
                                       f"FileStart of {length} bytes, not the file asked for "
                                       f"({info.name + f' of {info.length} bytes' if info else 'none'})")
        self._handle = self.staging.open(info.name, create=True)
        self._handle.truncate(0)
        self._file, self._offset, self._crc, self._chunks = info, 0, 0, 0

    def _chunk(self, number: int, offset: int, data: bytes) -> None:
        info = self._file
        if info is None or info.number != number or offset != self._offset or offset + len(data) > info.length:
            raise RestoreChecksumError(self.staging.where(file_name(number)), offset,
                                       f"a chunk of {len(data)} bytes is out of place (expected "
                                       f"{info.name + f' at 0x{self._offset:x}' if info else 'none'})")
        assert self._handle is not None
        self._handle.write(offset, data)
        self.bytes_received += len(data)
        self.chunks_received += 1
        self._offset, self._crc, self._chunks = offset + len(data), zlib.crc32(data, self._crc), self._chunks + 1

    def _end(self, number: int, length: int, checksum: int) -> None:
        info = self._file
        if info is None or info.number != number:
            raise RestoreChecksumError(self.staging.where(file_name(number)), 0, "FileEnd of a file not being sent")
        if self._offset != info.length or length != info.length or self._crc != info.checksum \
                or checksum != info.checksum:
            raise RestoreChecksumError(self.staging.where(info.name), 0,
                                       f"received {self._offset} bytes with CRC-32 0x{self._crc:08x}; the member "
                                       f"listed {info.length} bytes, 0x{info.checksum:08x} (and ended with "
                                       f"{length}, 0x{checksum:08x})")
        assert self._handle is not None
        self._handle.fsync()
        self._close_file()
        self._file = None
        self.received.append(ReceivedFile(info.number, info.length, info.checksum, self._chunks, verified=True))
        self._next_file()

    def _finish(self) -> None:
        verify_staged(self.disk, self.listed, self.log_head)
        write_marker(self.disk, self.listed, self.log_head)  # from here on the restore is installed
        try:
            self.channel.send(wire.encode(self.group_name, "RestoreDone", files=len(self.received),
                                          total_bytes=self.bytes_received))
        except ConnectionClosedError:
            pass  # the member lets the files go when it sees the connection closed
        self.channel.close()
        self.installed = install(self.disk)
        self.done = True

    def _close_file(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def _abandon(self) -> None:
        """A bad file or a refusal: the staging area goes, the connection closes; the node's files stay."""
        self._close_file()
        self._file = None
        self.channel.close()
        discard(self.disk)

    def summary(self) -> dict:
        """Files received (number, length, checksum, chunks, verified), bytes, and what the install did."""
        return {"server": self.server_name, "log_head": self.log_head, "files": list(self.received),
                "bytes": self.bytes_received, "discarded": list(self.discarded),
                "installed": list(self.installed.installed) if self.installed else [],
                "removed": list(self.installed.removed) if self.installed else []}

    def __repr__(self) -> str:
        return (f"NetworkRestore(from {self.server_name}: {len(self.received)} of {self.count or '?'} files, "
                f"{self.bytes_received} bytes{', installed' if self.done else ''})")


__all__ = ["NetworkRestore", "ReceivedFile"]
