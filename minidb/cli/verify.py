"""``minidb verify DIR``: check every entry of every log file.

It runs :func:`minidb.log.verify.verify_log` on the directory, read-only, with
every engine's entry types registered (:mod:`minidb.cli.engines`), so each
item is decoded by its type as well as checked (header, flags, ``prev``
chain, checksum, file headers across files). On the tour's log, and on a copy
with one bit of the entry at 0x1/0x4d flipped::

    ok: 4 files, 166 entries, the log ends at 0x4/0xf5                   (exit 0)
    problem: 00000001.jdb at offset 0x4d: checksum mismatch (stored 0x5184243e, computed 0x46ff307d)
                                                                         (exit 1)

On a log store's directory it then checks the trees of the last checkpoint,
read only (:func:`minidb.logstore.tools.verify.verify_log_trees`): slot keys in
order and within the bounds each parent gives its child, so a crafted entry
with a valid checksum (two keys of a BIN swapped) is a problem naming the
node, its LSN and its keys.

Erased entries are checked in their erased form. On a log store's directory
the eraser's recorded intent (``eraser.state``) is read once: an entry it was
still erasing when it stopped is accepted (opening the environment finishes
it); any other entry with type 0xff that does not verify is a problem, and so
is a well-formed one where the eraser never erases
(:func:`minidb.logstore.tools.verify.erased_entry_rule`: a type it does not erase,
the last file, the recovery interval).

Every file must carry the log's environment id (the first file's, or the
one a page store's volume header records): a file copied in from another
environment is a problem naming it (``problem: 00000002.jdb at offset 0x0:
00000002.jdb belongs to another environment (env id 0x..., this log's is
0x...)``, exit 1); a file of log format version 1 is refused (exit 2).

A torn tail at the end of the last file is what a crash leaves, not a
problem: it is printed as a ``note:`` line first. A directory that does not
exist or holds no log is a user error (one line, exit 2).

A directory holding a page store (``v1.vol``) is also checked as one
(:func:`minidb.pagestore.verify.verify_pagestore`, on a copy in memory):
its log must be whole (a missing log is a problem here, not a user error),
restart must succeed and every allocated page must pass its checksum; the
first problem names the page (``problem: .../v1.vol page 12 (p(1.3.12)):
checksum mismatch ...``, exit 1). All is well::

    ok: 1 files, 40 entries, the log ends at 0x1/0x9ea
    ok: page store v1.vol: 4 stores, 7 pages checked
"""

from __future__ import annotations

from minidb.cli.common import environment_id, log_disk
from minidb.errors import CorruptionError
from minidb.log.verify import verify_log
from minidb.logstore.eraser.state import erasing_of
from minidb.logstore.tools.verify import erased_entry_rule, verify_log_trees
from minidb.pagestore.restart.master import check_volume_and_log
from minidb.pagestore.verify import is_pagestore, verify_pagestore


def register(commands) -> None:
    p = commands.add_parser("verify", help="check a log; exit 1 at the first problem")
    p.add_argument("dir", help="the log's directory")
    p.set_defaults(run=run)


def run(args) -> int:
    import minidb.cli.engines  # noqa: F401  (registers every engine's entry types)

    disk = log_disk(args.dir)
    pagestore = is_pagestore(disk)
    try:
        if pagestore:
            check_volume_and_log(disk)
        # A log store's eraser may have been stopped mid-file; and it erases only where its rule allows.
        report = verify_log(disk, erasing_of(disk), erased_entry_rule(disk), env_id=environment_id(disk))
        for note in report.notes:
            print(f"note: {note}")
        if report.problem is not None:
            print(f"problem: {report.problem}")
            return 1
        checked = verify_pagestore(disk) if pagestore else None
        tree_problems = verify_log_trees(disk)  # a log store's: its checkpoint's trees (None for other logs)
    except CorruptionError as e:
        print(f"problem: {e}")
        return 1
    if tree_problems:
        more = f" (and {len(tree_problems) - 1} more)" if len(tree_problems) > 1 else ""
        print(f"problem: {tree_problems[0]}{more}")
        return 1
    print(f"ok: {report.files} files, {report.entries} entries, the log ends at {report.end}")
    if checked is not None:
        print(f"ok: {checked}")
    return 0
