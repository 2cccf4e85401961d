"""The member's side of a network restore (JE's ``LogFileFeeder``): its log files, listed, then sent in chunks.

A node that cannot sync up (:class:`~minidb.replication.errors.NetworkRestoreRequiredError`)
or that joins with an empty directory asks a member of the group for its
log files (:mod:`.client`). The member answers on the connection the node
opened (after the handshake, :mod:`minidb.replication.stream.network`), in
the messages of :mod:`minidb.replication.stream.wire` (0x40-0x4f):

- ``FileListRequest`` -> ``FileList`` (count, log head, total bytes), then
  one ``FileInfo`` per file (number, length, CRC-32);
- ``FileRequest`` n -> ``FileStart``, ``FileChunk`` ... (at most
  ``chunk_size`` bytes each, at increasing offsets), ``FileEnd`` (the length
  and CRC-32 of the bytes sent);
- ``RestoreDone``: the node installed the files; the member lets them go.

Invariants:

- **what is listed is what is sent.** The member flushes its log buffer
  and lists its files from its log head to its last, each at its present
  length; the last file, still growing, is listed up to the end of its
  last whole entry, so the bytes listed never change while the master
  keeps writing after them;
- **the log sent ends at a sync point.** When replicated entries follow
  the member's last sync point (a Commit, an Abort, a Matchpoint, a
  TermStart: ``range.last_sync``), the log sent ends right after that
  entry: a later file is left out, the file holding it is cut there (an
  entry boundary, as a crash leaves it). The restored node's syncup then
  finds its last VLSN as the matchpoint and has nothing to roll back;
  sending the entries after it would make the node roll them back, and
  the checkpoint that ends its first open puts them past the rollback
  limit: a restore again, for ever. The node streams them instead;
- **the files sent are protected** (JE's ``FileProtector``,
  :mod:`minidb.logstore.cleaner.protect`): from the list on, the files
  listed are registered as ``network restore to <node>``, so neither the
  log cleaner (checkpoint step 9) deletes them nor the data eraser
  (``protected_files``) changes them. The protection is released when the
  node says ``RestoreDone``, when the connection drops (a ``pump`` that
  meets a closed connection), and at :meth:`LogFileFeeder.close`;
- **checksums are cached** per file (:class:`FileChecksums`, JE's response
  cache): a second restore, or the growing last file, reads only bytes it
  has not summed yet (CRC-32 continues from a prefix's value). A file the
  eraser changes keeps its length, so the eraser drops the file's cached
  checksum first (:meth:`FileChecksums.clear`, JE's
  ``RepImpl.clearedCachedFileChecksum``; the replicated environment's
  eraser calls it before it erases a file), and a syncup rollback, which
  marks entries INVISIBLE in place, drops them all (``generation``).

Stepped like the feeder: :meth:`LogFileFeeder.pump` answers what arrived
and sends at most ``max_chunks`` chunks of the file being sent, so a single
thread can serve a restore over TCP (the socket buffers never fill) and the
in-memory network's script decides when messages move.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

from minidb.log import LSN
from minidb.log.files import file_name, log_file_numbers
from minidb.replication.errors import ConnectionClosedError
from minidb.replication.restore.checksums import FileChecksums
from minidb.replication.restore.staging import FileInfo
from minidb.replication.stream import wire

if TYPE_CHECKING:
    from minidb.replication.env import ReplicatedEnvironment

DEFAULT_CHUNK = 64 * 1024  # bytes per FileChunk
DEFAULT_MAX_CHUNKS = 16  # chunks one pump sends


class LogFileFeeder:
    """Serves one network restore from ``env``'s log files (see the module documentation)."""

    def __init__(self, env: "ReplicatedEnvironment", channel, client_name: str, chunk_size: int = DEFAULT_CHUNK,
                 max_chunks: int = DEFAULT_MAX_CHUNKS):
        if chunk_size < 1 or max_chunks < 1:
            raise ValueError(f"chunk_size and max_chunks are at least 1, not {chunk_size}, {max_chunks}")
        self.env = env
        self.channel = channel
        self.client_name = client_name
        self.chunk_size = chunk_size
        self.max_chunks = max_chunks
        self.files: dict[int, FileInfo] = {}  # what was listed
        self.protected = None  # the ProtectedFileSet of the files listed
        self.sending: tuple[FileInfo, int, int] | None = None  # (file, next offset, CRC-32 so far)
        self.files_sent: list[int] = []
        self.bytes_sent = 0
        self.done = False  # the node said RestoreDone
        self.closed = False

    @property
    def protector(self):
        return self.env.env.cleaner.protector

    @property
    def group_name(self) -> str:
        return self.env.group.name if self.env.group is not None else "standalone"

    def _send(self, type_name: str, **values) -> None:
        self.channel.send(wire.encode(self.group_name, type_name, **values))

    def pump(self, timeout: float | None = 0) -> int:
        """Answer what arrived, then send the next chunks of the file asked for; how many messages moved.

        A dropped connection releases the protection, then raises ConnectionClosedError."""
        moved = 0
        try:
            while not self.closed and (message := self.channel.receive(timeout)) is not None:
                timeout = 0
                moved += 1
                self.handle(message)
            if self.sending is not None and not self.closed:
                moved += self._send_chunks()
        except ConnectionClosedError:
            self.close()
            raise
        return moved

    def handle(self, message: wire.Message) -> None:
        if message.type == "FileListRequest":
            self._list()
        elif message.type == "FileRequest":
            self._start_file(message["file_number"])
        elif message.type == "RestoreDone":
            self.done = True
            self.close()
        else:
            self._refuse(f"{self.channel.where}: a network restore does not expect {message.type}")

    def _refuse(self, reason: str) -> None:
        try:
            self._send("RestoreRefused", reason=reason)
        finally:
            self.close()

    def _list(self) -> None:
        env = self.env.env
        with env.latch:
            env.log.flush()  # whole entries in the files: what is listed does not change
            end = self._end_of_sync()
            numbers = [n for n in log_file_numbers(env.disk) if n <= end.file]
            if not numbers:
                self._refuse(f"{self.env.node_name} has no log files to send")
                return
            if self.protected is None:
                self.protected = self.protector.protect(f"network restore to {self.client_name}", numbers[0],
                                                        numbers[-1])
        checksums = self.env.file_checksums
        infos = []
        for n in numbers:
            size = env.disk.size(file_name(n))
            length = min(end.offset, size) if n == end.file else size
            infos.append(FileInfo(n, length, checksums.checksum(n, length)))
        self.files = {info.number: info for info in infos}
        self._send("FileList", count=len(infos), log_head=numbers[0], total_bytes=sum(i.length for i in infos))
        for info in infos:
            self._send("FileInfo", file_number=info.number, length=info.length, checksum=info.checksum)

    def _end_of_sync(self) -> LSN:
        """Where the log sent ends: after the entry of the last sync point when replicated entries follow it
        (see the module documentation), else at the log's end."""
        current = self.env.range
        if not current.last_sync or current.last_sync >= current.last:
            return self.env.log.end_lsn
        entry = self.env.vlsn_index.backward_scanner().find(current.last_sync)
        return LSN(entry.lsn.file, entry.lsn.offset + entry.header.entry_size)

    def _start_file(self, number: int) -> None:
        info = self.files.get(number)
        if info is None:
            self._refuse(f"file {file_name(number)} was not listed (listed: "
                         f"{', '.join(file_name(n) for n in self.files) or 'none'})")
            return
        self._send("FileStart", file_number=number, length=info.length)
        self.sending = (info, 0, 0)

    def _send_chunks(self) -> int:
        assert self.sending is not None
        info, offset, crc = self.sending
        sent = 0
        with self.env.disk.open(info.name) as f:
            while offset < info.length and sent < self.max_chunks:
                data = f.read(offset, min(self.chunk_size, info.length - offset))
                self._send("FileChunk", file_number=info.number, offset=offset, data=data)
                offset, crc, sent = offset + len(data), zlib.crc32(data, crc), sent + 1
                self.bytes_sent += len(data)
        if offset < info.length:
            self.sending = (info, offset, crc)
            return sent
        self._send("FileEnd", file_number=info.number, length=offset, checksum=crc)
        self.files_sent.append(info.number)
        self.sending = None
        return sent + 1

    def close(self) -> None:
        """Release the protected files and close the connection (again: nothing more happens)."""
        if self.protected is not None:
            self.protector.release(self.protected)
            self.protected = None
        self.closed = True
        self.channel.close()

    def __repr__(self) -> str:
        return (f"LogFileFeeder({self.env.node_name} -> {self.client_name}, {len(self.files_sent)} of "
                f"{len(self.files)} files sent)")


__all__ = ["LogFileFeeder", "FileChecksums", "DEFAULT_CHUNK", "DEFAULT_MAX_CHUNKS"]
