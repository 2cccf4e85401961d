"""Accelerated twins: code that exists only for speed, apart from the reference it speeds up.

Each module here mirrors the path of the reference module it accelerates
(``minidb/fast/pagestore/lock/manager.py`` beside
``minidb/pagestore/lock/manager.py``) and defines, under the same names, the
hot spots that module declares with :func:`minidb.impl.hot_spot`. Each one
opens with what it skips and why skipping it is safe. Nothing imports these
modules directly: :mod:`minidb.impl` loads a twin when ``--impl fast`` (or
``MINIDB_IMPL=fast``) chooses it, and ``tests/agreement/`` proves each one
equal to its reference, byte for byte on the log and the volume.

A twin may import the engine it accelerates (it sits just above it); the
engine never imports a twin, and a page-store twin never imports the log
store, as the engines themselves never do.
"""
