"""The log cleaner: utilization, file selection, cleaning, deletion at checkpoints, protection.

- :mod:`.utilization`: how much of each log file is still live (JE's ``UtilizationTracker``), made
  durable as FileSummaryLNs at checkpoint step 7;
- :mod:`.selector`: which file to clean (JE's thresholds, 50% total, 5% per file);
- :mod:`.cleaner`: cleaning a file (live or obsolete, by asking the tree; live LNs migrated, live INs
  made dirty) and deleting cleaned files at checkpoint step 9;
- :mod:`.protect`: the protection registry and the file-deletion listeners;
- :mod:`.daemon`: the background thread (``EnvironmentConfig.run_cleaner``).

``env.clean_log()`` cleans on demand; ``env.cleaner`` is the :class:`Cleaner` (built through its hot
spot, ``CLEANER``).
"""

from minidb.logstore.cleaner.cleaner import CLEANER, CLEANER_STATS, Cleaner, FileCleaning, entry_verdict
from minidb.logstore.cleaner.daemon import CleanerThread
from minidb.logstore.cleaner.protect import FileProtector, ProtectedFileSet
from minidb.logstore.cleaner.selector import Selection, select_file, total_utilization
from minidb.logstore.cleaner.utilization import FileSummary, UtilizationTracker

__all__ = ["Cleaner", "CLEANER", "CleanerThread", "FileCleaning", "CLEANER_STATS", "FileProtector", "ProtectedFileSet", "Selection",
           "select_file", "total_utilization", "entry_verdict", "FileSummary", "UtilizationTracker"]
