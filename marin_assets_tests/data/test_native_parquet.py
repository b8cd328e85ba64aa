"""Parquet sources read by Spark's own reader give the Python reader's records, file by file, and the
files it cannot reproduce exactly stay with the Python reader (and its quarantine)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from marin_assets.data.clean.cleaning_job import read_records, clean_source
from marin_assets.data.clean.cleaning_recipe import load_cleaning_recipe
from marin_assets.data.formats.native_parquet import column_verdict, footer_verdict, footer_verdicts, native_records
from marin_assets.data.formats.readers import list_source_files
from marin_assets.data.sources.source_registry import SourceSpec
from marin_assets_tests.data.test_filters import SENTENCES

MAX_BYTES = 2_000


def _spec(root, **kw) -> SourceSpec:
    return SourceSpec(name="pq", uri=str(root), format="parquet", license="CC0-1.0", **kw)


def _text(i: int) -> str:
    return " ".join(SENTENCES[i % 8 :] + SENTENCES[: i % 8]) + f" Note {i} é ü 中文."


def _source(root) -> dict[str, bool]:
    """Parquet files of every kind; -> {file name: whether the native reader should take it}."""
    root.mkdir()
    n = 40
    texts = [_text(i) for i in range(n)]
    texts[3], texts[7] = None, "x" * (MAX_BYTES + 1)  # quarantined: null text, too large
    texts[8] = "é" * (MAX_BYTES // 2 + 1)  # too large in bytes, not in characters
    ids = [f"doc-{i}" if i % 5 else None for i in range(n)]  # null ids: derived from file and row
    pq.write_table(pa.table({"text": texts, "id": ids, "url": [f"https://x/{i}" for i in range(n)]}),
                   root / "a.parquet", row_group_size=7)  # fmt: skip
    pq.write_table(pa.table({"text": texts[:9], "id": pa.array([10, None, 12, 13, 14, 15, 16, 17, 18], pa.int64()),
                             "url": pa.array([None] * 9, pa.string())}), root / "b c#1.parquet")  # fmt: skip
    pq.write_table(pa.table({"text": texts[10:20]}), root / "only text.parquet")
    pq.write_table(pa.table({"text": pa.array([t.encode() if t else None for t in texts[:5]], pa.binary())}),
                   root / "binary.parquet")  # fmt: skip
    pq.write_table(pa.table({"body": texts[:3]}), root / "no_text.parquet")
    pq.write_table(pa.table({"text": texts[:3], "id": [1.5, 2.5, 3.5]}), root / "float_id.parquet")
    pq.write_table(pa.table({"text": texts[:4]}), root / "glob[1].parquet")
    pq.write_table(pa.table({"text": pa.array([], pa.string())}), root / "empty.parquet")
    (root / "corrupt.parquet").write_bytes(b"PAR1 this is no parquet file")
    return {"a.parquet": True, "b c#1.parquet": True, "only text.parquet": True, "binary.parquet": False,
            "no_text.parquet": False, "float_id.parquet": False, "glob[1].parquet": False,
            "empty.parquet": False, "corrupt.parquet": False}  # fmt: skip


def _recipe(native: bool):
    shipped = load_cleaning_recipe()
    return shipped.model_copy(update={
        "max_record_bytes": MAX_BYTES,
        "language": shipped.language.model_copy(update={"allowlist": []}),
        "dedup": shipped.dedup.model_copy(update={"exact": False, "near": False}),
        "spark": shipped.spark.model_copy(update={"partitions": 2, "native_parquet": native}),
    })  # fmt: skip


def _rows(frame) -> list[tuple]:
    return sorted((tuple(row) for row in frame.collect()), key=repr)


def test_the_column_verdict_takes_string_text_and_string_or_integer_ids_only():
    spec = SourceSpec(name="s", uri="/x", format="parquet", license="CC0-1.0", id_field="id", url_field="url")
    schema = lambda **cols: pa.schema(list(cols.items()))  # noqa: E731
    assert column_verdict(schema(text=pa.string(), id=pa.string(), url=pa.string()), spec) == (True, ("id", "url"), "string")
    assert column_verdict(schema(text=pa.large_string(), id=pa.int32()), spec) == (True, ("id",), "long")
    assert column_verdict(schema(text=pa.string()), spec) == (True, (), None)
    for refused in (schema(text=pa.binary()), schema(body=pa.string()), schema(text=pa.string(), id=pa.float64()),
                    schema(text=pa.string(), id=pa.uint64()), schema(text=pa.string(), url=pa.bool_()),
                    schema(text=pa.list_(pa.string())), schema(text=pa.string(), Text=pa.string()),
                    schema(text=pa.string(), ID=pa.int64(), id=pa.string())):  # fmt: skip
        assert column_verdict(refused, spec)[0] is False, refused


def test_native_records_are_the_python_readers_records(spark, tmp_path):
    expected = _source(tmp_path / "src")
    spec = _spec(tmp_path / "src", id_field="id", url_field="url")
    files = list_source_files(spec)
    verdicts = footer_verdicts(spec, files)
    assert {v.path.rsplit("/", 1)[-1]: v.native for v in verdicts} == expected
    assert [v for v in verdicts if v.native] == [footer_verdict(f, spec) for f in files if expected[f.rsplit("/", 1)[-1]]]
    native = _rows(read_records(spark, spec, _recipe(True), files))
    python = _rows(read_records(spark, spec, _recipe(False), files))
    assert native == python
    # the native files' rows really came from Spark's reader, and cover every case of the rules
    own = _rows(native_records(spark, spec, verdicts, MAX_BYTES))
    assert len(own) == 40 + 9 + 10 and set(own) <= set(python)
    reasons = sorted(row[9].split(":")[0] for row in own if row[0] == "quarantine")
    assert reasons == ["bad_field", "bad_field", "record_too_large", "record_too_large", "record_too_large",
                       "record_too_large"]  # fmt: skip
    ids = {row[1] for row in own}
    assert {"doc-1", "pq/a.parquet#0", "10", "pq/b c#1.parquet#1", "pq/only text.parquet#0"} <= ids
    assert {row[7] for row in own} == {"a.parquet", "b c#1.parquet", "only text.parquet"}


def test_a_cleaning_run_on_native_parquet_conserves_and_matches_the_python_reader(spark, tmp_path):
    _source(tmp_path / "src")
    spec = _spec(tmp_path / "src", id_field="id", url_field="url")
    stats = {native: clean_source(spark, spec, _recipe(native), str(tmp_path / f"out-{native}"))
             for native in (True, False)}  # fmt: skip
    for native in (True, False):
        assert stats[native]["conserved"], native
    same = ("records_in", "kept", "rejected", "quarantined", "reader_counts", "quarantined_by_reason", "rejected_by_reason")
    assert {k: stats[True].get(k) for k in same} == {k: stats[False].get(k) for k in same}
    for table in ("documents", "rejected", "quarantine"):
        sort = lambda rows: sorted(rows, key=repr)  # noqa: E731
        native_rows = sort(pq.read_table(tmp_path / "out-True" / table).to_pylist())
        assert native_rows == sort(pq.read_table(tmp_path / "out-False" / table).to_pylist()), table


@pytest.mark.parametrize("name", ["a b.parquet", "ü#%.parquet"])
def test_spark_names_a_file_as_qualified_uri_says(spark, tmp_path, name):
    from marin_assets.data.formats.native_parquet import qualified_uri, same_file_key  # re-exported from fastpath

    path = tmp_path / name
    pq.write_table(pa.table({"text": ["x"]}), path)
    seen = spark.read.parquet(str(path)).select(same_file_key("_metadata.file_path")).first()[0]
    assert seen == qualified_uri(spark, str(path))


def test_a_file_spark_names_otherwise_fails_the_read_instead_of_losing_its_rows(spark, tmp_path, monkeypatch):
    from marin_assets.data.formats import native_parquet
    _source(tmp_path / "src")
    spec = _spec(tmp_path / "src", id_field="id", url_field="url")
    verdicts = footer_verdicts(spec, list_source_files(spec))
    monkeypatch.setattr(native_parquet, "qualified_uri", lambda spark, path: "file:///elsewhere/" + path)
    with pytest.raises(Exception, match="native Parquet read: no file name for file:/"):
        native_records(spark, spec, verdicts, MAX_BYTES).collect()


def test_damaged_pages_behind_a_good_footer_fail_the_read_naming_the_file(spark, tmp_path):
    from pyspark.sql import functions as F

    (tmp_path / "src").mkdir()
    path = tmp_path / "src" / "damaged.parquet"
    pq.write_table(pa.table({"text": [f"document number {i} " * 20 for i in range(2000)]}), path, row_group_size=500)
    data = bytearray(path.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = b"\xff" * 64
    path.write_bytes(bytes(data))
    spec = _spec(tmp_path / "src")
    verdicts = footer_verdicts(spec, [str(path)])
    assert verdicts[0].native  # the footer is fine: only reading the pages finds the damage
    with pytest.raises(Exception, match="FAILED_READ_FILE.*damaged.parquet"):
        native_records(spark, spec, verdicts, MAX_BYTES).agg(F.sum(F.octet_length("content"))).collect()


@pytest.mark.parametrize("int_type", [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32()])
def test_integer_id_columns_of_every_width_read_natively_give_the_python_ids(spark, tmp_path, int_type):
    from marin_assets.data.formats.readers import read_file

    (tmp_path / "src").mkdir()
    path = tmp_path / "src" / "ints.parquet"
    pq.write_table(pa.table({"text": ["a", "b", "c"], "id": pa.array([0, None, 127], int_type)}), path)
    spec = _spec(tmp_path / "src", id_field="id")
    verdicts = footer_verdicts(spec, [str(path)])
    assert verdicts[0].native and verdicts[0].id_type == "long"
    native = sorted((row["offset"], row["id"]) for row in native_records(spark, spec, verdicts, MAX_BYTES).collect())
    assert native == [(record.offset, record.id) for record in read_file(str(path), spec)]
    assert [i for _, i in native] == ["0", "pq/ints.parquet#1", "127"]
