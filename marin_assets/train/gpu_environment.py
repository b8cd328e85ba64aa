"""Before a local GPU run launches: is JAX's CUDA plugin installed at jax's version, and are the GPUs there?

Each refusal is one line naming what to change. The device count comes from a short JAX process
with the run's own platform settings (not this one: the orchestrator must not hold GPU memory).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata

# JAX's CUDA builds, each a plugin and its PJRT runtime (`uv sync --extra gpu` installs the CUDA 12 pair).
CUDA_PACKAGES = ("jax-cuda12-plugin", "jax-cuda12-pjrt", "jax-cuda13-plugin", "jax-cuda13-pjrt")
INSTALL_HINT = "install the GPU extra: uv sync --extra gpu"
PROBE_TIMEOUT_S = 120


class GpuEnvironmentError(RuntimeError):
    """A GPU run cannot start on this machine; the message names what is missing."""


def installed_versions(packages=CUDA_PACKAGES) -> dict[str, str]:
    found = {}
    for name in ("jax", "jaxlib", *packages):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def plugin_problems(versions: dict[str, str]) -> list[str]:
    """Every CUDA package must match jax's version exactly (JAX refuses or misbehaves otherwise)."""
    jax_version = versions.get("jax")
    cuda = {name: v for name, v in versions.items() if name in CUDA_PACKAGES}
    if not cuda:
        return [f"no CUDA plugin for JAX is installed (jax {jax_version}); {INSTALL_HINT}"]
    return [
        f"{name} {version} differs from jax {jax_version}; install {name}=={jax_version} ({INSTALL_HINT})"
        for name, version in sorted(cuda.items()) if version != jax_version
    ]


def device_problems(found: int, wanted: int, gpu_type: str, probe_error: str | None = None) -> list[str]:
    if probe_error:
        return [f"no visible NVIDIA GPU for JAX ({probe_error}); check the driver (nvidia-smi) and CUDA_VISIBLE_DEVICES"]
    if found < wanted:
        return [f"resources.chips_per_host={wanted} but JAX sees {found} GPU(s) here; lower chips_per_host"
                f" (gpu_type {gpu_type})"]
    return []


PROBE = "import jax, json; print(json.dumps([d.device_kind for d in jax.devices()]))"


def probe_devices(env: dict[str, str]) -> tuple[list[str], str | None]:
    """Device kinds a JAX process with `env` sees, or the reason it could not start."""
    # no preallocation in the probe; every visible GPU counted, not only the run's
    probe_env = {**os.environ, **env, "XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    probe_env.pop("JAX_CUDA_VISIBLE_DEVICES", None)
    try:
        done = subprocess.run([sys.executable, "-c", PROBE], env=probe_env, capture_output=True, text=True,
                              timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return [], f"JAX did not list its devices within {PROBE_TIMEOUT_S} s"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["exit code %d" % done.returncode])[-1]
        return [], last[:300]
    return json.loads(done.stdout.strip().splitlines()[-1]), None


def require_gpu_environment(gpus: int, gpu_type: str, env: dict[str, str]) -> list[str]:
    """Raise GpuEnvironmentError naming what is missing; return the device kinds JAX will train on."""
    problems = plugin_problems(installed_versions())
    if problems:
        raise GpuEnvironmentError("GPU run refused before launch: " + "; ".join(problems))
    kinds, error = probe_devices(env)
    problems = device_problems(len(kinds), gpus, gpu_type, error)
    if problems:
        raise GpuEnvironmentError("GPU run refused before launch: " + "; ".join(problems))
    return kinds[:gpus]
