"""Checking the store directory and the root index: what ``minidb verify`` asks of stores 1 and 2.

:func:`check_directory` reports (as text; empty: sound), with no one changing
the volume:

- both B+trees' structure invariants
  (:func:`~minidb.pagestore.btree.verify.check_tree`), from the roots the
  volume header records, each root allocated to its store;
- every descriptor decodes (:mod:`minidb.pagestore.files.sinfo`);
- every store a descriptor names (a file's two, an index's one) is in use
  and an index's root page is allocated to it; every store in use but 1 and
  2 is named by a descriptor, unless it is marked for deletion (a prepared
  transaction's destroy, which holds it until resolved);
- every index's own tree is sound, B+tree or R*-tree
  (:func:`~minidb.pagestore.rtree.verify.check_rtree`);
- every name of the root index points at an INDEX or RTREE store of the
  directory, and no store has two names.
"""

from __future__ import annotations

from typing import Any

from minidb.pagestore.btree.keydesc import BadKeyError, KeyDescriptor
from minidb.pagestore.btree.verify import check_tree
from minidb.pagestore.errors import PageStoreCorruptionError
from minidb.pagestore.files.sinfo import SInfo, StoreKind
from minidb.pagestore.ids import PageId
from minidb.pagestore.rtree.verify import check_rtree
from minidb.pagestore.volume.stores import ROOT_INDEX, STORE_DIRECTORY, Deleting


def check_directory(volume: Any, directory: Any, root_index: Any) -> list[str]:
    """The problems of the volume's store directory and root index (see the module documentation)."""
    problems: list[str] = []
    for tree in (directory.tree, root_index.tree):
        if not volume.is_allocated(tree.root):
            return [f"{tree.root}: the root the volume header records is not allocated to its store"]
        found = check_tree(volume.bp, tree.root, True)[0]
        problems += [f"{tree.root.stid}: {p}" for p in found]
    if problems:
        return problems
    try:
        entries = dict(directory.entries())
        names = root_index.names()
    except PageStoreCorruptionError as e:
        return [str(e)]
    in_use = {s.store for s in volume.stores()} - {STORE_DIRECTORY, ROOT_INDEX}
    named: set[int] = set()
    for snum, info in entries.items():
        problems += _check_entry(volume, snum, info, in_use)
        named |= {snum, info.large} if info.kind == StoreKind.FILE else {snum}
    for snum in sorted(in_use - named):
        if volume.store_node(snum).deleting == Deleting.NOT_DELETING:
            problems.append(f"store {snum} is in use but the store directory has no entry for it")
    seen: dict[int, str] = {}
    for name, snum in names:
        info = entries.get(snum)
        if info is None or info.kind not in (StoreKind.INDEX, StoreKind.RTREE):
            problems.append(f"index name {name!r} points at store {snum}, which is not an index")
        if snum in seen:
            problems.append(f"store {snum} has two names, {seen[snum]!r} and {name!r}")
        seen[snum] = name
    return problems


def _check_entry(volume: Any, snum: int, info: SInfo, in_use: set[int]) -> list[str]:
    where = f"the store directory's entry for store {snum}"
    stores = [snum, info.large] if info.kind == StoreKind.FILE else [snum]
    missing = [s for s in stores if s not in in_use]
    if missing:
        return [f"{where} ({info.kind.name}) names store {missing[0]}, which is not in use"]
    if info.kind not in (StoreKind.INDEX, StoreKind.RTREE):
        return []
    root = PageId(volume.vid, snum, info.root)
    if not 0 < info.root < volume.header.num_pages or not volume.is_allocated(root):
        return [f"{where}: root page {info.root} is not allocated to the index"]
    if info.kind == StoreKind.RTREE:
        return [f"{root.stid}: {p}" for p in check_rtree(volume, root)[0]]
    try:
        KeyDescriptor.unpack(info.kdesc)
    except (BadKeyError, ValueError) as e:
        return [f"{where}: key descriptor {info.kdesc!r}: {e}"]
    return [f"{root.stid}: {p}" for p in check_tree(volume.bp, root, info.unique)[0]]
