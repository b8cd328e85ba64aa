"""How many Parquet files a cleaned table is written as: rows or text bytes, whichever needs more."""

from marin_assets.data.clean.cleaning_recipe import SparkSettings


def test_file_count_follows_whichever_limit_needs_more_files():
    settings = SparkSettings(rows_per_file=100, bytes_per_file=1_000)
    assert settings.files_for(0, 0) == 1  # an empty table is still one file
    assert settings.files_for(100, 1_000) == 1
    assert settings.files_for(101, 10) == 2  # rows decide
    assert settings.files_for(10, 1_001) == 2  # bytes decide: long texts do not funnel through one writer
    assert settings.files_for(250, 5_500) == 6


def test_the_shipped_byte_cap_is_128_mib():
    assert SparkSettings().bytes_per_file == 128 * 2**20


def test_processing_partitions_grow_with_the_source_past_the_least_count():
    settings = SparkSettings(partitions=8, partition_bytes=1_000)
    assert settings.partitions_for(0) == 8
    assert settings.partitions_for(8_000) == 8
    assert settings.partitions_for(8_001) == 9  # no partition holds more than partition_bytes
    assert settings.partitions_for(64_000) == 64


def test_record_bytes_count_compressed_files_at_their_expansion(tmp_path):
    from marin_assets.data.sources.source_files import COMPRESSED_EXPANSION, estimated_record_bytes

    (tmp_path / "a.jsonl").write_bytes(b"x" * 100)
    (tmp_path / "b.jsonl.gz").write_bytes(b"y" * 10)
    (tmp_path / "c.warc.gz").write_bytes(b"z" * 7)
    files = [str(tmp_path / n) for n in ("a.jsonl", "b.jsonl.gz", "c.warc.gz")]
    assert estimated_record_bytes(files) == 100 + 17 * COMPRESSED_EXPANSION
    assert estimated_record_bytes([f"file://{files[0]}"]) == 100
