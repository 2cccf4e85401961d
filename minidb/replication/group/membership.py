"""A replication group: its name, its nodes, and the state of each node (JE's ``RepGroup``, ``RepNode``).

A group is a named set of nodes; each node has a unique name, an address
(``host:port`` over TCP, a plain name on the in-memory network) and an
election *priority* (JE's ``je.rep.nodePriority``: a node of priority 0 never
becomes master; among equally up-to-date nodes the higher priority wins).
Every node is in one state (JE's ``ReplicatedEnvironment.State``):

- ``MASTER``: the one node that accepts writes and allocates VLSNs;
- ``REPLICA``: applies the master's stream (entries with the master's VLSNs
  and transaction ids) and refuses writes with :class:`ReplicaWriteError`,
  naming the master;
- ``UNKNOWN``: knows no master (before an election, after losing the
  master); refuses writes with :class:`UnknownMasterError`.

Invariant: at most one node of a group believes it is master for a given
term (:mod:`.elections` guarantees it across nodes and changes the states;
a caller may also set a :class:`NodeState` itself). Example::

    group = RepGroup("bank", [RepNode("n1", "n1", 2), RepNode("n2", "n2"), RepNode("n3", "n3", 0)])
    group.node("n2")            # RepNode(name='n2', address='n2', priority=1)
    group.node("n9")            # GroupConfigError: node 'n9' is not a member of group 'bank' (n1, n2, n3)
    group.majority              # 2
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from minidb.replication.errors import GroupConfigError


class NodeState(enum.Enum):
    MASTER = "MASTER"
    REPLICA = "REPLICA"
    UNKNOWN = "UNKNOWN"


@dataclass(frozen=True)
class RepNode:
    """One member of a group: its name, address and election priority."""

    name: str
    address: str
    priority: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or len(self.name.encode("utf-8")) > 255:
            raise GroupConfigError(f"a node name is a non-empty string of up to 255 UTF-8 bytes, not {self.name!r}")
        if not isinstance(self.address, str) or not self.address:
            raise GroupConfigError(f"node {self.name}: an address is a non-empty string, not {self.address!r}")
        if not isinstance(self.priority, int) or isinstance(self.priority, bool) or not 0 <= self.priority < 1 << 32:
            raise GroupConfigError(f"node {self.name}: the priority is an integer 0..2**32-1 (0: never master), "
                                   f"not {self.priority!r}")

    @property
    def electable(self) -> bool:
        return self.priority > 0


class RepGroup:
    """A named group of nodes (see the module documentation)."""

    def __init__(self, name: str, nodes: list[RepNode]):
        if not isinstance(name, str) or not 1 <= len(name.encode("utf-8")) <= 255:
            raise GroupConfigError(f"a group name is a string of 1..255 UTF-8 bytes, not {name!r}")
        if not nodes:
            raise GroupConfigError(f"group {name!r} has no nodes")
        for attribute in ("name", "address"):
            seen: set[str] = set()
            for node in nodes:
                value = getattr(node, attribute)
                if value in seen:
                    raise GroupConfigError(f"group {name!r}: two nodes have the {attribute} {value!r}")
                seen.add(value)
        self.name = name
        self.nodes = tuple(nodes)
        self._by_name = {n.name: n for n in nodes}

    def node(self, name: str) -> RepNode:
        found = self._by_name.get(name)
        if found is None:
            raise GroupConfigError(f"node {name!r} is not a member of group {self.name!r} "
                                   f"({', '.join(self._by_name)})")
        return found

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    @property
    def majority(self) -> int:
        """How many nodes make a majority (JE's SIMPLE_MAJORITY)."""
        return len(self.nodes) // 2 + 1

    def __repr__(self) -> str:
        return f"RepGroup({self.name!r}, {', '.join(n.name for n in self.nodes)})"


__all__ = ["NodeState", "RepNode", "RepGroup"]
