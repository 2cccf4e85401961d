"""The corruption harness: damage each engine's durable state in every way, and judge what it does.

For each engine, a builder makes one small *fsynced, committed* state on a
simulated disk and records its committed data, the model
(:mod:`.state`; :mod:`.build_log`, :mod:`.build_pagestore`,
:mod:`.build_logstore`, :mod:`.build_replication`). The case list
(:mod:`.cases`) flips every bit of every header (log entry headers, page
headers and footers, the master's slots) and a seeded sample of item and
page bytes, zeroes each entry header and each page, cuts each file at every
entry (page, slot) boundary, deletes each file, swaps each log file for a
sibling environment's and replaces each file by older copies of itself
(snapshots taken while building). Each case is applied to
a fresh copy of the state; then ``minidb verify`` runs on it, the engine
opens it and every committed item is read back, and the outcome is
classified (:mod:`.classify`):

- ``detected``: verify exits 1, or open raises a corruption error naming
  the file and offset or the page;
- ``intact``: open returns exactly the model;
- ``prefix``: the damage cut or deleted the *last* log file at an entry
  boundary, or hit the last entry of that file, and open returns exactly
  the committed data of the log prefix that remains;
- ``refused``: open raises another minidb error (clear, but not a report
  of corruption); ``missed``: a truncation or deletion that no crash can
  leave went unreported, though what open returned was exact;
- ``WRONG``: open returns data that differs from the model with no error;
- ``LOST``: open cut or deleted a fsynced entry or page (the files' bytes
  before and after open are compared);
- ``CRASH``: an exception that is not a minidb error (a traceback).

WRONG, LOST and CRASH must never happen.

Why ``prefix`` exists: cutting the last log file at an entry boundary, or
deleting it, leaves exactly the state a crash could leave had those
entries never been written (the log writer fsyncs a file before it starts
the next), and a bad last entry looks like a torn write. No engine can tell
that from a crash without a second durable record of each commit, so such
a log may be read as ending there, its damaged tail cut, provided what
open returns is exactly the committed state of that prefix (recorded while
building: after each commit, the LSN where it became durable), never a
part of a transaction. Every other truncation or deletion (a non-last log
file, the volume, the master, a cut before the page store's master
checkpoint or before a page written to the volume) cannot be a crash's
doing and must be detected.

``tests/corruption/test_harness.py`` runs a seeded sample of a few hundred
cases in ``make test``; ``make fuzz`` (``scripts/fuzz.py``) runs them all and
prints a table of outcomes per engine and kind.
"""

from tests.corruption import build_log, build_logstore, build_pagestore, build_replication

BUILDERS = {
    "log": build_log.build,
    "pagestore": build_pagestore.build,
    "pagestore-scavenged": build_pagestore.build_scavenged,
    "logstore": build_logstore.build,
    "replication": build_replication.build,
}
