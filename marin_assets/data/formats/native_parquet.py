"""Parquet sources read by Spark's own Parquet reader (in the JVM), giving the Python reader's records.

formats/parquet.py reads a file in a Python task and hands each row to the JVM; Spark's reader decodes
the same columns in the JVM and never builds a Python object per row before cleaning. The records are
the same rows (RECORD_COLUMNS) as the Python reader's, by the same rules: offset = row index in the
file, id = the id column as a string (or `<source>/<file name>#<row>` when it is null or absent), a
null text is quarantined as `bad_field`, a text over max_record_bytes as `record_too_large`.

A file goes native only where its footer shows the native path reproduces the Python reader exactly:
the text column is a string column, the id and url columns are strings or integers (or absent), the
file has rows, and its path holds no glob character (Spark expands globs in paths). Every other file
(unreadable, no text column, a binary or nested text, no rows) stays with the Python reader, which
quarantines it with its reason. A file whose footer reads but whose pages are damaged fails the job
with Spark's FAILED_READ_FILE naming the file, where the Python reader would keep the rows before the
damage and quarantine the rest: `spark.native_parquet: false` cleans such a source that way.
"""

from __future__ import annotations

import posixpath
from typing import NamedTuple

from marin_assets.data.formats import records as r
from marin_assets.data.sources.source_files import relative_name
from marin_assets.data.sources.source_registry import SourceSpec
from marin_assets.fastpath.spark.hadoop_paths import qualified_uri

GLOB_CHARACTERS = frozenset("*?[]{}\\")
FOOTER_THREADS = 16


class FooterVerdict(NamedTuple):
    path: str
    native: bool
    columns: tuple[str, ...]  # the id and url columns the file has (of spec.id_field, spec.url_field)
    id_type: str | None  # Spark SQL type to read the id column as


def column_verdict(schema, spec: SourceSpec) -> tuple[bool, tuple[str, ...], str | None]:
    """(native?, id/url columns present, Spark type of the id column) from a file's Arrow schema."""
    import pyarrow as pa

    def is_text(t) -> bool:
        return pa.types.is_string(t) or pa.types.is_large_string(t)

    def as_string_exactly(t) -> bool:  # Spark's cast to string writes what Python's str() does
        return is_text(t) or (pa.types.is_integer(t) and t != pa.uint64())

    names = schema.names
    if spec.text_field not in names or not is_text(schema.field(spec.text_field).type):
        return False, (), None
    present = tuple(c for c in (spec.id_field, spec.url_field) if c and c in names)
    wanted = {spec.text_field, *present}
    # Spark matches column names without case and needs a backtick-free name to quote
    if any("`" in c for c in wanted) or sum(n.lower() in {c.lower() for c in wanted} for n in names) != len(wanted):
        return False, (), None
    if not all(as_string_exactly(schema.field(c).type) for c in present):
        return False, (), None
    id_type = None
    if spec.id_field in present:
        id_type = "string" if is_text(schema.field(spec.id_field).type) else "long"
    return True, present, id_type


def footer_verdict(path: str, spec: SourceSpec) -> FooterVerdict:
    import fsspec
    import pyarrow as pa
    import pyarrow.parquet as pq

    if GLOB_CHARACTERS.intersection(path):
        return FooterVerdict(path, False, (), None)
    with fsspec.open(path, "rb") as f:
        try:
            parquet = pq.ParquetFile(f)
        except (pa.ArrowException, OSError):
            return FooterVerdict(path, False, (), None)  # the Python reader quarantines it, naming the error
        native, present, id_type = column_verdict(parquet.schema_arrow, spec)
        return FooterVerdict(path, native and parquet.metadata.num_rows > 0, present, id_type)


def footer_verdicts(spec: SourceSpec, files: list[str], threads: int = FOOTER_THREADS) -> list[FooterVerdict]:
    """Each file's verdict, in order. Footers are a few KB read with one or two requests each, so a thread
    pool on the driver reads them sooner than a Spark job would start Python workers."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max(1, min(threads, len(files)))) as pool:
        return list(pool.map(lambda path: footer_verdict(path, spec), files))


def same_file_key(file_path):
    """Spark's file listing writes local files as file:/x, Hadoop's qualified path as file:///x."""
    from pyspark.sql import functions as F

    return F.regexp_replace(file_path, "^file:/+", "file:///")


def native_records(spark, spec: SourceSpec, verdicts: list[FooterVerdict], max_record_bytes: int):
    """The records (RECORD_SCHEMA columns) of the native files, read by Spark; None when there are none.
    Files are read in groups of the same id/url columns, each with an explicit schema."""
    from functools import reduce

    groups: dict[tuple, list[str]] = {}
    for v in verdicts:
        if v.native:
            groups.setdefault((v.columns, v.id_type), []).append(v.path)
    if not groups:
        return None
    names = {qualified_uri(spark, p): (relative_name(p, spec), posixpath.basename(p))
             for paths in groups.values() for p in paths}  # fmt: skip
    frames = [_group_records(spark, spec, paths, columns, id_type, names, max_record_bytes)
              for (columns, id_type), paths in groups.items()]  # fmt: skip
    return reduce(lambda a, b: a.unionByName(b), frames)


def _group_records(spark, spec: SourceSpec, paths: list[str], columns: tuple[str, ...], id_type: str | None,
                   names: dict[str, tuple[str, str]], max_record_bytes: int):  # fmt: skip
    from pyspark.sql import functions as F

    schema = ", ".join([f"`{spec.text_field}` string"]
                       + [f"`{c}` {id_type if c == spec.id_field else 'string'}" for c in columns])  # fmt: skip
    def as_string(column: str | None):
        return (F.col(f"`{column}`") if column in columns else F.lit(None)).cast("string")

    raw = spark.read.schema(schema).parquet(*paths).select(
        F.col(f"`{spec.text_field}`").alias("content"), as_string(spec.id_field).alias("own_id"),
        as_string(spec.url_field).alias("url"), F.col("_metadata.file_path").alias("file_path"),
        F.col("_metadata.row_index").alias("offset"),
    )  # fmt: skip
    # file URI -> (file name, base name), a literal map in the plan (no join, no DataFrame of names)
    entries = []
    for uri, (name, base) in names.items():
        entries += [F.lit(uri), F.array(F.lit(name), F.lit(base))]
    named = F.try_element_at(F.create_map(*entries), same_file_key(F.col("file_path")))
    # a file Spark names otherwise than qualified_uri has no entry: fail rather than lose or misname its rows
    unnamed = F.raise_error(F.concat(F.lit("native Parquet read: no file name for "), F.col("file_path")))
    rows = raw.withColumn("pair", F.when(named.isNull(), unnamed).otherwise(named)).select(
        "*", F.col("pair")[0].alias("file_name"), F.col("pair")[1].alias("base_name"))
    size = F.octet_length("content").cast("long")
    bad, too_large = F.col("content").isNull(), size > F.lit(max_record_bytes)
    quarantined = bad | too_large
    record = ~quarantined
    derived = F.concat(F.lit(f"{spec.name}/"), F.col("base_name"), F.lit("#"), F.col("offset").cast("string"))
    return rows.select(
        F.when(quarantined, F.lit("quarantine")).otherwise(F.lit("record")).alias("kind"),
        F.when(record, F.coalesce("own_id", derived)).alias("id"),
        F.when(record, F.col("url")).alias("url"),
        F.when(record, F.col("content")).alias("content"),
        F.when(record, F.lit("text")).alias("content_type"),
        F.when(record, F.lit("{}")).alias("metadata"),
        F.when(record, size).alias("raw_length"),
        F.col("file_name").alias("file"),
        F.col("offset").cast("long").alias("offset"),
        F.when(bad, F.lit(f"{r.BAD_FIELD}: {spec.text_field} is NoneType"))
        .when(too_large, F.concat(F.lit(f"{r.RECORD_TOO_LARGE}: "), size.cast("string"), F.lit(" bytes")))
        .alias("reason"),
        F.when(bad, F.lit("")).when(too_large, F.substring("content", 1, r.EXCERPT_CHARS)).alias("excerpt"),
    )
