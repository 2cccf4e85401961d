"""The errors minidb raises, in one place.

Every error that a user can cause (a missing directory, a file that is not a
minidb log, a bad LSN, a corrupt entry) is a :class:`MinidbError`. Its message
names *what* went wrong and *where* (file, offset, page id...), so the CLI can
print it as one line and exit with code 2 (user error) or 1 (a check failed:
a :class:`CorruptionError`, damage found on disk).
Errors are raised before anything is changed: an operation that fails leaves
the disk and the in-memory state as they were.

One check lives here because both engines make it: a ``str`` key, value or
name is stored as UTF-8, and a str without a UTF-8 form (a lone surrogate,
``"\\ud800"``) is a user error naming what it was (:func:`utf8`), not a
``UnicodeEncodeError`` from deep inside an engine.
"""


class MinidbError(Exception):
    """Base class of every error minidb raises on purpose."""


class UserError(MinidbError):
    """The request itself is wrong: bad syntax, a missing path, a wrong id."""


def utf8(text: str, what: str, error: type[UserError] = UserError) -> bytes:
    """``text`` as UTF-8; a str that has none (a lone surrogate) raises ``error`` naming ``what``."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise error(f"{what} {text[:40]!r} is not valid Unicode: {e.reason} at index {e.start} "
                    f"(it has no UTF-8 form)") from None


def as_bytes(value: bytes | str, what: str) -> bytes:
    """``value`` as bytes: a str as UTF-8, a bytes-like object copied; anything else is a UserError."""
    if isinstance(value, str):
        return utf8(value, what)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise UserError(f"{what} must be bytes or str, not {type(value).__name__}")


class DiskError(MinidbError):
    """An I/O operation failed (a missing file, a failing fsync, a full disk)."""


class DiskFullError(DiskError):
    """A write needed more space than the disk has; nothing was written."""


class SimulatedCrash(MinidbError):
    """The simulated disk crashed at a scheduled point; the process 'died'."""


class CorruptionError(MinidbError):
    """Data on disk is damaged: a check failed (the CLI exits with code 1).

    The message names the file and offset, or the page, of the damage.
    """


class LogError(MinidbError):
    """The log cannot be read as a minidb log."""


class LogFullError(LogError):
    """A bounded log has no room for an entry (no partition left, or none allocated on a full
    disk); nothing was logged."""


class LogCorruptionError(LogError, CorruptionError):
    """A bad entry lies before valid entries: the log is corrupt, not torn.

    Carries the log file name and the byte offset of the bad entry.
    """

    def __init__(self, file_name: str, offset: int, what: str):
        self.file_name = file_name
        self.offset = offset
        self.what = what
        super().__init__(f"{file_name} at offset 0x{offset:x}: {what}")


class ForeignLogFileError(LogCorruptionError):
    """A log file belongs to another environment: its FileHeader's environment id is not the log's.

    A file copied in from the wrong backup or directory; read, it would return another
    environment's data. Carries the file name (the offset is 0, the FileHeader's)."""


class LogVersionError(LogError):
    """A log file was written in a log format version this minidb does not read."""
