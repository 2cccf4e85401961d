"""One local SparkSession for every Spark test and the tour's (local[2], no UI, 2 shuffle partitions), one
standalone cluster.

The root conftest keeps all of tests/spark/ in one xdist worker, so the whole
suite starts one JVM for these tests. The JVM's own output goes to a log file
in the session's temporary directory. The tests that run commands on the
cluster share one run (``cluster_runs``): one application, so one more driver
JVM and one executor JVM, for the load and the analysis together.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from minidb.spark.generate import GenerateRequest, generate


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from minidb.spark.session import spark_session

    jvm_log = tmp_path_factory.mktemp("spark") / "jvm.log"
    session = spark_session("local[2]", "minidb tests", shuffle_partitions=2, progress=False, jvm_log=jvm_log)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def generated(tmp_path_factory):
    """Five environments (three of them a replication group), several files each."""
    out = tmp_path_factory.mktemp("generated")
    return generate("log", GenerateRequest(str(out), envs=5, ops=500, seed=7, group=3,
                                           file_max=12 * 1024, ckpt_every=60))


@pytest.fixture(scope="session")
def logs(spark, generated):
    """The generated logs as read by the data source, cached."""
    return spark.read.format("minidb").load(generated.request.out).cache()


@pytest.fixture(scope="session")
def analyzed(spark, generated, tmp_path_factory):
    """``analyze()`` of the generated logs in local mode: (out directory, result)."""
    from minidb.spark.pipeline import analyze

    out = tmp_path_factory.mktemp("analyze") / "out"
    return out, analyze(spark, generated.request.out, str(out))


@pytest.fixture(scope="session")
def million(spark, tmp_path_factory):
    """A million rows and 25 without a key, as Parquet: (path, what Spark computes of the good rows)."""
    from tests.spark.test_load import MILLION, dataset, expected

    path = tmp_path_factory.mktemp("load") / "million.parquet"
    dataset(spark, path, MILLION, bad=25)
    return path, expected(spark, path)


@pytest.fixture(scope="session")
def cluster_runs(cluster, million, generated, tmp_path_factory):
    """``minidb spark load`` of the million rows, then ``minidb spark analyze`` of the generated logs, both
    with ``--master`` the cluster's URL, in one application (:mod:`tests.spark.cluster_driver`), run once.

    Yields a namespace: ``load`` and ``analyze`` (each ``{"code", "stdout", "stderr"}``), ``volume`` and
    ``out`` (where they wrote) and ``apps`` (the names of the applications the master ran)."""
    from types import SimpleNamespace

    from tests.spark.cluster_driver import APP
    from tests.spark.test_cluster import JOB_SECONDS, master_status, spark_env
    from tests.spark.test_load import new_volume

    url, ui_port = cluster
    tmp = tmp_path_factory.mktemp("cluster-runs")
    volume, out, result = new_volume(tmp / "vol"), tmp / "cluster-out", tmp / "result.json"
    load = ["spark", "load", str(million[0]), "--volume", volume, "--index", "cl", "--key", "key",
            "--value", "name,amount", "--master", url]
    analyze = ["spark", "analyze", generated.request.out, "--master", url, "--out", str(out)]
    done = subprocess.run([sys.executable, "-m", "tests.spark.cluster_driver", url, str(result),
                           json.dumps(load), json.dumps(analyze)], capture_output=True, text=True,
                          env=spark_env(tmp), cwd=Path(__file__).resolve().parents[2], timeout=2 * JOB_SECONDS)
    assert done.returncode == 0, done.stderr[-3000:]
    status = master_status(ui_port)
    apps = [a["name"] for a in status["activeapps"] + status["completedapps"]]
    assert APP in apps  # the commands really ran there
    ran = json.loads(result.read_text(encoding="utf-8"))
    return SimpleNamespace(load=ran[0], analyze=ran[1], volume=volume, out=out, apps=apps)


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    """A standalone cluster (a master and one worker on 127.0.0.1), ready: (master URL, master UI port).

    Shared by the tests that run a command on a cluster; both processes are stopped at the end, by this
    finalizer, or at exit after Ctrl-C or SIGTERM (:mod:`tests.process_groups`). A SIGKILL cannot be
    caught: after one, the master and the worker keep running (``kill -- -PGID`` ends each group)."""
    from tests.spark.test_cluster import master_status, standalone_cluster, wait_for

    with standalone_cluster(tmp_path_factory.mktemp("cluster")) as (url, ui_port, processes, logs):
        def worker_alive():
            status = master_status(ui_port)
            return bool(status) and status.get("status") == "ALIVE" and any(
                w.get("state") == "ALIVE" for w in status.get("workers", []))

        wait_for("the master and its worker", worker_alive, processes, logs)
        yield url, ui_port
    assert all(p.poll() is not None for p in processes)  # both stopped
