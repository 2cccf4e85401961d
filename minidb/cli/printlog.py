"""``minidb printlog DIR``: the log's entries, one line each (JE's DbPrintLog).

Options: ``-s LSN`` and ``-e LSN`` bound the scan (``-s`` must name the start
of an entry), ``--type NAME`` keeps one entry type (any engine's, by its name
in the ``logdef.py`` tables, or ``Erased``), ``-q`` prints headers only. The
line format is :mod:`minidb.log.printer`'s, e.g.::

    <entry lsn="0x1/0x2e" type="Trace" prev="0x0" size="17" cksum="3742827074"><Trace message="the tour begins"/></entry>

The log is opened read-only: a torn tail is left in place and reported on
stderr. Damage is judged as ``minidb verify`` judges it
(:mod:`minidb.log.check`): a bad entry, a missing file, or a file that ends
before the next file's ``FileHeader`` says (empty, or cut at an entry
boundary) stops the listing after the entries before it, with one line on
stderr and exit code 1; so does a file of another environment (its
FileHeader's ``env_id`` is not the log's: the first file's, or for a page
store the one its volume header records). An unknown type name, or ``-s 0x1/0x27`` where no entry starts, is a
user error (one line, exit 2).

``minidb printlog --codec TYPE`` prints the Python source generated for
TYPE's codec by the accelerated twin (:mod:`minidb.fast.log.codec`) instead, and needs no directory.
"""

from __future__ import annotations

import sys

from minidb.cli.common import environment_id, log_disk, lsn_arg
from minidb.errors import LogError, UserError
from minidb.fast.log.codec import codec_source
from minidb.log import LogManager, format_entry, known_types, type_by_name
from minidb.log.verify import require_log
from minidb.logstore.eraser.state import erasing_of


def register(commands) -> None:
    p = commands.add_parser("printlog", help="print log entries, one per line")
    p.add_argument("dir", nargs="?", help="the log's directory")
    p.add_argument("-s", dest="start", type=lsn_arg, metavar="LSN", help="first entry to print, e.g. 0x1/0x26")
    p.add_argument("-e", dest="end", type=lsn_arg, metavar="LSN", help="last entry to print")
    p.add_argument("--type", dest="type_name", metavar="NAME", help="print only entries of this type")
    p.add_argument("-q", dest="quiet", action="store_true", help="headers only, no bodies")
    p.add_argument("--codec", metavar="TYPE", help="print the generated codec of entry type TYPE and stop")
    p.set_defaults(run=run)


def run(args) -> int:
    import minidb.cli.engines  # noqa: F401  (registers every engine's entry types)

    if args.codec is not None:
        sys.stdout.write(codec_source(_entry_type(args.codec)))
        return 0
    if args.dir is None:
        raise UserError("printlog needs the log's directory (or --codec TYPE)")
    disk = log_disk(args.dir)
    require_log(disk)
    type_code = None
    if args.type_name is not None:
        entry_type = _entry_type(args.type_name, "Erased")
        type_code = entry_type.code if entry_type else 0xFF
    # Entries the eraser was still erasing are accepted; every file must carry the environment's id.
    log = LogManager(disk, readonly=True, erasing=erasing_of(disk), env_id=environment_id(disk))
    if args.start is not None:
        try:
            log.read(args.start)
        except LogError:
            raise UserError(f"no log entry starts at {args.start} in {args.dir}") from None
    out = sys.stdout
    for entry in log.scan(args.start):
        if args.end is not None and entry.lsn > args.end:
            break
        if type_code is None or entry.header.type_code == type_code:
            out.write(format_entry(entry, args.quiet) + "\n")
    if log.tail_cut is not None:
        print(f"minidb printlog: note: {log.tail_cut} (a reader leaves it; opening for writing cuts it)",
              file=sys.stderr)
    return 0


def _entry_type(name: str, *extra: str):
    """The registered entry type ``name`` (None for one of ``extra``); an unknown name is a user error."""
    entry_type = type_by_name(name)
    if entry_type is None and name not in extra:
        names = ", ".join([t.name for t in known_types()] + list(extra))
        raise UserError(f"unknown entry type {name!r} (known: {names})")
    return entry_type
