"""The eraser's write protocol: how entries of one log file are erased in place.

Erasing an entry rewrites it into the *erased form* (:mod:`minidb.log.header`):
its type byte (offset 4 of the header) becomes ``LOG_ERASED``
(:data:`~minidb.log.header.ERASED_TYPE`, 0xff), its item becomes the entry's
original type code followed by zeros (same size), and its checksum becomes
the ordinary checksum of these bytes. The header's other fields (flags,
``prev`` offset, item size, VLSN) stay, so a scan still steps over the entry,
the ``prev`` chain of the file is unbroken, and an erased entry is checked
like any other: a forged 0xff fails its checksum. The eraser never erases an
entry whose item is empty (there would be no room for the original type).

The protocol, for one file, is the JE documentation's steps 3 to 6
(`docs/sources.md#data-eraser`), with the *intent* recorded first:

====  ===================================================================
step  what is written
====  ===================================================================
2b    the intent: ``eraser.state`` names the file and, for each entry to
      erase, its offset and original type (tmp file, fsync, rename:
      durable before any byte of the log file changes)
3     *touch* the file and fsync (JE updates the file's last-modified time
      persistently before any overwriting; the disks here keep no times,
      so the touch is the fsync itself, which also makes any write still
      pending on the file durable first)
--    overwrite the type byte of every entry to erase with 0xff, one
      1-byte write per entry
4     fsync: every chosen entry is now ``LOG_ERASED`` on disk
5     per entry: its item to the original type and zeros, then its
      checksum to the erased form's (two writes)
6     fsync: the erasure is durable
7     the state marks the file erased and drops the intent (one rename)
====  ===================================================================

Invariants, whatever write or fsync a crash follows (torn writes and any
subset of the unsynced writes included):

- before 2b's rename nothing in the file changed; from it until 7 the
  intent is on disk, naming every entry that may be in a state between its
  original form and its erased form;
- between 3 and 4 an entry named by the intent has its own type byte (and
  is intact) or 0xff over its old item and checksum;
- between 4 and 6 every such entry has type 0xff, and any prefix or subset
  of its two rewrites: its item partly rewritten, its checksum old, new or
  torn;
- after 6 every such entry is in its erased form and verifies alone; after 7
  the intent is gone and nothing needs it.

So a reader given the intent (:func:`minidb.log.header.check_entry`'s
``erasing``) accepts exactly the states above, and any other entry with type
0xff that does not verify is corruption naming its file and offset. The
environment finishes a recorded intent when it opens, before it reads the
log (:func:`finish_recorded_erasure`): the protocol again from step 3 for
the named entries (each original type comes from the intent), then step 7.
Writing an entry again in its erased form changes nothing, so finishing
twice is harmless.
"""

from __future__ import annotations

from dataclasses import dataclass

from minidb.io import Disk
from minidb.log.files import file_name
from minidb.log.header import CRC, ERASED_TYPE, checksum, erased_item, read_header
from minidb.logstore.eraser.state import ERASED, CycleState, read_state, write_state
from minidb.logstore.eraser.throttle import STEP_SHARES
from minidb.stats import Stats


@dataclass(frozen=True)
class ErasedEntry:
    offset: int  # of the entry in its file
    header_size: int
    item_size: int
    original_type: int  # the type code the erased form keeps in its item's first byte
    flags: int  # the header's flags byte (unchanged by erasure)
    summed_rest: bytes  # header bytes after the type and flags (prev, item size, VLSN): unchanged

    def erased_item(self) -> bytes:
        return erased_item(self.original_type, self.item_size)

    def erased_checksum(self) -> bytes:
        """The checksum field of the erased form: the ordinary checksum of its bytes."""
        return CRC.pack(checksum(ERASED_TYPE, self.flags, self.summed_rest + self.erased_item()))


def locate(buf: bytes, offsets: list[int], original_types: dict[int, int] | None = None) -> list[ErasedEntry]:
    """The header and item extent of each entry at ``offsets`` in a file's bytes.

    ``original_types``: each entry's type when its type byte may be 0xff already (an intent being finished);
    by default the type byte read."""
    found = []
    for offset in offsets:
        header, problem = read_header(buf, offset)
        if header is None or problem is not None:
            raise ValueError(f"no entry to erase at offset 0x{offset:x}: {problem}")
        if header.item_size == 0:
            raise ValueError(f"the entry at offset 0x{offset:x} has no item: its erased form has no room for its type")
        original = (original_types or {}).get(offset, header.type_code)
        if original == ERASED_TYPE:
            raise ValueError(f"the entry at offset 0x{offset:x} is erased already, and no intent names its type")
        rest = bytes(buf[offset + 6: offset + header.size])
        found.append(ErasedEntry(offset, header.size, header.item_size, original, header.flags, rest))
    return found


def intent_of(entries: list[ErasedEntry]) -> dict[int, int]:
    """What the state records of ``entries``: offset -> original type."""
    return {e.offset: e.original_type for e in entries}


def erase_entries(disk: Disk, file_number: int, entries: list[ErasedEntry], stats: Stats,
                  between=None) -> None:
    """Steps 3 to 6 on log file ``file_number``; ``between(step)`` is called after each step.

    The intent naming ``entries`` must be durable before this is called (:func:`erase_file`). ``between``
    may watch the steps (crash tests, pictures); it must not stop them: the eraser throttles and checks
    for aborts before the intent is written, so an erasure once begun is finished.
    """
    def done(step: int) -> None:
        if between is not None:
            between(step)

    with disk.open(file_name(file_number)) as handle:
        handle.fsync()  # step 3: the touch
        stats.add("eraserFSyncs")
        done(3)
        for entry in entries:
            handle.write(entry.offset + 4, bytes([ERASED_TYPE]))
            stats.add("eraserWrites")
            stats.add("eraserWriteBytes", 1)
        handle.fsync()  # step 4
        stats.add("eraserFSyncs")
        done(4)
        for entry in entries:
            handle.write(entry.offset + entry.header_size, entry.erased_item())
            handle.write(entry.offset, entry.erased_checksum())
            stats.add("eraserWrites", 2)
            stats.add("eraserWriteBytes", entry.item_size + CRC.size)
        done(5)
        handle.fsync()  # step 6
        stats.add("eraserFSyncs")
        done(6)


def erase_file(disk: Disk, file_number: int, entries: list[ErasedEntry], stats: Stats,
               state: CycleState | None = None, between=None, erasing: dict | None = None) -> CycleState:
    """The whole protocol on one file: the intent (2b), steps 3 to 6, the file marked erased (7).

    ``state``: the cycle whose state file records it (by default the one on ``disk``, or an empty one);
    ``erasing``: a log's map of unfinished erasures (``LogManager.erasing``), told of the intent as
    long as it lasts, so that a reader of the same log meanwhile accepts the half-erased entries. An
    intent left by an erasure that failed (a disk error) is finished first: an intent is only ever
    dropped by the write that follows its last fsync."""
    if state is None:
        state = read_state(disk)[0] or CycleState(0, 0, {})
    if state.erasing is not None:
        _finish(disk, state, stats)
    state.erasing = (file_number, intent_of(entries))
    write_state(disk, state)  # step 2b
    if erasing is not None:
        erasing[file_number] = dict(state.erasing[1])
    erase_entries(disk, file_number, entries, stats, between)
    _mark_erased(disk, state, file_number)  # step 7
    if erasing is not None:
        erasing.pop(file_number, None)
    return state


def _mark_erased(disk: Disk, state: CycleState, file_number: int) -> None:
    if file_number in state.files:
        state.files[file_number] = ERASED
    state.erasing = None
    write_state(disk, state)


def _finish(disk: Disk, state: CycleState, stats: Stats) -> int:
    """Steps 3 to 7 again for the intent ``state`` records; the number of its file."""
    assert state.erasing is not None
    number, intent = state.erasing
    name = file_name(number)
    if disk.exists(name):  # a file gone meanwhile (deleted by the cleaner) needs nothing
        with disk.open(name) as handle:
            buf = handle.read_all()
        erase_entries(disk, number, locate(buf, sorted(intent), intent), stats)
    _mark_erased(disk, state, number)
    return number


def finish_recorded_erasure(disk: Disk, stats: Stats | None = None) -> int | None:
    """Finish the erasure the state on ``disk`` records, if any (at open, before the log is read).

    Returns the number of the file finished (None: nothing to finish)."""
    state, _ = read_state(disk)
    if state is None or state.erasing is None:
        return None
    return _finish(disk, state, stats or Stats("Eraser", ["eraserFSyncs", "eraserWrites", "eraserWriteBytes"]))


__all__ = ["ErasedEntry", "STEP_SHARES", "erase_entries", "erase_file", "finish_recorded_erasure", "intent_of",
           "locate"]
