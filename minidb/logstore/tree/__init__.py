"""The B+tree of a database: INs over BINs over LNs, all versions in the log.

``in_node.IN`` (upper levels), ``bin.BIN`` (level 1), ``ln`` (records),
``tree.Tree`` (search, insert, split, fetch), ``cursor.Cursor`` (scans),
``node_logger.NodeLogger`` (a node's new version logged, its parent's slot pointed at it).
"""

from minidb.logstore.tree.bin import BIN
from minidb.logstore.tree.in_node import IN

__all__ = ["IN", "BIN"]
