"""Real files: the :class:`~minidb.io.base.Disk` interface on an OS directory.

Reads and writes use ``os.pread``/``os.pwrite`` on file descriptors, so no
Python-level buffering hides a write from ``fsync``. Creating, deleting and
renaming a file also fsyncs the directory, which makes those changes durable
when the call returns, as the interface promises.
"""

from __future__ import annotations

import os

from minidb.errors import DiskError, UserError
from minidb.io.base import Disk, File


class OSFile(File):
    def __init__(self, disk: "OSDisk", name: str, fd: int):
        self.disk = disk
        self.name = name
        self._fd = fd

    def _check_open(self) -> int:
        if self._fd < 0:
            raise DiskError(f"{self.disk.where(self.name)}: file is closed")
        return self._fd

    def read(self, offset: int, size: int) -> bytes:
        return os.pread(self._check_open(), size, offset)

    def write(self, offset: int, data: bytes) -> None:
        self.disk.check_writable(self.name)
        fd = self._check_open()
        view = memoryview(data)
        while view:
            n = os.pwrite(fd, view, offset)
            view = view[n:]
            offset += n

    def append(self, data: bytes) -> int:
        offset = self.size()
        self.write(offset, data)
        return offset

    def fsync(self) -> None:
        os.fsync(self._check_open())

    def truncate(self, size: int) -> None:
        self.disk.check_writable(self.name)
        os.ftruncate(self._check_open(), size)

    def size(self) -> int:
        return os.fstat(self._check_open()).st_size

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
        fd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

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
            raise DiskError(f"{path}: {e.strerror}") from None
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
        self._fsync_dir()

    def rename(self, old: str, new: str) -> None:
        self.check_writable(old)
        if not self.exists(old):
            raise DiskError(f"{self.where(old)}: no such file")
        os.replace(self.where(old), self.where(self.check_name(new)))
        self._fsync_dir()

    def size(self, name: str) -> int:
        try:
            return os.path.getsize(self.where(self.check_name(name)))
        except FileNotFoundError:
            raise DiskError(f"{self.where(name)}: no such file") from None

    def __repr__(self) -> str:
        return f"OSDisk({self.path!r})"
