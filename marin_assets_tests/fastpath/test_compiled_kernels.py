"""What lets a fresh Spark Python worker hash with the SHA-1 kernel at once: the compiled kernel kept in a
cache folder (compiled_kernels, which the MinHash kernel uses too)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from marin_assets.fastpath.hashing import compiled_kernels
HASH_IN_A_NEW_PROCESS = """
import sys
import numpy as np
from datasketch.hashfunc import sha1_hash32
from marin_assets.fastpath.hashing import sha1_kernel
if sys.argv[1] == "must-load":
    def compile_refused(n_blocks):
        raise AssertionError("the kernel was compiled again")
    sha1_kernel._traced_kernel = compile_refused
buffer = b"near duplicate shingles " * 8
starts = np.arange(0, 40, 3)
ends = starts + 20  # one block each: only that kernel
got = sha1_kernel.sha1_hash32_slices(buffer, starts, ends).tolist()
assert got == [sha1_hash32(buffer[s:e]) for s, e in zip(starts.tolist(), ends.tolist())]
"""


def _hash_in_a_new_process(mode: str, cache_dir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, compiled_kernels.CACHE_ENV: str(cache_dir)}
    return subprocess.run([sys.executable, "-c", HASH_IN_A_NEW_PROCESS, mode], env=env, capture_output=True,
                          text=True, timeout=600)  # fmt: skip


def test_a_compiled_kernel_is_saved_once_and_later_processes_load_it(tmp_path):
    first = _hash_in_a_new_process("may-compile", tmp_path)
    assert first.returncode == 0, first.stderr
    saved = list(tmp_path.iterdir())
    assert len(saved) == 1 and saved[0].name.startswith("sha1_kernel-") and saved[0].suffix == ".pickle"
    loaded = _hash_in_a_new_process("must-load", tmp_path)
    assert loaded.returncode == 0, loaded.stderr

    saved[0].write_bytes(b"damaged")  # a damaged file: the process compiles again and hashes right
    refused = _hash_in_a_new_process("must-load", tmp_path)
    assert refused.returncode != 0 and "the kernel was compiled again" in refused.stderr
    recompiled = _hash_in_a_new_process("may-compile", tmp_path)
    assert recompiled.returncode == 0, recompiled.stderr
    assert saved[0].stat().st_size > len(b"damaged") and [p.name for p in tmp_path.iterdir()] == [saved[0].name]


def test_the_cache_folder_is_the_local_jax_cache_setting_else_the_users_cache(monkeypatch, tmp_path):
    monkeypatch.setenv(compiled_kernels.CACHE_ENV, str(tmp_path))
    assert compiled_kernels.cache_dir() == tmp_path
    default = Path.home() / ".cache" / "marin_assets" / "jax"
    monkeypatch.setenv(compiled_kernels.CACHE_ENV, "gs://bucket/prefix/.cache/jax")  # training's may be a storage URI
    assert compiled_kernels.cache_dir() == default
    monkeypatch.delenv(compiled_kernels.CACHE_ENV)
    assert compiled_kernels.cache_dir() == default
