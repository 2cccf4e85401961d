"""Accelerated twins of the page store's hot spots (see :mod:`minidb.fast`)."""
