"""Accelerated twins of the log store (:mod:`minidb.logstore`): gets, puts and recovery."""
