"""Accelerated twins of :mod:`minidb.pagestore.btree`."""
