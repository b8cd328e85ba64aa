import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from marin_assets.core.hashing import sha256_bytes
from marin_assets.core.schemas import TOKENIZED_SCHEMA, TOKENIZER_HASH_KEY
from marin_assets.core.storage import Storage
from marin_assets.tokenize.encoding import EncodeSettings, encode_and_write_shard, encode_documents
from marin_assets.tokenize.tokenize_recipe import TokenizerSpec
from marin_assets.tokenize.shards import (
    SHARD_PATTERN, ShardError, histogram_rows, length_histogram, read_shards, read_tokenizer_hash, shard_table, token_lists, write_shard,
)
from marin_assets.tokenize.tokenize_job import (
    cleaned_document_files, iter_documents, merge_histograms, read_rows, tokenize_source,
)
from marin_assets.tokenize.task_plan import shard_plan, shard_weights, task_count, task_groups
from marin_assets.tokenize.tokenizer_files import TOKENIZER_FILE, build_tokenizer
from marin_assets_tests.tokenize.conftest import synthetic_texts, write_cleaned_source


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("tok"))
    summary = build_tokenizer(TokenizerSpec(name="t", vocab_size=500), synthetic_texts("dirty_web", 200), folder)
    return folder, summary


def _settings(tokenizer_dir, bos=True, eos=True, batch=7):
    folder, summary = tokenizer_dir
    return EncodeSettings(folder, summary.hash, bos, eos, batch)


@pytest.mark.parametrize("bos,eos", [(True, True), (True, False), (False, True), (False, False)])
def test_encoding_matches_the_tokenizer_with_bos_eos(tokenizer_dir, bos, eos):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(os.path.join(tokenizer_dir[0], TOKENIZER_FILE))
    texts = synthetic_texts("python_docs", 20) + ["", None, "ünïcödé ✓"]
    offsets, values = encode_documents(texts, _settings(tokenizer_dir, bos, eos))
    assert offsets.dtype == np.int32 and values.dtype == np.int32 and len(offsets) == len(texts) + 1
    for i, text in enumerate(texts):
        expected = ([1] if bos else []) + tok.encode(text or "", add_special_tokens=False).ids + ([2] if eos else [])
        assert values[offsets[i]:offsets[i + 1]].tolist() == expected


def test_shards_record_their_tokenizer_and_are_reproducible(tmp_path, tokenizer_dir):
    offsets, values = encode_documents(["a b", "c"], _settings(tokenizer_dir))
    table = shard_table(["x", "y"], ["s", "s"], token_lists(offsets, values), "abc123")
    write_shard(table, str(tmp_path / "1.parquet"))
    write_shard(table, str(tmp_path / "2.parquet"))
    assert sha256_bytes((tmp_path / "1.parquet").read_bytes()) == sha256_bytes((tmp_path / "2.parquet").read_bytes())
    assert read_tokenizer_hash(str(tmp_path / "1.parquet")) == "abc123"
    assert pq.read_schema(tmp_path / "1.parquet").field("tokens").type == TOKENIZED_SCHEMA.field("tokens").type
    assert read_shards([str(tmp_path / "1.parquet")]).column("tokens").to_pylist()[1] == values[offsets[1]:].tolist()
    with pytest.raises(ShardError, match="tokenizer hash"):
        write_shard(table.replace_schema_metadata(None), str(tmp_path / "3.parquet"))


@pytest.mark.slow  # a Spark job
def test_spark_tokenization_writes_the_shards_of_an_in_process_encode(spark, tmp_path, tokenizer_dir):
    storage = Storage(str(tmp_path / "root"))
    texts = synthetic_texts("debian_licenses", 230) + [None, ""]
    write_cleaned_source(storage, "debian_licenses", texts, files=3)
    files = cleaned_document_files(storage, "debian_licenses")
    settings = _settings(tokenizer_dir)
    out, expected = tmp_path / "spark", tmp_path / "in_process"
    expected.mkdir()
    stats = tokenize_source(spark, files, "debian_licenses", str(out), settings, documents_per_shard=50)
    lengths = []
    for i, batch in enumerate(iter_documents(files, 50)):  # the reference: encode shard by shard, here
        lengths.append(encode_and_write_shard(str(expected / SHARD_PATTERN.format(i)), batch["id"], "debian_licenses",
                                              batch["text"], settings))  # fmt: skip
    assert {p: (out / p).read_bytes() for p in sorted(os.listdir(out))} == {
        p: (expected / p).read_bytes() for p in sorted(os.listdir(expected))
    }
    lengths = np.concatenate(lengths)
    assert stats["documents"] == len(texts)  # counts conserve, empty documents included
    assert stats["empty_documents"] == 2
    assert stats["shards"] == [f"shard-{i:05d}.parquet" for i in range(5)]
    assert stats["tokens_per_document_histogram"] == length_histogram(lengths)
    assert stats["tokens"] == int(lengths.sum()) and stats["max_document_tokens"] == int(lengths.max())
    assert stats["mean_document_tokens"] == round(float(lengths.mean()), 2)
    table = read_shards([str(out / s) for s in stats["shards"]])
    assert table.column("id").to_pylist() == [f"debian_licenses-{i:05d}" for i in range(len(texts))]
    assert pq.read_schema(out / "shard-00004.parquet").metadata[TOKENIZER_HASH_KEY].decode() == settings.tokenizer_hash


def test_shard_plan_cuts_every_n_documents_across_files():
    assert shard_plan([3, 0, 4, 2], 4) == [[(0, 0, 3), (2, 0, 1)], [(2, 1, 4), (3, 0, 1)], [(3, 1, 2)]]
    assert shard_plan([], 4) == [] and shard_plan([0], 4) == []
    assert shard_plan([8], 4) == [[(0, 0, 4)], [(0, 4, 8)]]


def test_read_rows_returns_exactly_the_asked_rows_across_row_groups_and_batches(tmp_path, monkeypatch):
    import marin_assets.tokenize.tokenize_job as job

    monkeypatch.setattr(job, "READ_BATCH_ROWS", 4)  # batches smaller than row groups, boundaries inside both
    table = pa.table({"id": [f"d{i}" for i in range(23)], "text": [None if i % 5 == 0 else f"t{i}" for i in range(23)]})
    pq.write_table(table, tmp_path / "f.parquet", row_group_size=10)
    for start, end in [(0, 23), (0, 1), (3, 9), (9, 11), (10, 20), (12, 13), (19, 23), (22, 23)]:
        assert read_rows(str(tmp_path / "f.parquet"), start, end).equals(table.slice(start, end - start)), (start, end)


def test_shards_are_grouped_into_balanced_tasks_heaviest_first_by_raw_length(tmp_path):
    rows = [{"id": f"d{i}", "raw_length": length} for i, length in enumerate([5, 5, 100, None, 1, 1, 70])]
    pq.write_table(pa.Table.from_pylist(rows[:4]), tmp_path / "a.parquet")
    pq.write_table(pa.Table.from_pylist(rows[4:]), tmp_path / "b.parquet")
    pq.write_table(pa.table({"id": ["x", "y"]}), tmp_path / "c.parquet")  # no raw_length: one per row
    files = [str(tmp_path / f) for f in ("a.parquet", "b.parquet", "c.parquet")]
    weights = shard_weights(files, shard_plan([4, 3, 2], 2))
    assert weights == [10, 101, 2, 71, 1]  # a null raw_length counts 1
    assert task_groups(weights, 2) == [[1], [3, 0, 2, 4]]
    assert task_groups(weights, 5) == [[1], [3], [0], [2], [4]] and task_groups(weights, 9) == task_groups(weights, 5)
    assert task_groups([], 3) == []
    groups = task_groups(list(range(100)), 8)  # many small shards: as good as even
    loads = [sum(g) for g in groups]
    assert sorted(i for g in groups for i in g) == list(range(100)) and max(loads) <= 1.01 * sum(range(100)) / 8
    assert loads == sorted(loads, reverse=True)


def test_task_count_is_a_few_per_core_and_bounded_by_shards_and_task_size():
    assert task_count([10] * 100, cores=2) == 8 and task_count([10] * 3, cores=2) == 3
    assert task_count([200 << 20] * 100, cores=2) == 79  # 20,000 MiB / 256 MiB per task
    assert task_count([], cores=2) == 0


def test_merged_histograms_equal_the_histogram_of_all_documents():
    parts = [np.array([0, 3, 17]), np.array([40, 1000, 16]), np.array([], dtype=np.int64)]
    merged = merge_histograms([length_histogram(p) for p in parts])
    assert merged == length_histogram(np.concatenate(parts)) and list(merged) == list(length_histogram(np.concatenate(parts)))


def test_uncommitted_input_is_refused(tmp_path):
    with pytest.raises(Exception, match="never committed"):
        cleaned_document_files(Storage(str(tmp_path)), "python_docs")


def test_length_histogram_counts_every_document():
    hist = length_histogram(np.array([0, 3, 16, 17, 32, 33, 1000]))
    assert hist["<=16"] == 3 and hist["17-32"] == 2 and hist["33-64"] == 1 and hist["513-1024"] == 1
    assert sum(hist.values()) == 7


def test_a_rewritten_tokenizer_folder_is_not_served_from_the_cache(tmp_path):
    folder, text = str(tmp_path / "tok"), " ".join(synthetic_texts("dirty_web", 3))
    first = build_tokenizer(TokenizerSpec(name="t", vocab_size=400), synthetic_texts("dirty_web", 50), folder)
    _, first_ids = encode_documents([text], EncodeSettings(folder, first.hash, True, True, 10))
    second = build_tokenizer(TokenizerSpec(name="t", vocab_size=270), synthetic_texts("dirty_web", 50), folder)
    _, second_ids = encode_documents([text], EncodeSettings(folder, second.hash, True, True, 10))
    assert len(second_ids) > len(first_ids)  # the smaller vocabulary was loaded, not the cached one
    with pytest.raises(ValueError, match="not the expected"):
        encode_documents([text], EncodeSettings(folder, "0" * 64, True, True, 10))


def test_histogram_rows_sort_buckets_as_numbers():
    """The UI's table of tokens per document: 129-256 after 17-32, not before it as strings sort."""
    hist = length_histogram(np.array([3, 20, 200, 200, 1000]))
    rows = histogram_rows(dict(sorted(hist.items())))  # string order: "1025-..." < "129-256" < "17-32" < "<=16"
    assert [r["tokens_from"] for r in rows] == sorted(r["tokens_from"] for r in rows) and rows[0]["tokens_from"] == 0
    assert {(r["tokens_from"], r["tokens_to"]): r["documents"] for r in rows}[(129, 256)] == 2
    assert sum(r["documents"] for r in rows) == 5
