"""What the cleaning job reports beside its tables: rejected examples per rule, file-level errors,
text repairs. Each is computed in Spark and brings back a bounded result (a few rows per rule, one
row per damaged file, one per repair reason), never rows per document.
"""

from __future__ import annotations

from marin_assets.data.clean.cleaning_rows import QUARANTINED
from marin_assets.data.clean.file_errors import FILE_LEVEL_CODES, file_error_rows
from marin_assets.data.formats.repairs import REPAIRS_KEY

EXAMPLES_PER_RULE = 3  # rejected documents shown per rule in the materialization (smallest ids: deterministic)
EXCERPT_CHARS = 200


def rejected_examples(rejected, per_rule: int = EXAMPLES_PER_RULE) -> list[dict]:
    """A few rejected documents per rule (smallest ids): rule, id, url, excerpt, the value that tripped it."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    # The excerpt is cut before the ranking's shuffle: whole texts (most of a corpus is rejected) are
    # not moved to pick a few rows per rule.
    slim = rejected.select(F.col("reason").alias("rule"), "id", "url",
                           F.substring("text", 1, EXCERPT_CHARS).alias("excerpt"), "value")  # fmt: skip
    rank = F.row_number().over(Window.partitionBy("rule").orderBy("id"))
    rows = slim.withColumn("_rank", rank).where(F.col("_rank") <= per_rule).drop("_rank").collect()
    return sorted((row.asDict() for row in rows), key=lambda r: (r["rule"], r["id"]))


def file_level(rows, skipped: list[str]) -> dict:
    """Files with errors (file_errors.COLUMNS) and text repairs summed by reason, both aggregated in Spark."""
    from pyspark.sql import functions as F

    code = F.substring_index("reason", ":", 1)
    bad = rows.where((F.col("status") == QUARANTINED) & code.isin(*FILE_LEVEL_CODES)).select("file", "offset", "reason")
    repairs = F.from_json(F.get_json_object("metadata", f"$.{REPAIRS_KEY}"), "map<string,long>")
    repaired = (rows.where(F.col("metadata").contains(f'"{REPAIRS_KEY}"'))
                .select(F.explode(repairs).alias("repair", "n")).groupBy("repair").agg(F.sum("n").alias("n"))
                .collect())  # fmt: skip
    return {
        "file_errors": file_error_rows([tuple(r) for r in bad.orderBy("file", "offset").collect()], skipped),
        "repaired_by_reason": dict(sorted((r["repair"], int(r["n"])) for r in repaired)),
    }
