"""Refresh minidb/viz/notebook15_rows.json, the rows notebook 15's pictures are drawn from (`make figures` runs it).

The notebook's queries run on a local Spark over its own workload
(minidb.viz.notebook_figures.SPARK_WORKLOAD); the file is rewritten with what
they return. A Spark test compares the file with the queries' rows, so a
change to the workload, the generator or an analysis shows up there first.
"""

from minidb.viz.notebook_figures import SPARK_ROWS, refresh_spark_rows

if __name__ == "__main__":
    refresh_spark_rows()
    print(f"wrote {SPARK_ROWS}")
