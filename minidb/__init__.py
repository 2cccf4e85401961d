"""minidb: a teaching storage engine.

Layers, bottom up (imports only point down)::

    minidb.errors, minidb.stats     shared errors, statistics and traces
    minidb.io                       the disk: real files or a simulated disk that crashes
    minidb.log                      the shared log: LSNs, entries, files, writer, readers
    minidb.logstore                 the log store (JE): a B+tree in the log, checkpointer, recovery
    minidb.cli, minidb.viz          front ends: the command line, pictures and widgets
"""

__version__ = "0.1.0"
