"""Run minidb commands one after the other in ONE Spark application on a cluster (a driver process of its own).

``python -m tests.spark.cluster_driver MASTER RESULT.json ARGV.json...`` starts one session on ``MASTER``
(application :data:`APP`), runs each command through :func:`minidb.cli.main` on it, and writes, per command,
its exit code and what it printed to stdout and stderr, as JSON. The cluster tests share this one run: one
driver JVM and one executor JVM for every command instead of one pair per command. A command stops its
session at the end; here the application outlives the commands and is stopped once, after the last.
"""

import json
import sys
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO

from minidb.cli import main
from minidb.spark.session import spark_session

APP = "minidb spark load and analyze"


def run(master: str, commands: list[list[str]]) -> list[dict]:
    spark = spark_session(master, APP, quick_jvm=True)  # a short job: C1 only, serial GC (as in local mode)
    session = type(spark)
    stop = session.stop
    session.stop = lambda self: None
    results = []
    try:
        for argv in commands:
            out, err = StringIO(), StringIO()
            with redirect_stdout(out), redirect_stderr(err):
                code = main(argv)
            results.append({"argv": argv, "code": code, "stdout": out.getvalue(), "stderr": err.getvalue()})
    finally:
        session.stop = stop
        spark.stop()
    return results


if __name__ == "__main__":
    master, result, *commands = sys.argv[1:]
    with open(result, "w", encoding="utf-8") as f:
        json.dump(run(master, [json.loads(c) for c in commands]), f)
