"""No Spark result whose size grows with the corpus comes back to the driver in the data path.

Every call that moves rows between the driver and the executors (collect, toPandas, take, ...,
createDataFrame) in the data and tokenize packages must be listed here with why its size is
bounded; a new one fails this test until someone argues it in the allowlist.
"""

from __future__ import annotations

import ast
from pathlib import Path

import marin_assets

PACKAGE = Path(marin_assets.__file__).resolve().parent
DATA_PATH = ("data", "tokenize")
DRIVER_CALLS = {"collect", "toPandas", "toLocalIterator", "take", "head", "tail", "collectAsMap", "createDataFrame"}

# (module, enclosing function, call) -> why the rows are bounded (not by the corpus size)
ALLOWED = {
    ("data/clean/cleaning_job.py", "read_records", "createDataFrame"): "from an RDD: rows stay on the executors",
    ("data/clean/cleaning_job.py", "_rule_tallies", "collect"): "one row per source and rule / quarantine code",
    ("data/clean/cleaning_job.py", "_tallies", "collect"): "one row per dedup reason",
    ("data/spark/parquet_output.py", "write_parquet", "collect"): "one row per output file written",
    ("data/clean/cleaning_job.py", "count_source_records", "collect"): "one row per raw file",
    ("data/clean/cleaning_report.py", "rejected_examples", "collect"): "EXAMPLES_PER_RULE rows per rule",
    ("data/clean/cleaning_report.py", "file_level", "collect"): "one row per damaged file, one per repair reason",
    ("data/curate/curation_job.py", "step_stats", "collect"): "one row per curation count key, EXAMPLES_PER_COUNT ids per key",
    ("data/dedup/spark_dedup.py", "duplicate_decisions", "createDataFrame"): "an empty frame (the schema)",
    ("data/spark/parquet_output.py", "take_rows", "take"): "pyarrow, not Spark: one row group of a write task's file",
    ("tokenize/mixture_shuffle.py", "_gather", "take"): "pyarrow, not Spark: rows of one input row group",
    ("tokenize/mixture_shuffle.py", "_assemble", "take"): "pyarrow, not Spark: one spilled batch reordered",
    ("tokenize/tokenize_job.py", "tokenize_source", "collect"): "one row of counts per token shard written",
}


def driver_calls(source: str, module: str) -> set[tuple[str, str, str]]:
    """(module, enclosing function, method) for each driver-bound call in the source."""
    found = set()

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else function
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) and child.func.attr in DRIVER_CALLS:
                found.add((module, function, child.func.attr))
            visit(child, name)

    visit(ast.parse(source), "<module>")
    return found


def _data_path_calls() -> set[tuple[str, str, str]]:
    calls = set()
    for folder in DATA_PATH:
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            calls |= driver_calls(path.read_text(), path.relative_to(PACKAGE).as_posix())
    return calls


def test_every_driver_bound_call_in_the_data_path_is_argued_bounded():
    unexplained = _data_path_calls() - ALLOWED.keys()
    assert not unexplained, f"driver-bound Spark calls not argued bounded in ALLOWED: {sorted(unexplained)}"


def test_the_check_catches_a_new_collect():
    # the shape near dedup had before it moved into Spark: collect the edges, union-find in Python
    snippet = "def near_duplicate_ids(docs):\n    pairs = [(r[0], r[1]) for r in edges(docs).collect()]\n"
    assert driver_calls(snippet, "data/x.py") == {("data/x.py", "near_duplicate_ids", "collect")}
    nested = "def f(spark, ids):\n    def g():\n        return spark.createDataFrame([(i,) for i in ids])\n    return g\n"
    assert driver_calls(nested, "data/y.py") == {("data/y.py", "g", "createDataFrame")}
