"""Accelerated twins of :mod:`minidb.pagestore.files`."""
