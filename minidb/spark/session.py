"""Starting Spark for minidb: a session with the data source registered, quiet logs.

:func:`spark_session` is the one place minidb configures Spark:

- ``master``: ``local[*]`` by default (every core of this machine, one JVM),
  or a cluster's URL such as ``spark://host:7077``;
- the Python that runs minidb on the executors is this one
  (``PYSPARK_PYTHON`` defaults to ``sys.executable``; set it to the path of
  a Python with minidb installed on the nodes of a real cluster);
- the JVM logs warnings and errors only (``log4j2.properties`` next to this
  module), and Spark's console progress bar is on unless ``progress=False``;
- in local mode the one JVM lives only as long as a small job: it compiles with
  the quick C1 compiler only and collects with the serial collector
  (:data:`LOCAL_JVM_OPTIONS`), which halves the CPU an analysis of a few
  environments takes (about 80 CPU seconds to 40 for the tour's); a
  cluster's driver and executors keep the JVM's defaults, unless
  ``quick_jvm=True`` asks for the same options for both (a short job on a
  small cluster, such as the test suite's: a third less CPU for its load of a
  million rows);
- no web UI, the session time zone is UTC, shuffles use
  ``shuffle_partitions`` partitions (analyses of minidb logs produce small
  tables: 8 by default instead of Spark's 200);
- ``jvm_log``: a file that receives everything the JVM prints (notebooks use
  it so nothing Spark prints lands in a cell's output);
- ``py_files``: zip files (or ``.py`` files) shipped to the executors and put
  on their Python path (``SparkContext.addPyFile``): a way to give a cluster
  whose nodes lack minidb its code (README, "The Spark pipeline on a cluster");
- the ``minidb`` data source (:mod:`minidb.spark.source`) is registered.

A session that is already running is returned as it is (with the data
source registered), as ``SparkSession.builder.getOrCreate()`` does.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession

from minidb.io.created import created
from minidb.spark.source import MinidbLogSource

LOG4J2_PROPERTIES = Path(__file__).with_name("log4j2.properties")
DEFAULT_SHUFFLE_PARTITIONS = 8
LOCAL_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def spark_conf(master: str = "local[*]", app_name: str = "minidb", *, shuffle_partitions: int | None = None,
               progress: bool = True, conf: dict[str, str] | None = None,
               quick_jvm: bool | None = None) -> SparkConf:
    """The configuration :func:`spark_session` starts Spark with (``quick_jvm``: default, in local mode only)."""
    python = os.environ.get("PYSPARK_PYTHON", sys.executable)
    jvm_options = f"-Dlog4j2.configurationFile=file:{LOG4J2_PROPERTIES}"
    quick = master.startswith("local") if quick_jvm is None else quick_jvm
    if quick:
        jvm_options += f" {LOCAL_JVM_OPTIONS}"
    settings = {
        "spark.master": master,
        "spark.app.name": app_name,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "true" if progress else "false",
        "spark.sql.shuffle.partitions": str(shuffle_partitions or DEFAULT_SHUFFLE_PARTITIONS),
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.pyspark.python": python,
        "spark.pyspark.driver.python": sys.executable,
        "spark.driver.extraJavaOptions": jvm_options,
    }
    if quick and not master.startswith("local"):
        settings["spark.executor.extraJavaOptions"] = LOCAL_JVM_OPTIONS
    settings.update(conf or {})
    spark_conf = SparkConf(loadDefaults=False)
    for key, value in settings.items():
        spark_conf.set(key, value)
    return spark_conf


def spark_session(master: str | None = None, app_name: str = "minidb", *, shuffle_partitions: int | None = None,
                  progress: bool = True, jvm_log: str | os.PathLike | None = None,
                  conf: dict[str, str] | None = None, py_files: Sequence[str] = (),
                  quick_jvm: bool | None = None) -> SparkSession:
    """A SparkSession for minidb (see the module documentation)."""
    master = master or "local[*]"
    # Python workers, including the one that plans a Python data source, start
    # PYSPARK_PYTHON: without it they would be whatever "python3" is on PATH.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no "hostname resolves to loopback" warning
    if SparkContext._active_spark_context is not None:
        spark = SparkSession.builder.getOrCreate()
    else:
        settings = spark_conf(master, app_name, shuffle_partitions=shuffle_partitions, progress=progress, conf=conf,
                              quick_jvm=quick_jvm)
        if jvm_log is None:
            spark = SparkSession.builder.config(conf=settings).getOrCreate()
        else:
            from pyspark.java_gateway import launch_gateway

            with open(jvm_log, "ab") as out:  # the JVM keeps its own copy of the descriptor
                created(jvm_log)
                gateway = launch_gateway(settings, popen_kwargs={"stdout": out, "stderr": out})
            spark = SparkSession(SparkContext(conf=settings, gateway=gateway))
    for path in py_files:
        spark.sparkContext.addPyFile(os.path.abspath(path))
    register(spark)
    return spark


def register(spark: SparkSession) -> None:
    """Make ``spark.read.format("minidb")`` known to ``spark``."""
    spark.dataSource.register(MinidbLogSource)
