"""Accelerated twins of the log cleaner (:mod:`minidb.logstore.cleaner`)."""
