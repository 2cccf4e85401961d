"""The shared log's own entry types (see :mod:`minidb.log.types`).

``FileHeader`` is the first entry of every log file: its number (checked
against the file name), the creation time in milliseconds, the LSN of the
last entry of the previous file (NULL_LSN for the first file; this is how a
backward scan crosses from one file to the one before), and the log format
version. ``Trace`` is free text, for tests, demonstrations and debugging.
"""

from minidb.log.fields import LSN_FIELD, STR, U32, U64
from minidb.log.types import EntryTable

LOG_VERSION = 1

LOG_TYPES = EntryTable(
    "log",
    [
        # name          code  flags  fields
        ("FileHeader",  0x01, "",    [("file_number", U32), ("created_ms", U64),
                                      ("last_entry_lsn", LSN_FIELD), ("log_version", U32)]),
        ("Trace",       0x02, "",    [("message", STR)]),
    ],
)

FILE_HEADER = LOG_TYPES.FileHeader
TRACE = LOG_TYPES.Trace
