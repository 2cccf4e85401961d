"""Accelerated twins of the log store (:mod:`minidb.logstore`): gets, puts, recovery and the cleaner's runs."""
