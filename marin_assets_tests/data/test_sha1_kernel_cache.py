"""What lets a fresh Spark Python worker hash with the SHA-1 kernel at once: the compiled kernel kept in a
cache folder, and workers forked from a daemon that has already imported JAX."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from marin_assets.data import spark_worker_daemon
from marin_assets.data.hash_families import sha1_kernel
from marin_assets.resources.spark import SparkResource

HASH_IN_A_NEW_PROCESS = """
import sys
import numpy as np
from datasketch.hashfunc import sha1_hash32
from marin_assets.data.hash_families import sha1_kernel

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
    env = {**os.environ, sha1_kernel.CACHE_ENV: str(cache_dir)}
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
    monkeypatch.setenv(sha1_kernel.CACHE_ENV, str(tmp_path))
    assert sha1_kernel._cache_dir() == tmp_path
    default = Path.home() / ".cache" / "marin_assets" / "jax"
    monkeypatch.setenv(sha1_kernel.CACHE_ENV, "gs://bucket/prefix/.cache/jax")  # training's may be a storage URI
    assert sha1_kernel._cache_dir() == default
    monkeypatch.delenv(sha1_kernel.CACHE_ENV)
    assert sha1_kernel._cache_dir() == default


def test_spark_sessions_fork_python_workers_from_the_preloading_daemon():
    conf = SparkResource(master="local[2]").session_conf()
    assert conf["spark.python.daemon.module"] == spark_worker_daemon.__name__


def test_preloading_jax_starts_no_thread_so_the_daemon_may_fork():
    probe = (
        "import os, numpy\n"
        "from marin_assets.data import spark_worker_daemon\n"
        "before = len(os.listdir('/proc/self/task'))\n"
        "spark_worker_daemon.preload()\n"
        "import sys; assert all(m in sys.modules for m in spark_worker_daemon.PRELOADED)\n"
        "print(before, len(os.listdir('/proc/self/task')))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    before, after = map(int, result.stdout.split())
    assert after == before


def test_spark_python_workers_are_forked_by_the_daemon_with_jax_imported(spark):
    def probe(_):
        parent = Path(f"/proc/{os.getppid()}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        return spark_worker_daemon.__name__ in parent, "jax" in sys.modules

    assert spark.sparkContext.parallelize([0], 1).map(probe).collect() == [(True, True)]
