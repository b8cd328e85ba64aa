"""The data baseline's statistics read from committed outputs: a cleaned source's folder, a mixture's manifest."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from marin_assets.core import layout
from marin_assets.core.storage import Storage
from marin_assets.data.cleaned_output import STATS_NAME
from marin_assets.governance.data_baseline import mixture_statistics, source_statistics
from marin_assets.tokenize.mixture_info import MIXTURE_FILE


def cleaned_source_statistics(storage: Storage, source: str) -> dict[str, float]:
    """Statistics of cleaned/<source>: stats.json counts, kept texts' lengths and languages."""
    storage.require_committed(layout.CLEANED, source)
    stats = storage.read_json(layout.CLEANED, source, STATS_NAME)
    lengths: list[int] = []
    languages: list[str] = []
    for rel in storage.list_files(layout.CLEANED, source):
        if not (rel.startswith("documents/") and rel.endswith(".parquet")):
            continue
        with storage.fs.open(storage.committed_uri(layout.CLEANED, source, rel), "rb") as f:
            table = pq.read_table(f, columns=["text", "metadata"])
        lengths += [len(text or "") for text in table.column("text").to_pylist()]
        languages += [json.loads(m or "{}").get("language", "unknown") for m in table.column("metadata").to_pylist()]
    return source_statistics(stats, lengths, languages)


def mixture_manifest_statistics(storage: Storage, mixture: str) -> dict[str, float]:
    """Statistics of mixtures/<mixture>: train tokens per source and per document."""
    storage.require_committed(layout.MIXTURES, mixture)
    return mixture_statistics(storage.read_json(layout.MIXTURES, mixture, MIXTURE_FILE)["sources"])
