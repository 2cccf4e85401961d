"""The store directory (store 1) and the root index (store 2): the two B+trees of every volume.

Modules::

    stdir.py      the store directory: store number -> store descriptor (Shore's directory manager)
    rootindex.py  the root index: index name -> store number
    dircheck.py   their invariants, as ``minidb verify`` checks them

This part sits above :mod:`minidb.pagestore.btree` (both are B+trees) and
below ``restart``. The descriptor's bytes
(:mod:`minidb.pagestore.files.sinfo`) stay with the file manager, which
receives the directory from the storage manager.
"""

from minidb.pagestore.directory.dircheck import check_directory
from minidb.pagestore.directory.rootindex import RootIndex
from minidb.pagestore.directory.stdir import StoreDirectory

__all__ = ["check_directory", "RootIndex", "StoreDirectory"]
