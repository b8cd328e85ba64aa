"""The Spark side of the curation steps: broadcast their inputs, sum their counts per run.

The eval-set n-gram indexes and the classifier's bytes are broadcast once per job (not shipped with
every task); counts are summed and a few example ids per count are picked in Spark, so no document
reaches the driver.
"""

from __future__ import annotations

from marin_assets.data.clean.cleaning_recipe import CleaningRecipe
from marin_assets.data.curate.curation_steps import Curation, CurationInputs, build_curation

EXAMPLES_PER_COUNT = 3


def curation_for(spark, source: str, recipe: CleaningRecipe, eval_index,
                 quality_model: bytes | None) -> Curation:  # fmt: skip
    context = spark.sparkContext
    inputs = CurationInputs(
        eval_index=context.broadcast(eval_index) if eval_index else None,
        quality_model=context.broadcast(quality_model) if quality_model else None,
    )
    return build_curation(recipe, source, inputs)


def step_stats(rows) -> dict:
    """{"curation_counts": {key: total}, "curation_examples": {key: [smallest ids]}} over the run's rows."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    exploded = rows.where(F.col("step_counts").isNotNull()).select(
        "id", F.explode(F.from_json("step_counts", "map<string,bigint>")).alias("key", "n")
    )
    totals = {r["key"]: int(r["n"]) for r in exploded.groupBy("key").agg(F.sum("n").alias("n")).collect()}
    first = F.row_number().over(Window.partitionBy("key").orderBy("id"))
    examples: dict[str, list[str]] = {}
    for r in exploded.withColumn("_rank", first).where(F.col("_rank") <= EXAMPLES_PER_COUNT).collect():
        examples.setdefault(r["key"], []).append(r["id"])
    return {
        "curation_counts": dict(sorted(totals.items())),
        "curation_examples": {k: sorted(v) for k, v in sorted(examples.items()) if not k.startswith("quality:")},
    }
