import os

import pytest

from marin_assets.core.storage import COMMIT_MARKER, Storage, StorageError


def test_atomic_dir_commits_and_hashes(tmp_path):
    storage = Storage(str(tmp_path / "root"))
    with storage.atomic_dir("stage", "a") as staged:
        with open(staged.join("x.txt"), "w") as f:
            f.write("hello")
        assert not storage.exists("stage", "a")  # invisible until commit
    assert storage.is_committed("stage", "a")
    assert storage.list_files("stage", "a") == ["x.txt"]
    first = storage.content_hash("stage", "a")
    # Same content in another root gives the same hash (paths are relative).
    other = Storage(str(tmp_path / "other"))
    with other.atomic_dir("elsewhere") as staged:
        with open(staged.join("x.txt"), "w") as f:
            f.write("hello")
    assert other.content_hash("elsewhere") == first


def test_crash_inside_atomic_dir_keeps_previous_output(tmp_path):
    storage = Storage(str(tmp_path))
    with storage.atomic_dir("out") as staged:
        open(staged.join("v1"), "w").write("1")
    with pytest.raises(RuntimeError, match="boom"):
        with storage.atomic_dir("out") as staged:
            open(staged.join("v2"), "w").write("half")
            raise RuntimeError("boom")
    assert storage.list_files("out") == ["v1"]
    assert storage.is_committed("out")
    leftovers = [p for p in os.listdir(tmp_path) if p != "out"]
    assert leftovers == []


def test_crash_before_first_commit_leaves_nothing_that_looks_complete(tmp_path):
    storage = Storage(str(tmp_path))
    with pytest.raises(KeyboardInterrupt):
        with storage.atomic_dir("new") as staged:
            open(staged.join("part"), "w").write("x")
            raise KeyboardInterrupt
    assert not storage.is_committed("new")
    with pytest.raises(StorageError, match="never committed"):
        storage.require_committed("new")


def test_recommit_replaces_content(tmp_path):
    storage = Storage(str(tmp_path))
    for content in ("a", "b"):
        with storage.atomic_dir("out") as staged:
            open(staged.join(content), "w").write(content)
    assert storage.list_files("out") == ["b"]
    assert os.path.exists(tmp_path / "out" / COMMIT_MARKER)


def test_paths_cannot_escape_root(tmp_path):
    with pytest.raises(StorageError, match="escapes"):
        Storage(str(tmp_path)).uri("..", "etc")
