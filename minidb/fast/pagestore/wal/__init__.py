"""Accelerated twins of :mod:`minidb.pagestore.wal`."""
