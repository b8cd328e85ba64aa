"""Fixtures: a small cleaned corpus written like the data stage writes it, and stage materializations."""

from __future__ import annotations

import json

import dagster as dg
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from marin_assets.core import layout
from marin_assets.core.schemas import DOCUMENT_SCHEMA
from marin_assets.core.storage import Storage
from marin_assets.resources.storage_resource import StorageResource
from marin_assets_tests.conftest import TEST_SPARK

SOURCES = ("python_docs", "debian_handbook", "debian_licenses", "dirty_web")
WORDS = ("the data model token source python license free software web page function return value "
         "list dict string error file copy right permission notice warranty import class object "
         "def self print loop index stream parquet shard mixture weight seed split").split()


def synthetic_texts(source: str, documents: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng([seed, len(source), sum(map(ord, source))])
    words = [f"{w}{source[:3]}" if i % 7 == 0 else w for i, w in enumerate(WORDS)]
    texts = []
    for _ in range(documents):
        n = int(rng.integers(20, 400))
        texts.append(" ".join(words[j] for j in rng.integers(0, len(words), n)) + ".")
    return texts


def write_cleaned_source(storage: Storage, source: str, texts: list[str | None], files: int = 2) -> None:
    """cleaned/<source>/documents/*.parquet in DOCUMENT_SCHEMA, committed like the data stage does."""
    with storage.atomic_dir(layout.CLEANED, source) as staged:
        storage.fs.makedirs(staged.join("documents"), exist_ok=True)
        for part, chunk in enumerate(np.array_split(np.arange(len(texts)), files)):
            rows = [{"id": f"{source}-{i:05d}", "source": source, "url": None, "text": texts[i],
                     "metadata": json.dumps({}), "raw_length": len(texts[i] or "")} for i in chunk]
            pq.write_table(pa.Table.from_pylist(rows, schema=DOCUMENT_SCHEMA),
                           staged.join("documents", f"part-{part:05d}.parquet"))


def make_corpus(storage: Storage, documents: int = 400) -> None:
    for source in SOURCES:
        write_cleaned_source(storage, source, synthetic_texts(source, documents))


def materialize(assets, root: str, partition_key: str | None = None, raise_on_error: bool = True):
    return dg.materialize(assets, resources={"storage": StorageResource(root_uri=root), "spark": TEST_SPARK},
                          partition_key=partition_key, raise_on_error=raise_on_error)


def materialize_mixture(root: str, name: str = "sample", raise_on_error: bool = True):
    from marin_assets_tests.stage_definitions import mixture
    from marin_assets_tests.stage_definitions import tokenizer_compatible

    return materialize([mixture, tokenizer_compatible], root, partition_key=name, raise_on_error=raise_on_error)


def build_stage(root: str) -> dict[str, dg.ExecuteInProcessResult]:
    """tokenizer -> every tokenized_source -> the sample mixture (+ its check) under root."""
    from marin_assets_tests.stage_definitions import tokenized_source, tokenizer

    results = {"tokenizer": materialize([tokenizer], root)}
    for source in SOURCES:
        results[source] = materialize([tokenized_source], root, partition_key=source)
    results["mixture"] = materialize_mixture(root)
    return results


@pytest.fixture(scope="session")
def built_stage(tmp_path_factory) -> tuple[Storage, dict]:
    root = str(tmp_path_factory.mktemp("tokenize-stage"))
    make_corpus(Storage(root))
    return Storage(root), build_stage(root)
