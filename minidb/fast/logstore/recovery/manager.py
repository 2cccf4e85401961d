"""Recovery by key, read once, counted in bulk (twin of :class:`minidb.logstore.recovery.manager.RecoveryManager`).

Recovery's time is the log since the last checkpoint, entry by entry, and
Python's work per entry sets the pace; this twin does less per entry. It
leaves every slot of every tree (key, LSN, known-deleted flag, cached data)
and every utilization count as the reference does; what may differ is the
tree's *shape* and what a BIN logged meanwhile compressed (see redo below).

**The last file read once.** Opening the log checks its last file entry by
entry to find its end. The log is opened keeping those checked entries
(``keep_opening_scan``), and recovery takes them first thing
(``LogManager.take_opening_scan``) for its search of the last CkptEnd and
its forward read, so every byte since the checkpoint is read and checksummed
once. Safe because they are the bytes as opened: they are taken before
anything writes to the log (the data eraser overwrites entries in place, but
only once the environment is open), the log refuses to write while it still
holds them, and its readers use them only while the log ends where opening
found it.

**Sorted by kind in C.** The entries read are kept per file as lists of LSNs,
type codes and sizes (:class:`ScannedRun`; a size is the distance to the next
entry, since a scan reads a file's entries back to back). The kinds are
selected over the type codes with ``itertools.compress``, and only those the
set of the codes read holds (a log of plain puts has no Commit to look for),
a refusal (a foreign or erased entry) is looked for in that set, node sizes
are noted per file, and a transaction id is unpacked from the first 8 bytes of
a transactional item.

**Utilization in bulk** (:func:`count_in_runs`): per file, from its summary's
LSN on, a dictionary update for the obsolete offsets and a few sums, where the
reference makes a call per entry; the counts are the same because each entry
is counted by its type code alone. The node sizes the reference notes again
as it counts are in place already, noted once per file by the read (redo needs
them first), from the same sizes.

**Redo by key.** The last version of a key wins whatever came before, so the
slot a key ends with depends only on that key's LNs in log order. A forward
pass collects the LNs of each database in log order, with no look-up per LN;
then a database's are sorted by key (the key is in each, so no look-up per key
follows the sort). The sort is stable, so each key's LNs end up side by side
in log order: one comparison of neighbours tells whether any key has more than
one (most have one, and a log of new keys none), and only then a pass takes
each key's last LN and the LNs of the keys with several (:func:`last_of_each`).
The last LNs are taken in key order: one
search finds the BIN of the first key and the bound below which every next key
is routed to the same BIN (:func:`search_with_high`), and each key's slot
changes at most once, to the last LN that would have gone in (:meth:`_redo_chain`).
The new keys of a BIN go in together (:func:`insert_slots`); keys above all its
slots, each with one LN that is not a deletion (a BIN redo fills from empty),
are appended column by column (:func:`append_slots`). A BIN filled past its
size is cut into the pieces halving it until they fit would make, in one pass
(each slot moves once, the siblings go into the parent in one slice), each
piece logged once (:func:`split_until_fits`), where splitting at each insertion
logs both halves of every split; eviction to the budget runs after each BIN,
not each LN. So the
tree's shape, and which known-deleted slots a BIN logged during redo (a split,
an eviction) compressed away, may differ from the reference's; every slot both
trees hold is the same. An LN's database, key, data and replaced version come
from its type's picker, without the dict of every field.

**The collector paused.** The entries read are tens of thousands of small
objects that live until recovery ends and are never part of a cycle; the
cyclic collector would walk them again each time its counters fill up.
Reference counting still frees everything; the collector is back as it was
found when the block the environment opens and recovers in ends
(:meth:`opening`). One pause covers both: the scan of the last file keeps an
``(offset, header)`` pair for every entry in it, and with the collector back
between opening and recovery, its first collection would walk every pair.
The block ends after the recovery manager, with every entry it read, is
gone, so no collection walks what recovery has already let go of: the walk
that follows is over what the environment keeps (its tree), once.
"""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass
from itertools import chain, compress, islice, repeat
from operator import attrgetter, eq, itemgetter, sub
from typing import TYPE_CHECKING, Any

from minidb import fast
from minidb.collector import collector_paused
from minidb.fast.log.codec import codec_of
from minidb.log import LSN, NULL_LSN, LogEntry, LogManager, Provisional
from minidb.log.header import ERASED_TYPE, INVISIBLE
from minidb.log.logdef import FILE_HEADER
from minidb.log.types import known_types, type_by_code, type_by_name
from minidb.logstore.cleaner.utilization import UtilizationTracker, key_of_summary
from minidb.logstore.errors import TreeError
from minidb.logstore.logdef import CKPT_END, COMMIT, DEL_LN, DEL_LN_TX, LN, LN_TX, MAP_LN, NODE_TYPES
from minidb.logstore.mapping_tree import UTILIZATION_DB_ID
from minidb.logstore.recovery import reading
from minidb.logstore.recovery.manager import RecoveryManager as ReferenceRecoveryManager
from minidb.logstore.recovery.reading import (
    FOREIGN_CODES,
    NODE_CODES,
    NODE_HEAD,
    REDO_CODES,
    SIZED_CODES,
    TXN_LN_CODES,
    LogRead,
    entries_from,
)
from minidb.logstore.recovery.redo import find_losers
from minidb.logstore.tree.bin import BIN
from minidb.logstore.tree.ln import record_of

if TYPE_CHECKING:
    from minidb.io import Disk
    from minidb.logstore.tree.in_node import IN
    from minidb.logstore.tree.tree import DatabaseImpl, Tree

_lsn_of = attrgetter("lsn")
_code_of = attrgetter("header.type_code")  # of an entry
_file_of, _offset_of = itemgetter(0), itemgetter(1)  # of an LSN
_slot_key = itemgetter(1)  # an (index, key, ...) slot's key: no two slots of a node have the same

_DELETION_CODES = frozenset({DEL_LN.code, DEL_LN_TX.code})
_DATA_CODES = frozenset({LN.code, LN_TX.code})  # a slot caches their data
_TXN_ID = struct.Struct("<q")  # a transactional item starts with its txn id


def _transactional_codes() -> frozenset[int]:
    """The type codes of the transactional entry types (those whose item starts with a txn id)."""
    return frozenset(t.code for t in known_types() if t.transactional)


# What redo replays: (database, key, entry, record, the entry's LSN): the LSN again at hand, since redo by
# key takes the LSNs of many keys without going back to their entries.
Redo = tuple["DatabaseImpl", bytes, LogEntry, object, LSN]
_redo_key_of, _record_of, _redo_lsn_of = itemgetter(1), itemgetter(3), itemgetter(4)  # of a Redo

# The fields redo reads of a record's LN (its picker's order); a deletion has no data.
_REDO_PICKS = {code: ("db_id", "key", "prev_lsn", "data") for code in _DATA_CODES}
_REDO_PICKS.update({code: ("db_id", "key", "prev_lsn") for code in _DELETION_CODES})


def _redo_pickers() -> dict[int, Any]:
    """Type code -> the picker of the fields redo reads (built once per type, kept by its codec)."""
    return {code: codec_of(type_by_code(code)).picker(picks) for code, picks in _REDO_PICKS.items()}


@dataclass(frozen=True)
class ScannedRun:
    """Entries recovery read from one file, in LSN order: their LSNs, sizes and type codes."""

    file_number: int
    lsns: list[LSN]
    sizes: list[int]
    codes: list[int]


def scanned_runs(entries: list[LogEntry]) -> list[ScannedRun]:
    """The entries read, per file: LSNs, type codes, and sizes as the distances between them (only the last
    of each file asks its header)."""
    lsns = list(map(_lsn_of, entries))
    codes = list(map(_code_of, entries))
    runs = []
    i = 0
    while i < len(entries):
        number = lsns[i].file
        j = bisect.bisect_right(lsns, number, lo=i, key=_file_of)
        offsets = list(map(_offset_of, lsns[i:j]))
        sizes = list(map(sub, offsets[1:], offsets[:-1]))
        sizes.append(entries[j - 1].size)
        runs.append(ScannedRun(number, lsns[i:j], sizes, codes[i:j]))
        i = j
    return runs


_NODE_TYPE_CODES = frozenset(type_by_name(name).code for name in NODE_TYPES)  # type: ignore[union-attr]
_FILE_HEADER_CODES = frozenset({FILE_HEADER.code})
_OBSOLETE_AT_ONCE = frozenset(range(256)) - _NODE_TYPE_CODES - _FILE_HEADER_CODES  # counted obsolete as counted


def count_in_runs(tracker: UtilizationTracker, summaries: list[tuple[dict, LSN]], runs: list[ScannedRun]) -> None:
    """``tracker.finish_recovery`` with the entries given per file, counted in bulk: the same counts."""
    summary_lsn = tracker._restore_summaries(summaries)
    for run in runs:
        covered = summary_lsn.get(run.file_number)
        start = 0 if covered is None else bisect.bisect_left(run.lsns, covered)
        _count_run(tracker, run.file_number, run.lsns[start:], run.sizes[start:], run.codes[start:])
    tracker._note_own_summaries(summaries)
    tracker._count_deferred()


def _count_run(tracker: UtilizationTracker, number: int, lsns: list[LSN], sizes: list[int], codes: list[int]) -> None:
    """Count entries of file ``number``, in order, as ``tracker._count`` counts each of them. The sizes of the
    node entries, which ``_count`` notes, are in ``tracker.sizes`` already: :meth:`RecoveryManager.check_and_sort`
    noted those of every entry read whose type is in ``SIZED_CODES``, the node types (a test holds the two
    equal), from the same sizes, and nothing takes them out before recovery ends."""
    if not lsns:
        return
    summary = tracker.summary(number)
    is_node = list(map(_NODE_TYPE_CODES.__contains__, codes))
    others = dict(compress(zip(map(_offset_of, lsns), sizes, strict=True), map(_OBSOLETE_AT_ONCE.__contains__, codes)))
    for size in compress(sizes, map(_FILE_HEADER_CODES.__contains__, codes)):
        tracker._count_file_header(summary, size)
    node_count = sum(is_node)
    node_size = sum(compress(sizes, is_node))
    others_size = sum(others.values())
    summary.total_count += node_count + len(others)
    summary.total_size += node_size + others_size
    summary.node_count += node_count
    summary.node_size += node_size
    fresh = others.keys().isdisjoint(summary.obsolete) and others.keys().isdisjoint(summary.own)
    summary.obsolete.update(others)
    if fresh:  # new offsets (so in no record), none an own summary: as FileSummary.note_obsolete notes each
        summary.obsolete_size += others_size
        summary.unlogged.update(others)
    else:
        summary.recount()
    if node_count or others:
        tracker.touch(number)
        fast.held_counts(tracker.stats)["nEntriesCounted"] += node_count + len(others)


def last_of_each(redos: list[Redo]) -> tuple[list[Redo], dict[bytes, list[Redo]]]:
    """``redos`` sorted by key, each key's in log order: each key's last LN, and all the LNs of the keys with
    more than one (key -> its LNs, in log order)."""
    lasts: list[Redo] = []
    several: dict[bytes, list[Redo]] = {}
    for redo in redos:
        key = redo[1]
        if lasts and lasts[-1][1] == key:  # the key's second LN, or a later one
            chain = several.get(key)
            if chain is None:
                several[key] = [lasts[-1], redo]
            else:
                chain.append(redo)
            lasts[-1] = redo
        else:
            lasts.append(redo)
    return lasts, several


def search_with_high(tree: "Tree", key: bytes) -> tuple[BIN, bytes | None]:
    """``tree.search(key)``, and the BIN's exclusive high bound as seen from the root (None: +infinity).

    Every key from ``key`` up to (not including) that bound is routed to the same BIN by a search: the
    bound is the smallest next-slot key on the path, not the BIN's own ``high_key``."""
    node = tree.root_node()
    high: bytes | None = None
    while not node.is_bin:
        i = node.find_child_index(key)
        if i + 1 < node.n_entries and (high is None or node.keys[i + 1] < high):
            high = node.keys[i + 1]
        node = tree.fetch_child(node, i)
    assert isinstance(node, BIN)
    return node, high


def split_until_fits(tree: "Tree", node: IN) -> None:
    """Split ``node`` into as many pieces as halving it until every half fits would make, in one pass; the
    same up the tree; then log every piece once (Provisional.YES), bottom up.

    Each piece is what a split makes (``Tree._split``: the upper part to a new right sibling, the first key
    that moves its low bound and its new slot in the parent). Halving a BIN that redo filled with n keys
    would move every slot once per halving, log(n) times, and look its parent up, a list as long as the
    number of pieces made so far, once per split: n·log(n) and pieces². Cut from the last piece back, every
    slot moves once, and the siblings go into the parent in one slice. The pieces are logged once every
    level is cut, a level's pieces before their parents (whose slots then name them): a piece finds its slot
    in a parent of at most ``node_max_entries`` slots. A read-only environment's recovery logs none (the
    nodes stay resident)."""
    core, db = tree.core, tree.db
    max_entries = core.config.node_max_entries
    splits: list[tuple[IN, IN]] = []
    levels: list[list[IN]] = []  # the pieces of each level cut, bottom up
    level = [node]
    while level:
        pieces: list[IN] = []
        parents: dict[int, IN] = {}
        for current in level:
            if current.n_entries > max_entries:
                siblings = cut_into_pieces(tree, current, max_entries)
                splits += [(current, sibling) for sibling in siblings]
                pieces += [current, *siblings]
                parents[current.parent.node_id] = current.parent  # type: ignore[union-attr]
        levels.append(pieces)
        level = list(parents.values())
    for pieces in levels if not core.read_only else ():
        for piece in pieces:
            tree.writer.log_in(piece, Provisional.YES, reason="split")
    tree.dirty_map.coordinate_split_with_checkpoint(db, splits)


def piece_starts(count: int, max_entries: int) -> list[int]:
    """Where each piece of a node of ``count`` slots starts: as many pieces as halving the node until every
    half holds at most ``max_entries`` would make (a power of two), their sizes as equal as can be."""
    pieces = 1
    while -(-count // pieces) > max_entries:
        pieces *= 2
    return [count * j // pieces for j in range(pieces)]


def cut_into_pieces(tree: "Tree", node: IN, max_entries: int) -> list[IN]:
    """Split ``node`` at each of :func:`piece_starts` but the first, from the last back (each slot moves once):
    the new right siblings, in key order, in the parent (a new root if ``node`` was the root) right after it."""
    parent = node.parent if node.parent is not None else tree._new_root(node)
    siblings: list[IN] = []
    for start in reversed(piece_starts(node.n_entries, max_entries)[1:]):
        sibling = tree._move_upper_part(node, start, node.keys[start])
        sibling.dirty = True
        siblings.append(sibling)
    siblings.reverse()
    index = parent.index_of_child(node.node_id)
    if index is None:
        raise TreeError(f"{node.describe()} is not in its parent {parent.describe()}")
    parent.insert_children(index + 1, siblings)
    node.dirty = parent.dirty = True
    tree.core.stats.add("nSplits", len(siblings))
    return siblings


def insert_slots(bin_node: BIN, inserts: list[tuple[int, bytes, LSN, bool, Any]]) -> None:
    """``bin_node.insert_slot`` for many new keys found against the slots as they were.

    ``inserts``: ``(index, key, lsn, known_deleted, record)`` in key order, each index where ``find``
    placed the key before any of them went in. Inserted from the last to the first, every index stays
    right; many keys into a small node are merged in one sort instead (two sorted runs, one pass)."""
    if len(inserts) <= len(bin_node.keys):
        for index, key, lsn, known_deleted, record in reversed(inserts):
            bin_node.insert_slot(index, key, lsn, known_deleted, record)
        return
    merged = sorted([*zip(repeat(0), bin_node.keys, bin_node.lsns, bin_node.known_deleted, bin_node.records),
                     *inserts], key=_slot_key)
    columns = zip(*merged, strict=True)
    next(columns)  # the indexes
    slot_columns = (bin_node.keys, bin_node.lsns, bin_node.known_deleted, bin_node.records)
    for column, values in zip(slot_columns, columns, strict=True):
        column[:] = values
    bin_node.version += len(inserts)


def append_slots(bin_node: BIN, keys: list[bytes], lsns: list[LSN], known_deleted: list[bool],
                 records: list[Any]) -> None:
    """New slots after the last one, column by column: ``keys`` sorted, all above the current keys."""
    if keys and bin_node.keys and keys[0] <= bin_node.keys[-1]:
        raise ValueError(f"append_slots: {keys[0]!r} is not above the last slot {bin_node.keys[-1]!r}")
    bin_node.keys += keys
    bin_node.lsns += lsns
    bin_node.known_deleted += known_deleted
    bin_node.records += records
    bin_node.version += len(keys)


class RecoveryManager(ReferenceRecoveryManager):
    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.runs: list[ScannedRun] = []  # the entries read, per file
        self.checked: Any = None  # the last file as opening the log checked it, until the forward read
        self.txn_lns: list[LogEntry] = []  # the transactional LNs read (of self.read.lns)

    opening = staticmethod(collector_paused)  # from the opening scan to the end of recovery (see above)

    @staticmethod
    def open_log(disk: "Disk", **options) -> LogManager:
        return LogManager(disk, keep_opening_scan=True, **options)

    def recover(self):
        # The last file as opening the log checked it: taken before anything writes to the log (its
        # bytes must be the ones opening read), used by the two reads, then dropped.
        self.checked = self.parts.core.log.take_opening_scan()
        return super().recover()

    def last_ckpt_end(self) -> LogEntry | None:
        return self.parts.core.log.reader.last_of_type(CKPT_END.code, self.checked)

    def scan(self) -> list[LogEntry]:
        start = self.info.scan_start
        entries = list(self.parts.core.log.scan(None if start.is_null else start, checked=self.checked))
        self.checked = None
        return entries

    def check_and_sort(self, entries: list[LogEntry]) -> None:
        parts = self.parts
        self.runs = runs = scanned_runs(entries)
        codes = list(chain.from_iterable(run.codes for run in runs))
        present = set(codes)  # the types the log holds: a kind it does not hold costs no pass
        if not FOREIGN_CODES.keys().isdisjoint(present):
            reading.refuse_foreign_entries(parts, entries)
        if ERASED_TYPE in present:
            reading.refuse_erased_entries(entries, self.info.scan_start)

        def of_kind(kind: frozenset[int]) -> list[LogEntry]:
            if kind.isdisjoint(present):
                return []
            return list(compress(entries, map(kind.__contains__, codes)))

        self.read = LogRead(entries, of_kind(NODE_CODES), of_kind(frozenset({MAP_LN.code})), of_kind(REDO_CODES),
                            of_kind(frozenset({COMMIT.code})))
        last_node_id, last_db_id, last_txn_id = parts.core.last_node_id, parts.db_tree.last_db_id, 0
        for entry in self.read.nodes:
            item = entry.item
            node_id = NODE_HEAD.unpack_from(item)[1] if len(item) >= NODE_HEAD.size else reading.node_head(entry)[1]
            if node_id > last_node_id:
                last_node_id = node_id
        for entry in self.read.map_lns:
            last_db_id = max(last_db_id, entry.values["db_id"])
        self.txn_lns = of_kind(TXN_LN_CODES)
        for entry in of_kind(_transactional_codes()):
            item = entry.item  # a transactional item starts with its txn id (LogEntry.txn_id)
            txn_id = _TXN_ID.unpack_from(item)[0] if len(item) >= _TXN_ID.size else entry.txn_id
            if txn_id is not None and abs(txn_id) > last_txn_id:
                last_txn_id = abs(txn_id)  # internal: < 0
        for run in runs:
            sized = map(SIZED_CODES.__contains__, run.codes)
            parts.utilization.note_sizes(compress(zip(run.lsns, run.sizes, strict=True), sized))
        parts.core.note_node_id(last_node_id)
        parts.db_tree.note_db_id(last_db_id)
        parts.txn_manager.note_txn_id(last_txn_id)

    def count_entries_read(self, summaries: list[tuple[dict, LSN]]) -> None:
        count_in_runs(self.parts.utilization, summaries, self.runs)

    def find_losers(self) -> dict[int, list[LogEntry]]:
        # The transactional LNs alone (the others are no transaction's): none, in a log of plain puts.
        return find_losers(self.parts, self.info, self.txn_lns, self.read.commits)

    # -- redo by key ------------------------------------------------------------------------
    def redo_lns(self) -> None:
        evictor = self.parts.evictor
        databases, lns_of = self._collect_lns()
        for db_id, redos in lns_of.items():
            tree = databases[db_id].tree
            redos.sort(key=_redo_key_of)  # stable: each key's LNs stay in log order, one after the other
            keys = list(map(_redo_key_of, redos))
            lasts, several = redos, {}
            if any(map(eq, keys, islice(keys, 1, None))):  # a key with more than one LN
                lasts, several = last_of_each(redos)
                keys = list(map(_redo_key_of, lasts))
            i = 0
            while i < len(keys):
                bin_node, high = search_with_high(tree, keys[i])
                j = len(keys) if high is None else bisect.bisect_left(keys, high, i)  # the keys that go to it
                self._redo_into_bin(bin_node, keys[i:j], lasts[i:j], several)
                i = j
                split_until_fits(tree, bin_node)
                evictor.evict_to_budget()

    def _collect_lns(self) -> tuple[dict[int, "DatabaseImpl"], dict[int, list[Redo]]]:
        """The LNs redo replays (the reference's rules), in log order, as Redo tuples, per database. The
        versions they make obsolete are counted as they go by. One loop, no generator between the reading
        and the keeping, and no look-up per LN: the keys are sorted next, which puts each key's LNs
        together."""
        parts, info = self.parts, self.info
        count_obsolete = parts.utilization.count_obsolete
        utilization_db = parts.db_tree.get_by_id(UTILIZATION_DB_ID)
        db_by_id, committed = parts.db_tree.by_id, info.committed
        pickers = _redo_pickers()
        data_codes, deletion_codes, txn_codes = _DATA_CODES, _DELETION_CODES, TXN_LN_CODES
        databases: dict[int, "DatabaseImpl"] = {}
        lns_of: dict[int, list[Redo]] = {}  # per database, its LNs in log order
        keep = None
        last_db = None
        for entry in entries_from(self.read.lns, info.first_active_lsn):
            header = entry.header
            if header.flags & INVISIBLE:
                continue
            code = header.type_code
            if code in txn_codes and entry.txn_id not in committed:
                continue
            if code in data_codes:
                db_id, key, prev, record = pickers[code](entry.item)
                db = db_by_id.get(db_id)
            elif code in deletion_codes:
                db_id, key, prev = pickers[code](entry.item)
                db, record = db_by_id.get(db_id), None
            else:  # a FileSummaryLN: its slot caches its values
                values, name = entry.values, entry.type_name
                db, key, prev, record = utilization_db, key_of_summary(name, values), values["prev_lsn"], record_of(entry, name)
            if db is None:
                continue
            if db is not last_db:
                last_db, databases[db.id] = db, db
                keep = lns_of.setdefault(db.id, []).append
            keep((db, key, entry, record, entry.lsn))  # type: ignore[misc]
            if prev != NULL_LSN:
                count_obsolete(prev)
            if code in deletion_codes:
                count_obsolete(entry.lsn)
        return databases, lns_of

    def _redo_into_bin(self, bin_node: BIN, keys: list[bytes], lasts: list[Redo], several: dict) -> None:
        """Redo the LNs of ``keys`` (sorted, all routed to ``bin_node``; ``lasts``: the last LN of each,
        ``several``: all the LNs of the keys with more than one): each slot changes at most once."""
        if self._append_new_keys(bin_node, keys, lasts, several):
            return
        info = self.info
        slot_keys, slot_lsns = bin_node.keys, bin_node.lsns
        inserts: list[tuple[int, bytes, LSN, bool, object]] = []
        changed = False
        for key, only in zip(keys, lasts, strict=True):
            chain = several.get(key) if several else None
            index = bisect.bisect_left(slot_keys, key)
            if index < len(slot_keys) and slot_keys[index] == key:
                last = self._redo_chain(slot_lsns[index], chain or [only])
                if last is not None:
                    entry = last[2]
                    bin_node.update_slot(index, entry.lsn, entry.header.type_code in _DELETION_CODES, last[3])
                    changed = True
            elif chain is not None:
                last = self._redo_chain(None, chain)
                if last is not None:
                    entry = last[2]
                    inserts.append((index, key, entry.lsn, entry.header.type_code in _DELETION_CODES, last[3]))
            elif only[2].header.type_code not in _DELETION_CODES:  # one new LN: in, unless a deletion
                inserts.append((index, key, only[2].lsn, False, only[3]))
                info.lns_redone += 1
        if inserts:
            insert_slots(bin_node, inserts)
        if inserts or changed:
            bin_node.dirty = True

    def _append_new_keys(self, bin_node: BIN, keys: list[bytes], lasts: list[Redo], several: dict) -> bool:
        """Keys all above the BIN's last slot, each with one LN that is not a deletion: appended column by
        column, with no search and no step per key. False (nothing done) if the keys are not all such."""
        if not keys or (bin_node.keys and keys[0] <= bin_node.keys[-1]):
            return False
        if several and not several.keys().isdisjoint(keys):
            return False  # a key with several LNs
        records = list(map(_record_of, lasts))
        if None in records:
            return False  # a deletion (the only LN whose record is None)
        append_slots(bin_node, keys, list(map(_redo_lsn_of, lasts)), [False] * len(keys), records)
        bin_node.dirty = True
        self.info.lns_redone += len(keys)
        return True

    def _redo_chain(self, slot_lsn: LSN | None, chain: list[Redo]) -> Redo | None:
        """One key's LNs (in log order) as the reference's redo would take them one by one: the LN the slot
        ends with (None: the slot does not change). ``slot_lsn`` None: the key has no slot."""
        info = self.info
        last = None
        for redo in chain:
            entry = redo[2]
            if slot_lsn is None:
                if entry.header.type_code in _DELETION_CODES:
                    continue
            elif entry.lsn <= slot_lsn:
                info.lns_not_newer += 1
                continue
            slot_lsn, last = entry.lsn, redo
            info.lns_redone += 1
        return last


__all__ = ["RecoveryManager", "ScannedRun", "scanned_runs", "count_in_runs", "last_of_each", "search_with_high",
           "split_until_fits", "piece_starts", "cut_into_pieces", "insert_slots", "append_slots"]
