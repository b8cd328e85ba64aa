"""Measured by the trainer itself: peak device memory of the run, and (CPU) the machine's matmul peak.

GPU/TPU: `peak_bytes_in_use` of JAX's first local device (XLA's allocator). CPU: the trainer
process' peak resident set (all simulated devices share it). The CPU peak FLOP/s that MFU is
measured against is a float32 matmul on this machine, measured once and kept in a small JSON file
keyed by CPU model and core count, so every run on the machine divides by the same number.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import time

MATMUL_N = 2048
MATMUL_REPEATS = 5
PEAK_FILE = os.path.expanduser(os.environ.get("MARIN_CPU_PEAK_FILE", "~/.cache/marin_assets/cpu_matmul_peak.json"))


def peak_device_memory() -> tuple[float, str]:
    import jax

    device = jax.local_devices()[0]
    if device.platform != "cpu":
        stats = device.memory_stats() or {}
        if "peak_bytes_in_use" in stats:
            return float(stats["peak_bytes_in_use"]), f"{device.platform} peak_bytes_in_use ({device.device_kind})"
    # ru_maxrss is in KiB on Linux
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024), "cpu peak RSS of the trainer process"


def machine_key() -> str:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    return f"{model} x{os.cpu_count()} float32"


def measure_matmul_tflops(n: int = MATMUL_N, repeats: int = MATMUL_REPEATS) -> float:
    """Best of `repeats` jitted n x n float32 matmuls on the first CPU device, in TFLOP/s."""
    import jax
    import jax.numpy as jnp

    device = jax.devices("cpu")[0]
    a = jax.device_put(jnp.ones((n, n), jnp.float32), device)
    matmul = jax.jit(lambda x: x @ x)
    matmul(a).block_until_ready()  # compile
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        matmul(a).block_until_ready()
        best = min(best, time.perf_counter() - t0)
    return 2 * n**3 / best / 1e12


def cpu_peak_tflops(path: str = PEAK_FILE) -> dict:
    """{tflops, machine, measured_at}: recorded once per machine, measured when missing."""
    key = machine_key()
    try:
        with open(path) as f:
            recorded = json.load(f)
        if recorded.get("machine") == key:
            return recorded
    except (OSError, ValueError):
        pass
    record = {"tflops": measure_matmul_tflops(), "machine": key,
              "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "method": f"best of {MATMUL_REPEATS} jitted {MATMUL_N}x{MATMUL_N} float32 matmuls"}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(record, f)
    os.replace(tmp, path)  # atomic: concurrent trainers never read half a file
    return record
