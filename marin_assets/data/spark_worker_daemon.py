"""Spark's Python worker daemon (`spark.python.daemon.module`), with JAX imported once before it forks
the workers.

Spark kills a Python worker after a minute idle, so every stage of a job that starts after a pause
gets fresh workers, and each of them would import JAX again (~1.5 s on 2 cores) to run the
`datasketch` family's SHA-1 kernel (hash_families/sha1_kernel.py). Imported here, in the daemon that
lives as long as the executor, the workers inherit the modules. Only the import: JAX starts no thread
and no backend until first used, so the fork is safe (each worker starts its own CPU backend).
"""

from __future__ import annotations

import importlib

PRELOADED = ("jax", "jax.experimental.serialize_executable")


def preload() -> None:
    for module in PRELOADED:
        importlib.import_module(module)


if __name__ == "__main__":
    from pyspark import daemon

    preload()
    daemon.manager()
