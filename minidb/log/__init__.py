"""The shared log: LSNs, entry headers and types, files, the writer, readers.

Both engines and replication write through this package (following Berkeley
DB JE's log layout). Public surface::

    LSN, NULL_LSN                      log sequence numbers (lsn.py)
    Provisional                        provisional flag values (header.py)
    EntryType, EntryTable, fields      entry-type tables (types.py, fields.py)
    LOG_TYPES, FILE_HEADER, TRACE      the log's own entry types (logdef.py)
    LogManager, open_log               appending, flushing, group commit
    ManualClock, MonotonicClock        what a sync's leader waits by (groupcommit.py)
    LogEntry, format_entry             an entry as read back; as a printlog line
    LogEnd, TailCut, find_end          the end of the log; torn tails
    file_name, file_number             log file names (00000001.jdb)
    inspect_file, read_file            one file's entries and bad part, read-only
    scan_tolerant, ScannedEntry        every entry of a file, bad ones reported,
                                       resynchronising after corruption
    Problem, missing_file,             what is wrong with a set of log files, as every
    bad_entry_problem, next_file_problem, reader judges it (check.py)
    foreign_file_problem
    new_env_id                         a new environment's id (envid.py)
"""

from minidb.log import fields
from minidb.log.check import Problem, bad_entry_problem, foreign_file_problem, missing_file, next_file_problem
from minidb.log.end import LogEnd, TailCut, find_end, read_file
from minidb.log.entry import LogEntry
from minidb.log.envid import new_env_id
from minidb.log.files import file_name, file_number, log_file_numbers
from minidb.log.groupcommit import ManualClock, MonotonicClock
from minidb.log.header import Provisional
from minidb.log.logdef import FILE_HEADER, LOG_TYPES, TRACE
from minidb.log.lsn import LSN, NULL_LSN
from minidb.log.manager import LogManager, open_log
from minidb.log.printer import format_entry
from minidb.log.scan import FileInspection, ScannedEntry, Verdict, inspect_file, scan_tolerant
from minidb.log.types import EntryTable, EntryType, known_types, type_by_code, type_by_name

__all__ = [
    "LSN", "NULL_LSN", "Provisional", "EntryType", "EntryTable", "fields", "known_types",
    "type_by_code", "type_by_name", "LOG_TYPES", "FILE_HEADER", "TRACE", "LogManager",
    "open_log", "LogEntry", "LogEnd", "TailCut", "find_end", "file_name", "file_number",
    "log_file_numbers", "FileInspection", "format_entry", "Verdict", "inspect_file", "read_file",
    "ScannedEntry", "scan_tolerant", "Problem", "missing_file", "bad_entry_problem", "next_file_problem",
    "ManualClock", "MonotonicClock", "foreign_file_problem", "new_env_id",
]
