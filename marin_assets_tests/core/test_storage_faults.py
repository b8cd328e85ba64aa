"""Disk faults name the path; set-aside names never collide; a failed write leaves no staging folder."""

import errno
import os

import pytest

from marin_assets.core.storage import STAGING_INFIX, Storage, StorageError, superseded_name


def test_a_full_disk_names_the_output_being_written(tmp_path):
    storage = Storage(str(tmp_path))
    with pytest.raises(StorageError, match=rf"writing {tmp_path}/cleaned/web failed: No space left on device"):
        with storage.atomic_dir("cleaned", "web") as staged:
            os.symlink("/dev/full", staged.join("part-0.parquet"))  # the kernel answers ENOSPC
            with open(staged.join("part-0.parquet"), "w") as f:
                f.write("rows")
                f.flush()
    assert not [p for p in (tmp_path / "cleaned").iterdir() if STAGING_INFIX in p.name]


def test_an_unwritable_root_names_the_path():
    # /sys refuses new entries even for root (EPERM): no output folder can be created there.
    storage = Storage("/sys/marin-storage-test")
    with pytest.raises(StorageError, match=r"writing /sys/marin-storage-test/tokenizer/bpe failed: "):
        with storage.atomic_dir("tokenizer", "bpe"):
            pass
    with pytest.raises(StorageError, match=r"writing /sys/marin-storage-test/a/b.json failed: "):
        storage.write_json_atomic({"a": 1}, "a", "b.json")


@pytest.mark.parametrize("code", [errno.EROFS, errno.EACCES, errno.ENOSPC])
def test_each_disk_fault_raised_inside_a_write_is_wrapped_with_the_path(tmp_path, code):
    storage = Storage(str(tmp_path))
    with pytest.raises(StorageError, match=rf"{tmp_path}/out failed: {os.strerror(code)} \(at /x/y\)") as info:
        with storage.atomic_dir("out"):
            raise OSError(code, os.strerror(code), "/x/y")
    assert isinstance(info.value.__cause__, OSError)  # the original stays attached


def test_other_os_errors_pass_through_unchanged(tmp_path):
    with pytest.raises(FileNotFoundError):
        with Storage(str(tmp_path)).atomic_dir("out"):
            raise FileNotFoundError(errno.ENOENT, "gone", "/nowhere")


def test_set_aside_names_are_unique_within_one_second(tmp_path):
    names = {superseded_name(str(tmp_path / "run")) for _ in range(200)}
    assert len(names) == 200
