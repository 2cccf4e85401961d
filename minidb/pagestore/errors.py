"""The errors of the page store.

All are :class:`~minidb.errors.MinidbError` subclasses whose message names
what went wrong and where (the volume file, the page id, the store). Requests
that are wrong in themselves (a page of another store, a store that does not
exist, freeing a page that is not allocated) are also
:class:`~minidb.errors.UserError`, so the CLI reports them as user errors.
Every operation checks before it changes anything: when one of these is
raised, the volume, its pages and the log are as they were.
"""

from __future__ import annotations

from minidb.errors import MinidbError, UserError


class PageStoreError(MinidbError):
    """Base class of the page store's errors."""


class VolumeError(PageStoreError):
    """A volume file cannot be used: missing, not a minidb volume, corrupt header."""


class VolumeFullError(PageStoreError):
    """No free extent is left on the volume (or no free store number)."""


class BadRequestError(PageStoreError, UserError):
    """The request is wrong: an id out of range, a store that does not exist,
    a page that is not allocated or belongs to another store."""


class TornPageError(PageStoreError):
    """A page read from disk has different LSNs in its header and its footer:
    its last write reached the disk only in part."""


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
