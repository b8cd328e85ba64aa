"""Each registered eval set's text as the run's domain_eval reads it: tokenized with the run's tokenizer
into <run_dir>/eval_sets/<name>/shard-00000.parquet (a `tokens` column, like the validation shards),
with the raw text's UTF-8 byte count for its bits per byte.

Written by the launcher into the run folder just before the trainer starts (after a superseded run
folder is set aside, so the trainer always finds it), listed in <run_dir>/eval_sets/manifest.json.
The text is the eval_set asset's texts.parquet, read through the storage layer; an eval set that is
not materialized (or cannot be tokenized) is listed under `missing` with the reason, so the run says
so instead of silently evaluating less. Documents are encoded as the tokenize stage encodes them
(<s> ids </s>); the same text and tokenizer give the same bytes on every run. The registry's names
come from the caller (the launcher), so this module, part of the runs' code version, imports nothing
of the data stage: editing decontamination does not retrain a run.
"""

from __future__ import annotations

import json
import posixpath

import pyarrow as pa
import pyarrow.parquet as pq

from marin_assets.core import layout
from marin_assets.core.storage import Storage
from marin_assets.train.bits_per_byte import load_tokenizer

TEXTS = layout.EVAL_TEXTS

FOLDER, MANIFEST = "eval_sets", "manifest.json"


def manifest_uri(run_dir: str) -> str:
    return posixpath.join(run_dir, FOLDER, MANIFEST)


def tokenize_texts(texts: list[str], tokenizer, bos_id: int, eos_id: int) -> tuple[list[list[int]], int]:
    """(<s> ids </s> per text, total UTF-8 bytes of the texts): bytes of the text, not of decoded ids."""
    encoded = tokenizer.encode_batch(texts, add_special_tokens=False)
    return [[bos_id, *e.ids, eos_id] for e in encoded], sum(len(t.encode("utf-8")) for t in texts)


def _missing_reason(storage: Storage, name: str) -> str | None:
    if not storage.is_committed(layout.EVAL, name):
        return f"eval_set[{name}] is not materialized: materialize it to evaluate this run on it"
    if not storage.exists(layout.EVAL, name, TEXTS):
        return f"eval_set[{name}] was materialized before it kept its raw text: re-materialize it"
    return None


def prepare(storage: Storage, mixture, run_dir: str, names: list[str]) -> dict:
    """Write each eval set's (of `names`, the registered ones) token shard and the manifest; returns it.

    {"eval_sets": {name: {glob, documents, tokens, bytes}}, "missing": {name: reason}}. `mixture`:
    the run's MixtureInfo (tokenizer_uri, bos_id, eos_id, sources: an eval set may not share a
    source's name, their results would collide)."""
    fs = storage.fs
    manifest: dict = {"eval_sets": {}, "missing": {}}
    tokenizer = None
    for name in sorted(names):
        reason = _missing_reason(storage, name)
        if reason is None and name in getattr(mixture, "sources", {}):
            reason = f"eval set {name} has the name of a source of the run's mixture; rename one of them"
        if reason is not None:
            manifest["missing"][name] = reason
            continue
        try:
            with fs.open(storage.committed_uri(layout.EVAL, name, TEXTS), "rb") as f:
                texts = pq.read_table(f).column("text").to_pylist()
            tokenizer = tokenizer or load_tokenizer(mixture.tokenizer_uri)
            tokens, n_bytes = tokenize_texts(texts, tokenizer, mixture.bos_id, mixture.eos_id)
            folder = posixpath.join(run_dir, FOLDER, name)
            fs.makedirs(folder, exist_ok=True)
            table = pa.table({"tokens": pa.array(tokens, pa.list_(pa.int32()))})
            with fs.open(posixpath.join(folder, "shard-00000.parquet"), "wb") as f:
                pq.write_table(table, f, compression="zstd")
        except Exception as exc:  # noqa: BLE001 - one unreadable eval set must not stop the run; it is reported
            manifest["missing"][name] = f"{type(exc).__name__}: {exc}"
            continue
        manifest["eval_sets"][name] = {"glob": posixpath.join(folder, "*.parquet"), "documents": len(texts),
                                       "tokens": sum(map(len, tokens)), "bytes": n_bytes}
    fs.makedirs(posixpath.join(run_dir, FOLDER), exist_ok=True)
    with fs.open(manifest_uri(run_dir), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    return manifest


def read_manifest(run_dir: str) -> dict:
    """The manifest the launcher wrote ({} entries when it wrote none, e.g. a run folder from older code)."""
    import fsspec

    fs, path = fsspec.core.url_to_fs(manifest_uri(run_dir))
    if not fs.exists(path):
        return {"eval_sets": {}, "missing": {}}
    with fs.open(path, "r") as f:
        return json.load(f)
