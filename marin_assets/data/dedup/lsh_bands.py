"""LSH band keys of Arrow batches: the mapInArrow body of the Spark near-dedup path.

Kept in a module of its own that imports only numpy, pyarrow and the MinHash pieces: every Spark
Python worker imports the module of the function it runs, and cleaning_rows pulls in the whole
cleaning stack (extractors, language identification, filters), seconds per fresh worker.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from marin_assets.data.dedup.dedup_keys import MinHasher, band_key_matrix

BAND_COLUMNS = "id string, bands array<long>"


def bands_array(signatures: np.ndarray, has_words: np.ndarray, bands: int, rows: int):
    """Arrow list<int64> of each document's band keys, null for a document without words; built from
    the numpy keys directly (no Python list per document)."""
    import pyarrow as pa

    keys = band_key_matrix(signatures[has_words], bands, rows)
    offsets = np.concatenate(([0], np.cumsum(np.where(has_words, bands, 0)))).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(keys.ravel()), mask=pa.array(~has_words))


def lsh_band_batches(dedup):
    """mapInArrow body for dedup alone (`dedup`: the recipe's DedupSettings): batches of (id, text) ->
    batches of (id, bands), BAND_COLUMNS."""
    import pyarrow as pa

    hasher = MinHasher(dedup.num_perm, dedup.shingle_size, dedup.seed, dedup.hash_family)
    schema = pa.schema([("id", pa.string()), ("bands", pa.list_(pa.int64()))])
    bands, rows = dedup.bands, dedup.rows

    def run(batches: Iterable) -> Iterator:
        for batch in batches:
            signatures, has_words = hasher.signatures(batch.column("text"))  # from the Arrow buffer
            ids = batch.column("id").cast(pa.string())
            yield pa.RecordBatch.from_arrays([ids, bands_array(signatures, has_words, bands, rows)], schema=schema)

    return run
