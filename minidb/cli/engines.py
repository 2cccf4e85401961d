"""Imports every part of minidb that declares log entry types.

Importing a ``logdef`` module registers its entry-type table, which is how
``printlog`` and ``verify`` learn every type name. Add new engines here.
"""

import minidb.log.logdef  # noqa: F401
import minidb.logstore.logdef  # noqa: F401
import minidb.pagestore.wal.logdef  # noqa: F401
import minidb.replication.logdef  # noqa: F401
import minidb.spark.logdef  # noqa: F401  (the generator's test entries, minidb generate --engine log)
