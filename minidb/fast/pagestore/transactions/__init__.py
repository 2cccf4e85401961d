"""Accelerated twins of :mod:`minidb.pagestore.transactions`."""
