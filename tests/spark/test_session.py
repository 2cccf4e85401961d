"""The session minidb starts: quiet, no UI, this Python, the data source registered, code shipped."""

import zipfile

from minidb.spark.session import LOCAL_JVM_OPTIONS, LOG4J2_PROPERTIES, spark_conf, spark_session


def test_the_configuration():
    conf = dict(spark_conf("local[3]", "x", shuffle_partitions=5, progress=False, conf={"spark.extra": "1"}).getAll())
    assert conf["spark.master"] == "local[3]" and conf["spark.app.name"] == "x"
    assert conf["spark.ui.enabled"] == "false" and conf["spark.ui.showConsoleProgress"] == "false"
    assert conf["spark.sql.shuffle.partitions"] == "5" and conf["spark.extra"] == "1"
    log4j = f"-Dlog4j2.configurationFile=file:{LOG4J2_PROPERTIES}"
    assert conf["spark.driver.extraJavaOptions"] == f"{log4j} {LOCAL_JVM_OPTIONS}"
    cluster = spark_conf("spark://head:7077").get("spark.driver.extraJavaOptions")
    assert cluster == log4j  # a cluster's driver keeps the JVM's defaults
    assert spark_conf("spark://head:7077").get("spark.executor.extraJavaOptions") is None  # and its executors
    quick = dict(spark_conf("spark://head:7077", quick_jvm=True).getAll())  # a short job on a small cluster
    assert quick["spark.driver.extraJavaOptions"] == f"{log4j} {LOCAL_JVM_OPTIONS}"
    assert quick["spark.executor.extraJavaOptions"] == LOCAL_JVM_OPTIONS
    assert spark_conf("local[2]", quick_jvm=False).get("spark.driver.extraJavaOptions") == log4j
    assert "rootLogger.level = warn" in LOG4J2_PROPERTIES.read_text()
    assert spark_conf().get("spark.sql.shuffle.partitions") == "8"


def test_a_running_session_is_reused_and_ships_py_files(spark, tmp_path):
    shipped = tmp_path / "probe.zip"
    with zipfile.ZipFile(shipped, "w") as z:
        z.writestr("shipped_probe.py", "VALUE = 42\n")
    again = spark_session("local[2]", py_files=[str(shipped)])
    assert again is spark
    # the executors' Python workers import the shipped module
    values = spark.sparkContext.parallelize(range(4), 2).map(lambda _: __import__("shipped_probe").VALUE).collect()
    assert values == [42] * 4
