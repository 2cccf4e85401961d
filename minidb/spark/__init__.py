"""The data pipeline: minidb logs as Spark DataFrames, analyses, generated workloads.

Public surface (importing this package does not start or even import Spark;
the modules that need PySpark import it themselves)::

    session.spark_session        a SparkSession with the "minidb" data source registered
    source.MinidbLogSource       spark.read.format("minidb").load(path): one row per entry
    schema.LOG_SCHEMA            the columns of that DataFrame
    analytics                    analyses, each a function DataFrame -> DataFrame
    pipeline.analyze             every analysis, written as Parquet tables and PNG figures
    generate.generate            seeded environments to analyse (minidb generate)
    logdef.GENERATOR_TYPES       the test entry types the log generator writes
"""
