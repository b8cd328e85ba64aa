"""What made a materialization: code, lockfile, libraries, devices. Captured once per process."""

from __future__ import annotations

import functools
import importlib.metadata
import platform
import subprocess
import sys
from pathlib import Path

from marin_assets.core.hashing import sha256_bytes

REPO_ROOT = Path(__file__).resolve().parents[2]

KEY_LIBRARIES = (
    "dagster", "pyspark", "jax", "jaxlib", "maxtext", "flax", "orbax-checkpoint", "grain",
    "tokenizers", "pyarrow", "pandas", "numpy", "statsmodels", "scipy", "resiliparse",
)


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


@functools.cache
def git_state() -> dict:
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {"git_commit": commit or "unknown", "git_dirty": bool(status) if status is not None else None}


@functools.cache
def lockfile_hash() -> str:
    lock = REPO_ROOT / "uv.lock"
    return sha256_bytes(lock.read_bytes()) if lock.exists() else "missing"


@functools.cache
def library_versions() -> dict[str, str]:
    out = {}
    for name in KEY_LIBRARIES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def jax_devices() -> list[str]:
    """Devices JAX sees, only if JAX is already imported (importing it costs seconds)."""
    jax = sys.modules.get("jax")
    if jax is None:
        return []
    return [str(d) for d in jax.devices()]


def spark_version() -> str | None:
    """The running Spark's version when this process used Spark, else None (never starts Spark).

    The active session's version is the one that did the work (a cluster may differ from the
    installed pyspark); without an active session the imported pyspark's version is reported.
    """
    pyspark = sys.modules.get("pyspark")
    if pyspark is None:
        return None
    sql = sys.modules.get("pyspark.sql")
    try:
        session = sql.SparkSession.getActiveSession() if sql is not None else None
        if session is not None:
            return session.version
    except Exception:  # a stopped or remote session must not break provenance
        pass
    return pyspark.__version__


def environment_snapshot() -> dict:
    """Not cached as a whole: Spark and JAX may be imported after the first materialization."""
    return {
        **git_state(),
        "uv_lock_sha256": lockfile_hash(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "libraries": library_versions(),
        "spark": spark_version(),
        "jax_devices": jax_devices(),
    }
