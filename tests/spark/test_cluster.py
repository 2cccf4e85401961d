"""`minidb spark analyze` on a real standalone Spark cluster gives the results of local mode.

The test starts a master and one worker on 127.0.0.1 from the pip-installed
Spark (``spark-class org.apache.spark.deploy.master.Master`` and
``...worker.Worker``) on free ports (the session fixture ``cluster`` of
``conftest.py``, which other cluster tests share), waits until the master's
JSON status page lists the worker as ALIVE (a bounded polling loop, never a
fixed sleep), runs the pipeline on it as a user would (``minidb spark analyze
--master spark://127.0.0.1:PORT``, through :func:`minidb.cli.main` in a driver
process of its own that also runs ``minidb spark load`` on the cluster: the
fixture ``cluster_runs``, one application for both) on the logs that the other
Spark tests analyse in local mode (on the shared session: no second local
JVM), and compares every table. The worker runs this virtual environment's Python
(``PYSPARK_PYTHON``), so the executors import minidb from this worktree.
Every JVM of the test (master, worker, driver, executor) lives for one short
job, so each compiles with C1 only and collects with the serial collector, as
local mode's does (``quick_jvm``, :mod:`minidb.spark.session`): a third less CPU.
Both processes are stopped at the end, whatever happened: each runs in its own
process group (:class:`tests.process_groups.ProcessGroups`), which the
fixture's finalizer ends, and so do an ``atexit`` hook (a pytest stopped by
Ctrl-C) and a SIGTERM handler (a pytest killed by SIGTERM). A pytest killed
by SIGKILL cannot clean up: the master and worker then keep running, and
``kill -- -PGID`` ends each.
"""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pyarrow.parquet as pq
import pyspark
import pytest

from minidb.spark.pipeline import FIGURES
from minidb.spark.session import LOCAL_JVM_OPTIONS

from tests.process_groups import ProcessGroups
from tests.spark.cluster_driver import APP

SPARK_HOME = Path(pyspark.__file__).resolve().parent
READY_SECONDS = 120
JOB_SECONDS = 600


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_env(tmp: Path) -> dict:
    env = dict(os.environ)
    env.update(SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable,
               SPARK_LOG_DIR=str(tmp / "logs"), SPARK_WORKER_DIR=str(tmp / "work"),
               SPARK_DAEMON_JAVA_OPTS=LOCAL_JVM_OPTIONS)  # the master and the worker: short-lived, as local mode's JVM
    env.pop("PYSPARK_GATEWAY_PORT", None)
    return env


def master_status(ui_port: int) -> dict | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as response:
            return json.load(response)
    except (OSError, ValueError):
        return None


def wait_for(what: str, check, processes, logs, seconds: float = READY_SECONDS):
    """Poll ``check()`` until it is true; fail at once if a process died, or after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for process, log in zip(processes, logs, strict=True):
            if process.poll() is not None:
                pytest.fail(f"{what}: a Spark process exited with {process.returncode}:\n{Path(log).read_text()[-3000:]}")
        if check():
            return
        time.sleep(0.2)  # polling interval of a bounded loop
    tails = "\n".join(Path(log).read_text()[-2000:] for log in logs)
    pytest.fail(f"{what}: not ready after {seconds} s\n{tails}")


@contextmanager
def standalone_cluster(tmp: Path):
    """A master and one worker on 127.0.0.1: yields (master URL, master UI port)."""
    env = spark_env(tmp)
    (tmp / "work").mkdir(parents=True)
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    port, ui_port, worker_port, worker_ui = (free_port() for _ in range(4))
    url = f"spark://127.0.0.1:{port}"
    groups = ProcessGroups()  # each in its own process group, ended here, at exit and on SIGTERM
    master_log, worker_log = tmp / "master.log", tmp / "worker.log"
    try:
        with open(master_log, "wb") as out:
            groups.start([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                          "--port", str(port), "--webui-port", str(ui_port)],
                         stdout=out, stderr=subprocess.STDOUT, env=env)
        with open(worker_log, "wb") as out:
            groups.start([spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                          "--port", str(worker_port), "--webui-port", str(worker_ui), "--cores", "2",
                          "--memory", "2g", "--work-dir", str(tmp / "work"), url],
                         stdout=out, stderr=subprocess.STDOUT, env=env)
        yield url, ui_port, list(groups.started), [master_log, worker_log]
    finally:
        groups.stop_all()


def tables(out: Path) -> dict[str, list[dict]]:
    return {p.name: pq.read_table(p).to_pylist() for p in sorted(out.iterdir()) if p.is_dir()}


def test_the_pipeline_on_a_standalone_cluster_matches_local_mode(generated, analyzed, cluster, cluster_runs):
    report = generated
    url, _ = cluster
    local_out, local_result = analyzed  # local mode, on the shared session
    local = local_result.summary()
    done = cluster_runs.analyze  # ``minidb spark analyze ... --master spark://...`` (see conftest.py)
    assert APP in cluster_runs.apps  # the job really ran there
    assert done["code"] == 0, done["stderr"][-3000:]
    output = done["stdout"]

    assert output.splitlines()[0].endswith(f"on Spark {url}")
    assert output.splitlines()[1:-1] == local.splitlines()[:-1]  # the same findings
    local_tables, cluster_tables = tables(local_out), tables(cluster_runs.out)
    assert len(local_tables) == 13 and cluster_tables == local_tables
    divergence = cluster_tables["first_divergence"]
    assert {r["vlsn"] for r in divergence} == {report.group.first_divergence}
    assert sum(r["entries"] for r in cluster_tables["entries_by_type"]) == sum(e.entries for e in report.envs)
    for name in FIGURES:
        assert (cluster_runs.out / name).stat().st_size > 0
