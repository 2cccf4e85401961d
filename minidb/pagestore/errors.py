"""The errors of the page store.

All are :class:`~minidb.errors.MinidbError` subclasses whose message names
what went wrong and where (the volume file, the page id, the store). Requests
that are wrong in themselves (a page of another store, a store that does not
exist, freeing a page that is not allocated) are also
:class:`~minidb.errors.UserError`, so the CLI reports them as user errors.
Damage found on disk (a page whose checksum or LSNs do not match, volume
maps that contradict themselves, a volume file cut short, a log that lost
entries the volume relies on) is a :class:`PageStoreCorruptionError`, also a
:class:`~minidb.errors.CorruptionError` (``minidb verify`` exits 1).
Every operation checks before it changes anything: when one of these is
raised, the volume, its pages and the log are as they were.
"""

from __future__ import annotations

from minidb.errors import CorruptionError, MinidbError, UserError


class PageStoreError(MinidbError):
    """Base class of the page store's errors."""


class VolumeError(PageStoreError):
    """A volume file cannot be used: missing, not a minidb volume, corrupt header."""


class VolumeFullError(PageStoreError):
    """No free extent is left on the volume (or no free store number)."""


class BadRequestError(PageStoreError, UserError):
    """The request is wrong: an id out of range, a store that does not exist,
    a page that is not allocated or belongs to another store."""


class PageStoreCorruptionError(PageStoreError, CorruptionError):
    """The volume or its log is damaged; the message names the page, the volume or the log file."""


class BadPageError(PageStoreCorruptionError):
    """A page read from disk is not the page last written there (torn or damaged).

    Restart's redo rebuilds such a page from the log when the page may have
    been written since its last durable image (the dirty page table);
    anywhere else it is corruption."""


class TornPageError(BadPageError):
    """A page read from disk has different LSNs in its header and its footer:
    its last write reached the disk only in part."""


class PageChecksumError(BadPageError):
    """A page read from disk does not match its checksum (a torn write, or damage)."""


class VolumeCorruptionError(VolumeError, PageStoreCorruptionError):
    """A volume is damaged: its header page, a file cut short, extent or store maps that contradict themselves."""


class LogLostError(PageStoreCorruptionError):
    """The log lacks entries that were durable: it is missing, starts late, or ends
    before the master checkpoint or before a page LSN on the volume."""


class OutOfLogSpaceError(PageStoreError):
    """A transaction's entry would eat into log space reserved for rollbacks (or there is no room
    left at all); nothing was logged, and the transaction can still roll back or abort
    (Shore's eOUTOFLOGSPACE)."""


class BufferPoolFullError(PageStoreError):
    """Every frame of the buffer pool is pinned; no victim can be chosen."""


class RecordWontFitError(PageStoreError):
    """A record does not fit in the space of a page that this user may take
    (Shore's eRECWONTFIT)."""


class SlotError(PageStoreError, UserError):
    """A slot number that is out of range, free, or already in use."""


class StaleRecordIdError(BadRequestError):
    """A record id that names no record: its store is gone or being deleted, its
    page is not allocated to the store or is not a file page, or its slot is
    not in use (Shore verifies record ids for this reason: an update through a
    stale id would corrupt the store)."""
