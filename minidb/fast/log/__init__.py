"""Accelerated twins of the shared log (:mod:`minidb.log`): reading entries, appending them."""
