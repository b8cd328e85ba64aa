"""Benchmark: the cleaning job's read step on a Parquet source, Spark's native reader vs the Python reader.

    .venv/bin/python benchmarks/parquet_read_throughput.py [--corpus /tmp/marin_bench_corpus-100000]
        [--docs 80000] [--files 8] [--repeat 3] [--cores N]

Input: the plain-text documents of a make_bench_corpus.py build (Debian docs), first --docs, written as
--files Parquet files (id, text; pyarrow defaults). Both sides run cleaning_job.read_records, the step
that turns a source's files into records (RECORD_SCHEMA) for the cleaning stage, on the same Spark
local[N] session: recipe.spark.native_parquet on (Spark's Parquet reader in the JVM; native_parquet.py)
and off (formats/parquet.py in one Python task per file, records to the JVM as Arrow batches). Each
round forces every record column: a count, the text bytes and an order-free checksum of all columns
(bit_xor of xxhash64), which must be equal on both sides. One untimed round each first (the JVM's
JIT, Python workers), then --repeat interleaved rounds; MB/s of document text (UTF-8), median and
range, load average (benchmarks/harness.py). Issue 17: read Parquet with Spark's native reader.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import harness  # noqa: E402


def write_parquet_source(corpus: Path, docs: int, files: int, out: Path) -> int:
    """The first `docs` text documents as `files` Parquet files; returns the text bytes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    lines = (line for path in sorted((corpus / "text").glob("*.jsonl")) for line in open(path))
    rows = [json.loads(line) for line in itertools.islice(lines, docs)]
    if not rows:
        raise SystemExit(f"no documents under {corpus}/text: build it with benchmarks/make_bench_corpus.py")
    out.mkdir(parents=True)
    for i in range(files):
        part = rows[i::files]
        pq.write_table(pa.table({"id": [r["id"] for r in part], "text": [r["text"] for r in part]}),
                       out / f"part-{i:03d}.parquet")  # fmt: skip
    return sum(len(r["text"].encode()) for r in rows)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path, default=Path("/tmp/marin_bench_corpus-100000"))
    parser.add_argument("--docs", type=int, default=80_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=harness.MIN_REPEATS)
    parser.add_argument("--cores", type=int, default=harness.machine_cores())
    args = parser.parse_args()

    from pyspark.sql import functions as F

    from marin_assets.data.clean.cleaning_job import RECORD_SCHEMA, read_records
    from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
    from marin_assets.data.formats.readers import list_source_files
    from marin_assets.data.sources.source_registry import SourceSpec
    from marin_assets.resources.spark import SparkResource

    with tempfile.TemporaryDirectory() as tmp:
        text_bytes = write_parquet_source(args.corpus, args.docs, args.files, Path(tmp) / "src")
        spec = SourceSpec(name="debian_parquet", uri=str(Path(tmp) / "src"), format="parquet", license="CC0-1.0",
                          id_field="id")  # fmt: skip
        files = list_source_files(spec)
        shipped = load_cleaning_recipe()
        recipes = {native: shipped.model_copy(update={"spark": shipped.spark.model_copy(update={"native_parquet": native})})
                   for native in (True, False)}  # fmt: skip
        columns = [c.split()[0] for c in RECORD_SCHEMA.split(", ")]
        spark = SparkResource(master=f"local[{args.cores}]", conf={"spark.ui.showConsoleProgress": "false",
                                                                   "spark.driver.memory": "4g"}).get_session()  # fmt: skip
        spark.sparkContext.setLogLevel("ERROR")

        def read(native: bool) -> tuple:
            records = read_records(spark, spec, recipes[native], files)
            return tuple(records.agg(F.count("*"), F.sum(F.octet_length("content")),
                                     F.bit_xor(F.xxhash64(*columns))).first())  # fmt: skip

        print(f"corpus: {args.docs:,} documents, {text_bytes / 1e6:.1f} MB of text in {len(files)} Parquet files; "
              f"both sides on Spark local[{args.cores}]")  # fmt: skip
        native = harness.Side("native reader", cores=args.cores)
        python = harness.Side("Python reader", cores=args.cores)
        untimed = {name: harness.timed(lambda: read(flag))[0] for name, flag in (("native", True), ("Python", False))}
        print("first round, not measured: " + ", ".join(f"{k} {v:.1f} s" for k, v in untimed.items()))
        for _ in range(args.repeat):
            native.time(lambda: read(True), units=text_bytes / 1e6)
            python.time(lambda: read(False), units=text_bytes / 1e6)
        print(f"records, text bytes, checksum: native {native.last}, Python {python.last}")
        if native.last != python.last:
            raise SystemExit("the native reader's records differ from the Python reader's")
        harness.report("Parquet source read step (MB/s of text)", native, python, unit="MB/s")
        spark.stop()


if __name__ == "__main__":
    main()
