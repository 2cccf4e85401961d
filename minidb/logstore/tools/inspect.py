"""Read-only views of the trees, for pictures, checks and tests.

:func:`tree_view` walks a database's tree as it stands: resident nodes as
they are in memory (dirty or not), the others as their current version in
the log, read without attaching them (so looking never changes the cache,
evicts nothing and logs nothing). Each node comes out as a
:class:`NodeView` of plain data: its id, level, where its current version
lives (the LSN in its parent's slot, or the database's root LSN), whether it
is resident and dirty, and its slots.

Example, after three puts (``a``, ``b``, ``c``) into the new database
``accounts`` of a fresh environment (ids 1-4 are the nodes of ``_mapping``
and ``_utilization``)::

    TreeView db 2 'accounts', root_lsn NULL
      IN 5   level 2  lsn NULL (never logged)  resident, dirty   child_ids (6,)
      BIN 6  level 1  lsn 0x1/0x2b7 (YES)      resident, dirty   keys (b'a', b'b', b'c')
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from minidb.log import LSN, NULL_LSN
from minidb.logstore.tree.tree import node_from_entry, read_node_entry

if TYPE_CHECKING:
    from minidb.log import LogManager
    from minidb.logstore.env import Environment
    from minidb.logstore.tree.in_node import IN


@dataclass(frozen=True)
class NodeView:
    node_id: int
    db_id: int
    level: int
    is_bin: bool
    lsn: LSN  # the current version (NULL_LSN: never logged)
    provisional: str  # of that version: NO | YES | BEFORE_CKPT_END | "" when never logged
    resident: bool
    dirty: bool
    id_key: bytes
    high_key: bytes | None
    keys: tuple[bytes, ...]
    slot_lsns: tuple[LSN, ...]
    known_deleted: tuple[bool, ...]  # BINs only
    child_ids: tuple[int, ...]  # upper INs only
    children: tuple["NodeView", ...]  # upper INs only

    @property
    def label(self) -> str:
        return f"{'BIN' if self.is_bin else 'IN'} {self.node_id}"

    def walk(self) -> Iterator["NodeView"]:
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass(frozen=True)
class TreeView:
    db_id: int
    db_name: str
    root_lsn: LSN
    root: NodeView

    def nodes(self) -> list[NodeView]:
        return list(self.root.walk())

    def height(self) -> int:
        return self.root.level

    def levels(self) -> dict[int, list[NodeView]]:
        out: dict[int, list[NodeView]] = {}
        for node in self.nodes():
            out.setdefault(node.level, []).append(node)
        return out


def _view(log: "LogManager", node: "IN", lsn: LSN, resident: bool,
          replayed: dict[int, LSN] | None = None) -> NodeView:
    children: list[NodeView] = []
    if not node.is_bin:
        for i in range(node.n_entries):
            target = node.targets[i]
            if target is not None:
                children.append(_view(log, target, node.lsns[i], True))
            else:
                child_lsn = max(node.lsns[i], (replayed or {}).get(node.node_ids[i], node.lsns[i]))
                entry = read_node_entry(log, child_lsn, node.node_ids[i], f"child of {node.describe()}")
                children.append(_view(log, node_from_entry(entry), child_lsn, False, replayed))
    provisional = node.last_logged_provisional.name if not node.last_logged_lsn.is_null else ""
    if not lsn.is_null and lsn != node.last_logged_lsn:
        provisional = log.read(lsn).provisional.name
    return NodeView(
        node.node_id, node.db_id, node.level, node.is_bin, lsn, provisional, resident,
        node.dirty if resident else False, node.id_key, node.high_key, tuple(node.keys), tuple(node.lsns),
        tuple(node.known_deleted) if node.is_bin else (), tuple(node.node_ids) if not node.is_bin else (),
        tuple(children),
    )


def tree_view(env: "Environment", db_name: str) -> TreeView:
    """The whole tree of ``db_name``, resident or not, without changing anything."""
    with env.latch:
        impl = env.db_tree.get(db_name) if db_name != "_mapping" else env.db_tree.mapping
        if impl is None:
            env.db_tree.require(db_name)
        assert impl is not None
        if impl.root is None:
            return logged_tree_view(env.log, impl.id, impl.name, impl.root_lsn)
        return TreeView(impl.id, impl.name, impl.root_lsn, _view(env.log, impl.root, impl.root.last_logged_lsn, True))


def logged_tree_view(log: "LogManager", db_id: int, db_name: str, root_lsn: LSN,
                     replayed: dict[int, LSN] | None = None) -> TreeView:
    """The tree whose root version is at ``root_lsn``, all of it read from the log; ``replayed`` (node id ->
    LSN) are newer versions recovery would place in the tree (a checkpoint's non-provisional INs)."""
    entry = read_node_entry(log, root_lsn, None, f"root of {db_name!r}")
    return TreeView(db_id, db_name, root_lsn, _view(log, node_from_entry(entry), root_lsn, False, replayed))


def tree_names(env: "Environment") -> list[str]:
    """Every tree of the environment: the mapping tree, then every database's, internal ones included."""
    return ["_mapping"] + env.db_tree.names(internal=True)


def all_tree_views(env: "Environment") -> list[TreeView]:
    return [tree_view(env, name) for name in tree_names(env)]


def live_lsns(env: "Environment") -> dict[LSN, str]:
    """Every log entry the trees use now: node versions and records (not deletions)."""
    live: dict[LSN, str] = {}
    for view in all_tree_views(env):
        if not view.root.lsn.is_null:
            live[view.root.lsn] = f"{view.root.label} (root of {view.db_name})"
        for node in view.nodes():
            if node.is_bin:
                for key, lsn, deleted in zip(node.keys, node.slot_lsns, node.known_deleted, strict=True):
                    if not deleted:
                        live[lsn] = f"record {key!r} of {view.db_name}"
            else:
                for child in node.children:
                    if not child.lsn.is_null:
                        live[child.lsn] = f"{child.label} of {view.db_name}"
    return live


__all__ = ["NodeView", "TreeView", "tree_view", "logged_tree_view", "tree_names", "all_tree_views", "live_lsns",
           "NULL_LSN"]
