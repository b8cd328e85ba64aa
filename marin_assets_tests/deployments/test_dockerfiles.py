"""The Dockerfiles, checked without a Docker engine: every file they copy exists, every module
they run exists, and the TPU image's pins agree with the orchestrator's lock."""

import importlib.util
import json
import re
import shlex
import subprocess
import sys
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[2]
DOCKER = REPO / "deployments" / "docker"


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    text = re.sub(r"\\\n", " ", dockerfile.read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, args = line.partition(" ")
            out.append((keyword.upper(), args.strip()))
    return out


def exec_form(args: str) -> list[str]:
    assert args.startswith("["), f"use the exec form (JSON list): {args}"
    return json.loads(args)


def _module_exists(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def _locked_version(package: str) -> str:
    lock = tomllib.loads((REPO / "uv.lock").read_text())
    return next(p["version"] for p in lock["package"] if p["name"] == package)


@pytest.mark.parametrize("name", ["Dockerfile.orchestrator", "Dockerfile.tpu-train"])
def test_dockerfile_copies_existing_files_and_starts_from_python_312(name):
    steps = instructions(DOCKER / name)
    assert steps[0][0] == "FROM" and steps[0][1].startswith("python:3.12-")
    copies = [args for keyword, args in steps if keyword == "COPY" and not args.startswith("--from")]
    ignored = [line.strip() for line in (REPO / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    assert copies
    for args in copies:
        *sources, _destination = shlex.split(args)
        for source in sources:
            assert (REPO / source).exists(), f"{name}: COPY {source} does not exist in the repository"
            assert not any(fnmatch(source, pattern) or source.startswith(f"{pattern}/") for pattern in ignored), \
                f"{name}: COPY {source} is excluded by .dockerignore"


def test_orchestrator_serves_the_code_location_with_java_and_the_locked_env():
    steps = instructions(DOCKER / "Dockerfile.orchestrator")
    runs = " ".join(args for keyword, args in steps if keyword == "RUN")
    assert "openjdk-17-jre-headless" in runs
    assert "uv sync --locked" in runs and "--no-default-groups" in runs
    env_sh = (REPO / "scripts" / "env.sh").read_text()
    assert re.search(r'uv==([\d.]+)', runs).group(1) == re.search(r'uv==([\d.]+)', env_sh).group(1)
    cmd = exec_form(next(args for keyword, args in steps if keyword == "CMD"))
    assert cmd[:3] == ["dagster", "api", "grpc"]
    module = cmd[cmd.index("--module-name") + 1]
    assert module == tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["dagster"]["module_name"]
    assert _module_exists(module)
    env = " ".join(args for keyword, args in steps if keyword == "ENV")
    assert "MARIN_ENV=production" in env


def test_tpu_image_pins_agree_with_the_lock_and_its_entry_points_exist():
    requirements = [Requirement(line.split("#")[0].strip())
                    for line in (DOCKER / "tpu-train-requirements.txt").read_text().splitlines()
                    if line.split("#")[0].strip()]
    by_name = {r.name: r for r in requirements}
    assert by_name["maxtext"].extras == {"tpu"}
    assert by_name["maxtext"].specifier.contains(_locked_version("maxtext"))
    assert by_name["dagster-pipes"].specifier.contains(_locked_version("dagster-pipes"))
    assert {"google-cloud-storage", "gcsfs"} <= set(by_name)
    steps = instructions(DOCKER / "Dockerfile.tpu-train")
    runs = " ".join(args for keyword, args in steps if keyword == "RUN")
    assert "--no-deps ." in runs  # marin_assets without the orchestrator's dependencies
    for module in re.findall(r"import ([\w., ]+)\"", runs)[0].split(","):
        assert _module_exists(module.strip()), module
    cmd = exec_form(next(args for keyword, args in steps if keyword == "CMD"))
    assert _module_exists(cmd[cmd.index("-m") + 1])


def test_pod_side_modules_import_without_dagster():
    """What the TPU image imports must not need dagster (it is not installed there)."""
    probe = ("import sys; import marin_assets.train.maxtext_entry, marin_assets.train.k8s.pod_pipes; "
             "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('dagster', 'pyspark', 'dagster_gcp')); "
             "print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
