"""Accelerated twins of the log store's transactions and locks (:mod:`minidb.logstore.txn`)."""
