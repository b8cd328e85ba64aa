"""Connected components of a graph held in Spark, with no per-vertex state on the driver.

Alternating large-star / small-star (Kiveris et al., "Connected Components in MapReduce and
Beyond", SoCC 2014): edges are kept oriented (src > dst); large-star links every neighbour larger
than a vertex to the smallest vertex of its neighbourhood, small-star links a vertex and its smaller
neighbours to the smallest of them. A round is small-star then large-star (small-star first: on
LSH bucket edges it first links each document to its smallest bucket representative, which saves
a round on the Debian corpus). Both keep the components; the fixed point is one star per
component centred on its smallest vertex, reached in O(log^2 n) rounds even on long chains (label
propagation needs a round per hop of the diameter).

Convergence is tested on one edge set alone, in one aggregation: the edges form stars (every vertex
has at most one edge out, and no vertex has edges both out and in). Such a star is a whole component
and its centre, smaller than every leaf, is the component's smallest vertex: the fixed point. So the
iteration stops as soon as it gets there (no extra round that changes nothing, no comparison of two
edge sets), and is skipped when the input edges already are stars (LSH buckets mostly are). Each round
the driver receives one boolean, never vertices.

An edge set of at most `local_limit` edges (after orientation and distinct: typically the candidate
pairs of a corpus with few duplicates) is instead joined by union-find in one executor task
(repartition(1) + mapInArrow): the same components in one job instead of a check and rounds of
shuffles, each with Spark's fixed per-job cost. Only its size comes back to the driver.

Vertices may be any orderable Spark type (a string id, or a struct such as (id, source)).
"""

from __future__ import annotations

from marin_assets.data.dedup.dedup_keys import cluster_representatives

MAX_ROUNDS = 100  # a round at least halves most chains; 100 rounds is far beyond any real corpus
# Edges one executor task joins in memory: ~1M edges is a few hundred MB of Python objects in that worker.
LOCAL_LIMIT = 1_000_000


def _oriented(edges, a: str, b: str):
    from pyspark.sql import functions as F

    return (
        edges.select(F.greatest(a, b).alias("src"), F.least(a, b).alias("dst"))
        .where(F.col("src") != F.col("dst"))
        .distinct()
    )


def _pairs(*pairs):
    """One row per (src, dst) column pair of each input row: the rows of several selects in one scan."""
    from pyspark.sql import functions as F

    return F.explode(F.array(*(F.struct(s.alias("src"), d.alias("dst")) for s, d in pairs))).alias("e")


def _large_star(edges):
    """Every neighbour v larger than u -> the smallest of u's neighbourhood (u included); distinct."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    both = edges.select(_pairs((F.col("src"), F.col("dst")), (F.col("dst"), F.col("src")))).select(
        F.col("e.src").alias("u"), F.col("e.dst").alias("v")
    )
    # a window, not groupBy + join: one shuffle by u instead of two
    linked = both.withColumn("m", F.least("u", F.min("v").over(Window.partitionBy("u"))))
    return linked.where(F.col("v") > F.col("u")).select(F.col("v").alias("src"), F.col("m").alias("dst")).distinct()


def _small_star(edges):
    """Every vertex and its smaller neighbours -> the smallest of those neighbours. Rows may repeat:
    large-star, which follows, ignores repeats and ends distinct."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    linked = edges.withColumn("m", F.min("dst").over(Window.partitionBy("src")))
    stars = linked.select(_pairs((F.col("src"), F.col("m")), (F.col("dst"), F.col("m")))).select("e.*")
    return stars.where(F.col("src") != F.col("dst"))  # dst == m: the smallest neighbour itself


def are_stars(edges) -> bool:
    """Distinct oriented edges (src > dst) form stars: no vertex with two edges out or with edges both
    out and in. One aggregation over the vertices' degrees; the driver gets one boolean."""
    from pyspark.sql import functions as F

    one, zero = F.lit(1), F.lit(0)
    out_end = F.struct(F.col("src").alias("v"), one.alias("out"), zero.alias("in"))
    in_end = F.struct(F.col("dst").alias("v"), zero.alias("out"), one.alias("in"))
    ends = edges.select(F.explode(F.array(out_end, in_end)).alias("e"))
    degrees = ends.groupBy("e.v").agg(F.sum("e.out").alias("out"), F.sum("e.in").alias("in"))
    return degrees.where((F.col("out") > 1) | ((F.col("out") > 0) & (F.col("in") > 0))).isEmpty()


def _union_find_batches(edge_type):
    """mapInArrow body over all edges in one partition: (member, rep) of every non-smallest vertex.
    Struct vertices become tuples, whose order is Spark's struct order (field by field)."""

    def vertices(column) -> list:
        values = column.to_pylist()
        return [tuple(v.values()) for v in values] if edge_type.num_fields else values

    def run(batches):
        import pyarrow as pa

        edges = [pair for batch in batches for pair in zip(vertices(batch.column("src")), vertices(batch.column("dst")))]
        reps = {m: r for m, r in cluster_representatives(edges).items() if m != r}
        as_arrow = (lambda vs: [dict(zip(edge_type.names, v)) for v in vs]) if edge_type.num_fields else list
        schema = pa.schema([("member", edge_type), ("rep", edge_type)])
        yield pa.RecordBatch.from_arrays([pa.array(as_arrow(reps), edge_type), pa.array(as_arrow(reps.values()), edge_type)],
                                         schema=schema)  # fmt: skip

    return run


def local_components(edges):
    """(member, rep) of oriented edges (src, dst) by union-find in one executor task."""
    from pyspark.sql.pandas.types import to_arrow_type

    spark_type = edges.schema["src"].dataType
    columns = f"member {spark_type.simpleString()}, rep {spark_type.simpleString()}"
    return edges.repartition(1).mapInArrow(_union_find_batches(to_arrow_type(spark_type)), columns)


def _counted_checkpoint(frame):
    """(frame checkpointed on the executors, its row count): the count observed in the job that computes
    the checkpoint, not a second job over its blocks (Spark's fixed cost per job)."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    rows = Observation("rows")
    checkpointed = frame.observe(rows, F.count(F.lit(1)).alias("rows")).localCheckpoint()
    return checkpointed, rows.get["rows"]


def star_components(edges, a: str = "a", b: str = "b", max_rounds: int = MAX_ROUNDS, local_limit: int = LOCAL_LIMIT):
    """(DataFrame (member, rep), rounds run): component_representatives and how many star rounds it took
    (None: the edges were few enough for local_components)."""
    from pyspark.sql import functions as F

    # localCheckpoint cuts the lineage each round (plans would otherwise grow with the round count)
    # and computes the input's band keys once; the blocks stay on the executors.
    current, edge_count = _counted_checkpoint(_oriented(edges, a, b))
    if edge_count <= local_limit:
        return local_components(current), None
    for rounds in range(max_rounds + 1):
        if are_stars(current):  # a star's only edge out of a leaf goes to its centre, the smallest
            return current.select(F.col("src").alias("member"), F.col("dst").alias("rep")), rounds
        if rounds < max_rounds:
            current = _large_star(_small_star(current)).localCheckpoint()
    raise RuntimeError(f"connected components did not converge in {max_rounds} rounds")


def component_representatives(edges, a: str = "a", b: str = "b", max_rounds: int = MAX_ROUNDS,
                              local_limit: int = LOCAL_LIMIT):  # fmt: skip
    """DataFrame (member, rep): every vertex of an undirected edge list that is not its component's
    smallest vertex, with that smallest vertex. Components of one vertex (self-loops) give no rows."""
    return star_components(edges, a, b, max_rounds, local_limit)[0]
