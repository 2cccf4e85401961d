"""Accelerated twins of the log store's tree (:mod:`minidb.logstore.tree`)."""
