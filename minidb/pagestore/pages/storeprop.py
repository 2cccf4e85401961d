"""Store properties (Shore's ``sm_store_property_t``): how much of a store's life the log records.

A store's property is kept in its store node (``flags``, :mod:`minidb.pagestore.volume.stores`)
and copied into the header of each page formatted for it (``store_flags``,
:mod:`minidb.pagestore.pages.page`): the logging path looks only at the page it
changes, as Shore's generated log functions do.

==========  ============  ==================================================================
property    store flags   what is logged, and what happens at commit and restart
==========  ============  ==================================================================
REGULAR     REGULAR       everything: the default, fully recoverable
TMP         TMP           space only (store creation, page allocation and format); the
                          records' changes are not logged, not undone by an abort, never
                          forced; a restart destroys the store (Shore's ``t_temporary``)
LOAD        LOAD_FILE     space only, like TMP, for the one transaction that creates the
                          file; its pages are forced at commit, before the commit entry is
                          durable, and the store becomes REGULAR (``t_load_file``)
INSERT      INSERT_FILE   like LOAD, for pages the loading transaction *adds* to the
                          store; pages it had before stay logged (``t_insert_file``)
==========  ============  ==================================================================

The invariants, for any page of a store:

- ``logging_off(flags)``: REGULAR is not set and one of TMP, LOAD_FILE,
  INSERT_FILE is: changes to the page are applied but not logged, and the
  page LSN stays the LSN of its ``page_format``;
- ``image_pending(flags)``: REGULAR is set *together with* one of those: the
  page was made regular (at the loading transaction's commit, or by
  ``set_store_property``) after unlogged changes, and was forced then. The log
  does not hold its contents, so the first logged change logs its full
  image first (``unlogged_page_image``), which clears the other bit: a torn
  write later on is rebuilt from that image, not from a history with holes;
- ``outside_dirty_page_table(flags)``: any of TMP, LOAD_FILE, INSERT_FILE,
  with or without REGULAR: the log holds none of the page's changes, so
  restart has nothing to redo on it and no image to repair it from, and the
  buffer pool lists it in no dirty page table (it never holds back a
  checkpoint's redo LSN, and a checkpoint never names it). Restart destroys
  a TMP store; a loading transaction that loses has its pages dropped by
  undo, one that commits has forced them before its commit entry; a page
  made regular keeps a bit until its first logged change logs its image.
  The ``page_format`` of such a page is logged, and a restart that reads it
  puts the page in its table from there: that entry is the page's image;
- ``never_forced(flags)``: TMP alone: the cleaner and the forcing calls pass
  the page over (it reaches the disk only when evicted); a LOAD or INSERT
  page is written by them like any page, as its loader's commit needs.

Worked example: ``create_file(t, property=LOAD)`` makes stores with flags
LOAD_FILE; the first page is formatted (logged) with ``store_flags`` 0x04;
100 ``create_rec`` log nothing; at commit the page's flags become 0x05
(REGULAR | LOAD_FILE), it is written and fsynced, ``store_operation
set_store_flags`` 0x01 is logged, then ``xct_end``. A later ``update_rec``
logs ``unlogged_page_image`` (flags 0x01), then ``rec_splice``.
"""

from __future__ import annotations

from enum import Enum

from minidb.pagestore.errors import BadRequestError
from minidb.pagestore.pages.page import StoreFlags

UNLOGGED = StoreFlags.TMP | StoreFlags.LOAD_FILE | StoreFlags.INSERT_FILE
LOADING = StoreFlags.LOAD_FILE | StoreFlags.INSERT_FILE


class StoreProperty(Enum):
    """A file's property, by Shore's names (``t_regular``, ``t_temporary``, ``t_load_file``, ``t_insert_file``)."""

    REGULAR = StoreFlags.REGULAR
    TMP = StoreFlags.TMP
    LOAD = StoreFlags.LOAD_FILE
    INSERT = StoreFlags.INSERT_FILE

    @property
    def flags(self) -> StoreFlags:
        return self.value

    @classmethod
    def parse(cls, value: object) -> "StoreProperty":
        """A property from itself or its name (any case); a clear error for anything else."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str) and value.upper() in cls.__members__:
            return cls[value.upper()]
        names = ", ".join(cls.__members__)
        raise BadRequestError(f"{value!r} is not a store property (one of {names})")

    @classmethod
    def of(cls, flags: int) -> "StoreProperty":
        """The property of a store node's flags."""
        return cls(StoreFlags(flags))


# As plain ints: every logged change asks both questions below, and ``&`` on IntFlag members builds a
# new member through the Enum machinery, where ``int & int`` is one operation.
_UNLOGGED_BITS, _REGULAR_BIT = int(UNLOGGED), int(StoreFlags.REGULAR)


def logging_off(flags: StoreFlags) -> bool:
    bits = int(flags)
    return bool(bits & _UNLOGGED_BITS) and not bits & _REGULAR_BIT


def image_pending(flags: StoreFlags) -> bool:
    bits = int(flags)
    return bool(bits & _UNLOGGED_BITS) and bool(bits & _REGULAR_BIT)


def outside_dirty_page_table(flags: StoreFlags) -> bool:
    return bool(int(flags) & _UNLOGGED_BITS)


def never_forced(flags: StoreFlags) -> bool:
    return flags == StoreFlags.TMP
