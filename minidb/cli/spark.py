"""``minidb spark analyze PATH [--master URL] [--out DIR]``: the data pipeline on Spark.

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
"""

from __future__ import annotations

import os
import sys

from minidb.cli.common import path_arg
from minidb.cli.output import check_output, owned_output
from minidb.errors import UserError
from minidb.log import file_name

OWNER = "minidb spark analyze"


def register(commands) -> None:
    p = commands.add_parser("spark", help="the data pipeline on Apache Spark (minidb spark analyze PATH)")
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
        from pyspark.errors import PySparkException
        from py4j.protocol import Py4JError

        if not isinstance(e, (PySparkException, Py4JError)):
            raise
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"minidb spark analyze: the Spark job failed: {first}", file=sys.stderr)
        return 1
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
