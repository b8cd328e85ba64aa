"""core.storage.Storage on gs:// against a real GCS API (the emulator), as production uses it."""

import pytest

from marin_assets.core.storage import COMMIT_MARKER, Storage, StorageError
from marin_assets_tests.gcs_emulator import gcs_emulator  # noqa: F401  (fixture)


def _write(staged, name: str, data: bytes) -> None:
    with staged.storage.fs.open(staged.join(name), "wb") as f:
        f.write(data)


def test_atomic_dir_commits_lists_and_hashes_on_gcs(gcs_emulator):
    storage = Storage(gcs_emulator.root())
    assert storage.uri("cleaned", "web").startswith(f"gs://{gcs_emulator.bucket}/")
    assert not storage.is_committed("cleaned", "web")

    with storage.atomic_dir("cleaned", "web") as staged:
        _write(staged, "documents/part-0.parquet", b"rows-0")
        _write(staged, "documents/part-1.parquet", b"rows-1")
        staged.write_json({"documents": 2}, "stats.json")
        staged_hash = staged.content_hash()

    assert storage.is_committed("cleaned", "web")
    assert storage.list_files("cleaned", "web") == [
        "documents/part-0.parquet",
        "documents/part-1.parquet",
        "stats.json",
    ]
    # The hash computed while staging is the hash of the committed output (the data version).
    assert storage.content_hash("cleaned", "web") == staged_hash
    assert storage.read_json("cleaned", "web", "stats.json") == {"documents": 2}
    # The content lives under its own version prefix, named by the pointer (core/commit.py).
    version = storage.require_committed("cleaned", "web")
    assert version.startswith(storage.uri("cleaned", "web.v-"))
    # Only the pointer and that one version sit next to each other: no staging folder is left.
    siblings = sorted(s.rsplit("/", 1)[-1] for s in storage.fs.ls(storage.uri("cleaned")))
    assert siblings == ["web", version.rsplit("/", 1)[-1]]


def test_content_hash_changes_with_content_on_gcs(gcs_emulator):
    storage = Storage(gcs_emulator.root())
    for name, payload in (("a", b"one"), ("b", b"one"), ("c", b"two")):
        with storage.atomic_dir("out", name) as staged:
            _write(staged, "x.bin", payload)
    assert storage.content_hash("out", "a") == storage.content_hash("out", "b")
    assert storage.content_hash("out", "a") != storage.content_hash("out", "c")


def test_crash_inside_atomic_dir_leaves_nothing_committed_on_gcs(gcs_emulator):
    storage = Storage(gcs_emulator.root())
    with pytest.raises(RuntimeError, match="boom"):
        with storage.atomic_dir("tokenized", "web") as staged:
            _write(staged, "shard-00000.parquet", b"half")
            raise RuntimeError("boom")
    assert not storage.is_committed("tokenized", "web")
    assert not storage.fs.exists(storage.uri("tokenized", "web"))
    assert storage.fs.find(storage.uri("tokenized")) == []
    with pytest.raises(StorageError, match="never committed"):
        storage.require_committed("tokenized", "web")


def test_crash_during_rewrite_keeps_previous_commit_on_gcs(gcs_emulator):
    storage = Storage(gcs_emulator.root())
    with storage.atomic_dir("mixtures", "m1") as staged:
        _write(staged, "train.bin", b"v1")
    first = storage.content_hash("mixtures", "m1")
    with pytest.raises(KeyboardInterrupt):
        with storage.atomic_dir("mixtures", "m1") as staged:
            _write(staged, "train.bin", b"v2-partial")
            raise KeyboardInterrupt
    assert storage.is_committed("mixtures", "m1")
    assert storage.content_hash("mixtures", "m1") == first
    assert storage.fs.exists(storage.uri("mixtures", "m1", COMMIT_MARKER))


def test_write_json_atomic_on_gcs(gcs_emulator):
    storage = Storage(gcs_emulator.root())
    uri = storage.write_json_atomic({"b": 2, "a": 1}, "governance", "audit.json")
    assert uri.startswith("gs://")
    assert storage.read_json("governance", "audit.json") == {"a": 1, "b": 2}


def test_source_checksum_is_the_same_on_gcs_and_locally(gcs_emulator, tmp_path):
    """The one folder hash (core.storage.folder_hash) gives a gs:// source the checksum of its local copy."""
    from marin_assets.data.sources.source_inventory import source_inventory
    from marin_assets.data.sources.source_registry import SourceSpec

    storage = Storage(gcs_emulator.root("src"))
    (tmp_path / "sub").mkdir()
    for rel, data in (("a.jsonl", b'{"text": "a"}\n'), ("sub/b.jsonl", b'{"text": "b"}\n')):
        (tmp_path / rel).write_bytes(data)
        storage.fs.pipe_file(storage.uri(rel), data)
    local = source_inventory(SourceSpec(name="s", uri=str(tmp_path), format="jsonl", license="CC0-1.0"))
    remote = source_inventory(SourceSpec(name="s", uri=storage.uri(), format="jsonl", license="CC0-1.0"))
    assert [f["path"] for f in remote["files"]] == ["a.jsonl", "sub/b.jsonl"]
    assert remote["files"] == local["files"] and remote["content_hash"] == local["content_hash"]
