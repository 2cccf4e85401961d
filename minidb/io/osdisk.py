"""Real files: the :class:`~minidb.io.base.Disk` interface on an OS directory.

Reads and writes use ``os.pread``/``os.pwrite`` on file descriptors, so no
Python-level buffering hides a write from ``fsync``. Operating-system errors
come back as the simulated disk's do: a full disk (``ENOSPC``, ``EDQUOT``) is
a :class:`~minidb.errors.DiskFullError`, any other failure (``EIO``) a
:class:`~minidb.errors.DiskError` naming the file and what was being done. Creating, deleting and
renaming a file also fsyncs the directory, which makes those changes durable
when the call returns, as the interface promises.

``free_space()`` asks the file system (``statvfs``: the blocks an unprivileged
writer may still take) and keeps back one block for each partly written
block a write may have to complete; ``allocate`` is ``posix_fallocate``
where the system has it, writing zeros otherwise, so the blocks are really
taken (a file grown by ``truncate`` is sparse and takes them only when
written).
"""

from __future__ import annotations

import errno
import os

from minidb.errors import DiskError, DiskFullError, UserError
from minidb.io.base import Disk, File

ZERO_CHUNK = 1 << 20  # allocate writes zeros in pieces this big where posix_fallocate is missing
KEPT_BLOCKS = 4  # free_space keeps back a block for each partly written block a write may complete


def disk_error(path: str, doing: str, error: OSError) -> DiskError:
    """An OS error as the disk interface reports it: a full disk is a DiskFullError."""
    cls = DiskFullError if error.errno in (errno.ENOSPC, errno.EDQUOT) else DiskError
    return cls(f"{path}: {doing} failed: {error.strerror or error}")


class OSFile(File):
    def __init__(self, disk: "OSDisk", name: str, fd: int):
        self.disk = disk
        self.name = name
        self._fd = fd

    def _check_open(self) -> int:
        if self._fd < 0:
            raise DiskError(f"{self.disk.where(self.name)}: file is closed")
        return self._fd

    def _fail(self, doing: str, error: OSError) -> DiskError:
        return disk_error(self.disk.where(self.name), doing, error)

    def read(self, offset: int, size: int) -> bytes:
        try:
            return os.pread(self._check_open(), size, offset)
        except OSError as e:
            raise self._fail(f"reading {size} bytes at offset {offset}", e) from None

    def write(self, offset: int, data: bytes) -> None:
        self.disk.check_writable(self.name)
        fd = self._check_open()
        view = memoryview(data)
        try:
            while view:
                n = os.pwrite(fd, view, offset)
                view = view[n:]
                offset += n
        except OSError as e:
            raise self._fail(f"writing {len(view)} bytes at offset {offset}", e) from None

    def append(self, data: bytes) -> int:
        offset = self.size()
        self.write(offset, data)
        return offset

    def fsync(self) -> None:
        # After a failed fsync the kernel may have dropped the dirty pages and
        # a second fsync may then succeed: callers must treat the file's
        # unsynced writes as lost (the log refuses to go on until reopened).
        try:
            os.fsync(self._check_open())
        except OSError as e:
            raise self._fail("fsync", e) from None

    def truncate(self, size: int) -> None:
        self.disk.check_writable(self.name)
        try:
            os.ftruncate(self._check_open(), size)
        except OSError as e:
            raise self._fail(f"truncating to {size} bytes", e) from None

    def allocate(self, size: int) -> None:
        self.disk.check_writable(self.name)
        current = self.size()
        if size <= current:
            return
        try:
            if hasattr(os, "posix_fallocate"):
                os.posix_fallocate(self._check_open(), current, size - current)
                return
        except OSError as e:
            if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL):  # a file system without it: zeros below
                raise self._fail(f"allocating {size} bytes", e) from None
        for offset in range(current, size, ZERO_CHUNK):
            self.write(offset, bytes(min(ZERO_CHUNK, size - offset)))

    def size(self) -> int:
        try:
            return os.fstat(self._check_open()).st_size
        except OSError as e:
            raise self._fail("fstat", e) from None

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class OSDisk(Disk):
    """A directory of the operating system.

    ``OSDisk(path)`` requires the directory to exist; ``create=True`` makes it.
    ``readonly=True`` opens files for reading only and refuses every change,
    so inspecting tools (``minidb printlog``) cannot alter what they inspect.
    """

    def __init__(self, path: str | os.PathLike, create: bool = False, readonly: bool = False):
        self.path = os.fspath(path)
        self.readonly = readonly
        if not os.path.isdir(self.path):
            if os.path.exists(self.path):
                raise UserError(f"{self.path}: not a directory")
            if not create:
                raise UserError(f"{self.path}: no such directory")
            try:
                os.makedirs(self.path)
            except OSError as e:
                raise DiskError(f"{self.path}: cannot create the directory: {e.strerror}") from None

    def where(self, name: str = "") -> str:
        return os.path.join(self.path, name) if name else self.path

    def check_writable(self, name: str = "") -> None:
        if self.readonly:
            raise DiskError(f"{self.where(name)}: disk is opened read-only")

    def _fsync_dir(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as e:
            raise disk_error(self.path, "fsync of the directory", e) from None

    def open(self, name: str, create: bool = False) -> File:
        path = self.where(self.check_name(name))
        if create:
            self.check_writable(name)
        flags = os.O_RDONLY if self.readonly else os.O_RDWR
        existed = os.path.exists(path)
        if create:
            flags |= os.O_CREAT
        try:
            fd = os.open(path, flags, 0o644)
        except FileNotFoundError:
            raise DiskError(f"{path}: no such file") from None
        except OSError as e:
            raise disk_error(path, "opening", e) from None
        if create and not existed:
            self._fsync_dir()
        return OSFile(self, name, fd)

    def exists(self, name: str) -> bool:
        return os.path.isfile(self.where(self.check_name(name)))

    def list(self) -> list[str]:
        return sorted(n for n in os.listdir(self.path) if os.path.isfile(self.where(n)))

    def delete(self, name: str) -> None:
        self.check_writable(name)
        try:
            os.remove(self.where(self.check_name(name)))
        except FileNotFoundError:
            raise DiskError(f"{self.where(name)}: no such file") from None
        except OSError as e:
            raise disk_error(self.where(name), "deleting", e) from None
        self._fsync_dir()

    def rename(self, old: str, new: str) -> None:
        self.check_writable(old)
        if not self.exists(old):
            raise DiskError(f"{self.where(old)}: no such file")
        try:
            os.replace(self.where(old), self.where(self.check_name(new)))
        except OSError as e:
            raise disk_error(self.where(old), f"renaming to {new}", e) from None
        self._fsync_dir()

    def free_space(self) -> int | None:
        try:
            fs = os.statvfs(self.path)
        except OSError as e:
            raise disk_error(self.path, "statvfs", e) from None
        return max(0, (fs.f_bavail - KEPT_BLOCKS) * fs.f_frsize)

    def size(self, name: str) -> int:
        try:
            return os.path.getsize(self.where(self.check_name(name)))
        except FileNotFoundError:
            raise DiskError(f"{self.where(name)}: no such file") from None

    def __repr__(self) -> str:
        return f"OSDisk({self.path!r})"
