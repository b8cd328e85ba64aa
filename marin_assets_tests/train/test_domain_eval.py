"""The validation split is cut per source for the per-domain eval (the eval itself: test_scaling_run)."""

import pyarrow as pa
import pyarrow.parquet as pq

from marin_assets.train.domain_eval import split_by_source


def test_rows_are_split_by_source_and_a_split_without_sources_gives_none(tmp_path):
    (tmp_path / "val").mkdir()
    pq.write_table(pa.table({"id": ["1", "2", "3"], "source": ["wiki", "code", "wiki"],
                             "tokens": [[1, 2], [3], [4, 5, 6]]}), tmp_path / "val" / "shard-00000.parquet")
    globs = split_by_source(str(tmp_path / "val" / "*.parquet"), str(tmp_path / "out"))
    assert sorted(globs) == ["code", "wiki"]
    wiki = pq.read_table(tmp_path / "out" / "wiki" / "shard-00000.parquet")
    assert wiki.column_names == ["tokens"] and wiki.column("tokens").to_pylist() == [[1, 2], [4, 5, 6]]
    pq.write_table(pa.table({"tokens": [[1]]}), tmp_path / "val" / "shard-00000.parquet")
    assert split_by_source(str(tmp_path / "val" / "*.parquet"), str(tmp_path / "out2")) == {}
