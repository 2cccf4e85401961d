"""Accelerated twins of log store recovery (:mod:`minidb.logstore.recovery`)."""
