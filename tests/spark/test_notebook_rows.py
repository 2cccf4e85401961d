"""The rows notebook 15's pictures are drawn from (minidb/viz/notebook15_rows.json) are what its queries return.

``minidb figures`` and the picture tests draw notebook 15's pictures from the
stored rows, without Spark; this test runs the notebook's queries over its own
workload on the shared session and compares every row with the stored ones.
"""

import json

from minidb.spark.generate import GenerateRequest, generate
from minidb.viz.notebook_figures import SPARK_ROWS, SPARK_WORKLOAD, _spark_rows, spark_lecture_rows


def test_notebook_15_pictures_draw_the_rows_its_queries_return(spark, tmp_path):
    envs = str(tmp_path / "envs")
    generate("log", GenerateRequest(envs, **SPARK_WORKLOAD))
    computed = json.loads(json.dumps(spark_lecture_rows(spark, envs)))
    stored = json.loads(SPARK_ROWS.read_text(encoding="utf-8"))
    assert set(stored) == {"by_file", "sizes", "checkpoints", "streams", "gaps", "duplicates", "divergence"}
    for name, rows in computed.items():
        assert stored[name] == rows, f"{name}: the stored rows differ: run make figures"
    assert all(stored[name] for name in ("by_file", "sizes", "checkpoints", "streams", "divergence"))
    assert _spark_rows()["streams"] == [tuple(r) for r in computed["streams"]]  # what the pictures draw
