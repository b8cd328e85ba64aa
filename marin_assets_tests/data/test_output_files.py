"""How many Parquet files a cleaned table is written as: rows or text bytes, whichever needs more."""

from marin_assets.data.cleaning_recipe import SparkSettings


def test_file_count_follows_whichever_limit_needs_more_files():
    settings = SparkSettings(rows_per_file=100, bytes_per_file=1_000)
    assert settings.files_for(0, 0) == 1  # an empty table is still one file
    assert settings.files_for(100, 1_000) == 1
    assert settings.files_for(101, 10) == 2  # rows decide
    assert settings.files_for(10, 1_001) == 2  # bytes decide: long texts do not funnel through one writer
    assert settings.files_for(250, 5_500) == 6


def test_the_shipped_byte_cap_is_128_mib():
    assert SparkSettings().bytes_per_file == 128 * 2**20
