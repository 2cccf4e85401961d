"""One local SparkSession for every Spark test (local[2], no UI, 2 shuffle partitions), one standalone cluster.

The root conftest keeps all of tests/spark/ in one xdist worker, so the whole
suite starts one JVM for these tests. The JVM's own output goes to a log file
in the session's temporary directory.
"""

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
