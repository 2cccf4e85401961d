"""The shared log's own entry types (see :mod:`minidb.log.types`).

``FileHeader`` is the first entry of every log file: its number (checked
against the file name), the creation time in milliseconds, the LSN of the
last entry of the previous file (NULL_LSN for the first file; this is how a
backward scan crosses from one file to the one before), the log format
version, and the *environment id*. ``Trace`` is free text, for tests,
demonstrations and debugging.

The FileHeader's item (little-endian, 32 bytes; the entry is 46 bytes with its
14-byte header, so a file's second entry is at offset 0x2e)::

    offset size field           worked example (the second file of a log)
    ------ ---- --------------  -------------------------------------------
       0     4  file_number     2
       4     8  created_ms      1700000000000
      12     8  last_entry_lsn  0x1/0x10e      the previous file's last entry
      20     4  log_version     2
      24     8  env_id          0x5c0f...      the same in every file of the log

    0      4            12               20     24             32
    +------+------------+----------------+------+--------------+
    | file | created_ms | last_entry_lsn | vers |    env_id    |
    +------+------------+----------------+------+--------------+

**The environment id** is how a log file proves it belongs to its log. Two
environments that ran the same operations with values of the same sizes
write files whose numbers and ``last_entry_lsn`` chains match exactly, so
without it a file copied from the wrong backup, or from a sibling directory,
reads as a perfectly good member of the log. The id is chosen when the log is
created (its first file) and copied into every later file; readers refuse a
file whose id differs from the log's (:func:`minidb.log.check.foreign_file_problem`).
How it is chosen is :mod:`minidb.log.envid`'s business. ``log_version`` sits
at the same offset (20) as in version 1, whose item ended there, so a
version-1 file is recognised and refused by name, not taken for damage.
"""

from minidb.log.codec import codec_of
from minidb.log.fields import LSN_FIELD, STR, U32, U64
from minidb.log.header import HEADER_SIZE
from minidb.log.lsn import NULL_LSN
from minidb.log.types import EntryTable

LOG_VERSION = 2  # 2: the FileHeader carries the environment id
VERSION_OFFSET = 20  # log_version's offset in the FileHeader's item, in every version

LOG_TYPES = EntryTable(
    "log",
    [
        # name          code  flags  fields
        ("FileHeader",  0x01, "",    [("file_number", U32), ("created_ms", U64),
                                      ("last_entry_lsn", LSN_FIELD), ("log_version", U32),
                                      ("env_id", U64)]),
        ("Trace",       0x02, "",    [("message", STR)]),
    ],
)

FILE_HEADER = LOG_TYPES.FileHeader
TRACE = LOG_TYPES.Trace
# A FileHeader entry's size: its (never replicated) entry header and its item, the same in every file.
# (Worked out with the reference codec while the module loads: no implementation is chosen yet.)
FILE_HEADER_ENTRY_SIZE = HEADER_SIZE + len(codec_of(FILE_HEADER).encode(
    {"file_number": 0, "created_ms": 0, "last_entry_lsn": NULL_LSN, "log_version": LOG_VERSION, "env_id": 0}))
