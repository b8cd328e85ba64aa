"""Compiled XLA kernels (JAX on the CPU) kept in a cache folder, so that a fresh process (every new Spark
Python worker) loads a kernel in milliseconds instead of tracing and compiling it again (seconds for the
SHA-1 rounds).

A kernel is saved under a name made of its module's code, the JAX version, the CPU's instruction set
extensions (the compiled code uses them) and the caller's own parts (chunk sizes, shapes): a change to
any of them compiles a new one, and an old file is never loaded for new code.
"""

from __future__ import annotations

import functools
import os
import pickle
import platform
from collections.abc import Callable, Sequence
from pathlib import Path

from marin_assets.core.hashing import sha256_bytes

# The folder compiled kernels are kept in: training's JAX cache setting (train/run_folder.JAX_CACHE_ENV).
# Named again, not imported: a data module does not import training code, and moving the name into core
# would edit run_folder, whose code version would make every training run stale.
CACHE_ENV = "MARIN_JAX_CACHE_DIR"


def cache_dir() -> Path:
    """MARIN_JAX_CACHE_DIR when it names a local folder (training's setting, which may also be a
    storage URI), else ~/.cache/marin_assets/jax."""
    folder = os.environ.get(CACHE_ENV, "")
    return Path(folder) if folder and "://" not in folder else Path.home() / ".cache" / "marin_assets" / "jax"


@functools.cache
def _machine() -> str:
    """The JAX version, the machine and the CPU's flags: read once a process, whatever its kernels."""
    import jax

    cpu = Path("/proc/cpuinfo")
    lines = cpu.read_text().splitlines() if cpu.is_file() else []
    flags = next((line for line in lines if line.startswith("flags")), "")
    return f"{jax.__version__}/{platform.machine()}/{flags}"


def kernel_key(source_file: str, parts: str) -> str:
    """The saved kernel's name: its module's code, JAX, the machine, the CPU flags and `parts`."""
    return sha256_bytes(Path(source_file).read_bytes() + f"{_machine()}/{parts}".encode())[:16]


def load_or_compile(prefix: str, source_file: str, parts: str, trace: Callable[[], Callable],
                    shapes: Sequence) -> Callable:  # fmt: skip
    """The compiled kernel `trace()` (a function of arrays of `shapes`, jax.ShapeDtypeStruct): loaded from
    the cache folder when a process saved it before, else compiled and saved (atomically: workers that
    compile it at once leave one whole file). A damaged file is compiled again; a folder that cannot be
    written leaves this process its kernel and the next process compiles again."""
    import jax
    from jax.experimental import serialize_executable

    saved = cache_dir() / f"{prefix}-{kernel_key(source_file, parts)}.pickle"
    if saved.is_file():
        try:
            return serialize_executable.deserialize_and_load(*pickle.loads(saved.read_bytes()))
        except Exception:  # noqa: BLE001 - damaged or from elsewhere: compile again below
            pass
    compiled = jax.jit(trace()).lower(*shapes).compile()
    tmp = saved.with_name(f"{saved.name}.{os.getpid()}.tmp")
    try:
        saved.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(pickle.dumps(serialize_executable.serialize(compiled)))
        os.replace(tmp, saved)
    except OSError:
        tmp.unlink(missing_ok=True)
    return compiled
