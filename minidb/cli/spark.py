"""``minidb spark analyze PATH [--master URL] [--out DIR]`` and ``minidb spark load SRC ...``: the data pipeline on Spark.

Reads every log under PATH (an environment, a directory of environments, or
a glob) with the ``minidb`` Spark data source, runs every analysis and
writes Parquet tables and PNG figures to ``--out`` (see
:mod:`minidb.spark.pipeline`). Without ``--master`` Spark runs in local mode
(``local[*]``); with ``--master spark://host:port`` the same job runs on a
standalone cluster, whose nodes need minidb installed (README: "The Spark
pipeline on a cluster"). Spark's progress bars show on the console; its
logging is quieted to warnings.

``--out`` is claimed as :mod:`minidb.cli.output` describes, before Spark
starts: a new or empty directory, or this command's earlier output, which is
replaced. Damage in the logs (every row of the ``problems`` table: corrupt
entries, a missing or shortened file...) makes the exit code 1, with the first
problem on one line of stderr, after everything is written;
``--tolerate-damage`` makes it 0.

``minidb spark load SRC --volume DIR --index NAME --key COLUMN [--value
COLUMNS] [--master URL] [--format csv|parquet|json]`` builds a unique B+tree
index NAME in the page store volume in DIR from the dataset SRC
(:mod:`minidb.spark.load`): Spark sorts, the driver bulk-loads. ``--create``
formats a new volume in DIR first (a new or empty directory; ``--pages``
8 KB pages, at most :data:`MAX_PAGES`, 128 GB; the volume's disk space is taken when it is
formatted, so that writing a page back never meets a full disk); a format that
fails leaves DIR as it was (a directory it made is removed), so running
again works. A progress bar (rows loaded) goes to stderr,
one summary line to stdout. A missing SRC, an unknown column, a directory
without a volume, an index name already taken, a duplicate key in the data:
one line, exit 2 (nothing is left behind). A failed Spark job: one line,
exit 1.
"""

from __future__ import annotations

import os
import sys

from minidb.cli.common import int_at_least, path_arg
from minidb.cli.output import check_output, owned_output
from minidb.errors import UserError
from minidb.log import file_name

OWNER = "minidb spark analyze"


def register(commands) -> None:
    p = commands.add_parser("spark", help="the data pipeline on Apache Spark (minidb spark analyze PATH, "
                                          "minidb spark load SRC)")
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    actions.required = True
    a = actions.add_parser("analyze", help="run every analysis on the logs under PATH; write tables and figures")
    a.add_argument("path", type=path_arg, metavar="PATH", help="an environment directory, a directory of environments, or a glob")
    a.add_argument("--master", default=None, metavar="URL",
                   help="Spark master: local[N], local[*] (the default) or spark://host:port")
    a.add_argument("--out", type=path_arg, default="out/spark", metavar="DIR", help="where to write tables and figures (default out/spark)")
    a.add_argument("--py-files", default="", metavar="ZIP[,ZIP...]",
                   help="zip files shipped to the executors and put on their Python path "
                        "(for clusters whose nodes lack minidb; see the README)")
    a.add_argument("--no-verify", dest="verify", action="store_false",
                   help="do not verify entry checksums (faster; finds only structural damage)")
    a.add_argument("--tolerate-damage", action="store_true",
                   help="exit 0 even if the logs are damaged (the problems table lists the damage either way)")
    a.set_defaults(run=run_analyze)
    register_load(actions)


def spark_failed(e: Exception, owner: str) -> int:
    """A failed Spark job is one line and exit code 1; any other error is raised again."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    if not isinstance(e, (PySparkException, Py4JError)):
        raise e
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    print(f"{owner}: the Spark job failed: {first}", file=sys.stderr)
    return 1


def run_analyze(args) -> int:
    from minidb.spark.source import log_file_partitions

    files = log_file_partitions(args.path)  # a bad PATH is a one-line error before Spark starts
    py_files = [p for p in args.py_files.split(",") if p]
    for path in py_files:
        if not os.path.isfile(path):
            raise UserError(f"--py-files: {path}: no such file")
    check_output(args.out, OWNER)
    from minidb.spark.pipeline import analyze
    from minidb.spark.session import spark_session

    master = args.master or "local[*]"
    envs = len({f.env for f in files})
    print(f"minidb spark analyze: {len(files)} log files of {envs} environments, on Spark {master}", flush=True)
    spark = spark_session(master, app_name="minidb spark analyze", py_files=py_files)
    try:
        with owned_output(args.out, OWNER):
            result = analyze(spark, args.path, args.out, verify_checksums=args.verify)
    except Exception as e:  # a failed Spark job: one line, not a JVM stack trace
        return spark_failed(e, OWNER)
    finally:
        spark.stop()
    print(result.summary())
    problems = result.rows["problems"]
    if problems and not args.tolerate_damage:
        env, number, offset, _lsn, _type, what = problems[0]
        rows = f"{len(problems):,} problem row{'' if len(problems) == 1 else 's'}"
        print(f"minidb spark analyze: the logs are damaged: {rows} in "
              f"{os.path.join(args.out, 'problems')}; the first: {env}/{file_name(number)} at offset 0x{offset:x}: "
              f"{what} (--tolerate-damage to exit 0)", file=sys.stderr)
        return 1
    return 0


LOAD_OWNER = "minidb spark load"
DEFAULT_PAGES = 16384  # 128 MB of 8 KB pages, taken on disk at --create: about 2.5 million small rows
# 128 GB of 8 KB pages. A volume can address 2**32 - 1 pages, but formatting builds its extent and store maps
# in memory: about 10,000 pages (80 MB) here, 2 million (17 GB) at the limit.
MAX_PAGES = 2**24


def register_load(actions) -> None:
    a = actions.add_parser("load", help="build a B+tree index in a page store volume from a dataset, sorted by Spark")
    a.add_argument("src", type=path_arg, metavar="SRC", help="the dataset: a CSV (with a header), Parquet or JSON file or directory")
    a.add_argument("--volume", type=path_arg, required=True, metavar="DIR", help="the directory of the page store volume")
    a.add_argument("--index", required=True, metavar="NAME", help="the new index's name (not yet in the volume)")
    a.add_argument("--key", required=True, metavar="COLUMN", help="the key column (integers: an i8 index; strings: str)")
    a.add_argument("--value", default=None, metavar="COLUMNS",
                   help="comma-separated value columns stored in each entry (default: every other column)")
    a.add_argument("--key-type", choices=("int", "str"), default=None,
                   help="convert the keys to this type (default: from the key column's type)")
    a.add_argument("--format", dest="fmt", choices=("csv", "parquet", "json"), default=None,
                   help="the dataset's format (default: from SRC's extension)")
    a.add_argument("--master", default=None, metavar="URL",
                   help="Spark master: local[N], local[*] (the default) or spark://host:port")
    a.add_argument("--fill", type=float, default=0.9, help="fill factor of the pages, in (0, 1] (default 0.9)")
    a.add_argument("--create", action="store_true", help="format a new volume in DIR first (a new or empty directory)")
    a.add_argument("--pages", type=int_at_least(1, MAX_PAGES, " (128 GB of 8 KB pages)"), default=DEFAULT_PAGES,
                   help=f"with --create: the volume's size in 8 KB pages (default {DEFAULT_PAGES}, "
                        f"at most {MAX_PAGES:,})")
    a.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    a.set_defaults(run=run_load)


def run_load(args) -> int:
    from minidb.spark.load import LoadRequest, check_request, check_source, load

    values = None if args.value is None else tuple(v.strip() for v in args.value.split(",") if v.strip())
    request = LoadRequest(args.src, args.volume, args.index, args.key, values, args.fmt, args.key_type, args.fill)
    check_source(request)
    if args.create:
        create_volume(args.volume, args.pages)
    check_request(request)  # before Spark starts
    from pyspark import SparkContext

    from minidb.spark.session import spark_session

    ours = SparkContext._active_spark_context is None  # a session already running is left running
    spark = spark_session(args.master or "local[*]", app_name=LOAD_OWNER, progress=False)
    try:
        result = load(spark, request, progress=progress_bar if args.progress else None)
    except Exception as e:
        return spark_failed(e, LOAD_OWNER)
    finally:
        if ours:
            spark.stop()
    print(result.summary())
    return 0


def create_volume(path: str, pages: int) -> None:
    """A new volume in ``path``, a new or empty directory. A format that fails leaves nothing behind:
    the format deletes its files, and the directories made for it are removed again."""
    from minidb.io import OSDisk
    from minidb.pagestore.sm import StorageManager

    if os.path.exists(path) and (not os.path.isdir(path) or os.listdir(path)):
        raise UserError(f"--create: {path} is not a new or empty directory")
    made = []  # the directories this makes, innermost first
    above = os.path.abspath(path)
    while not os.path.lexists(above):
        made.append(above)
        above = os.path.dirname(above)
    try:
        StorageManager.format(OSDisk(path, create=True), num_pages=pages, ext_sz=8, restart_trace=False).close()
    except BaseException:
        for directory in made:
            try:
                os.rmdir(directory)
            except OSError:  # not empty: something else was put there meanwhile, and stays
                break
        raise


def progress_bar(rows, total: int):
    from tqdm import tqdm

    return tqdm(rows, total=total, desc="loading", unit=" rows", unit_scale=True, file=sys.stderr, mininterval=0.5)
