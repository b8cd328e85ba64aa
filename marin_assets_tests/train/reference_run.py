"""The checkpoint hash of an uninterrupted tiny run, shared between test files of one pytest session.

test_training_e2e trains the tiny run uninterrupted anyway (it checks that run's Dagster result);
test_preemption needs only its final checkpoint hash to compare a preempted run with. A full run is
a trainer process (~35 s of CPU importing MaxText alone), so the first file to train it publishes
the hash under a folder every xdist worker of this session shares, keyed by the run's config and
the bytes of its training data; a file that finds no entry trains its own reference (and publishes it).
Only this session's runs are reused: same code, same machine.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

MIXTURE_INPUTS = ("train", "validation", "tokenizer")  # not mixture.json: it names the storage root


def session_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of this session: under xdist each worker's basetemp is a child of the run's one."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = shared / "reference-runs"
    folder.mkdir(exist_ok=True)
    return folder


def run_key(run_config: dict, mixture_dir: Path) -> str:
    digest = hashlib.sha256(json.dumps(run_config, sort_keys=True).encode())
    for sub in MIXTURE_INPUTS:
        for path in sorted((mixture_dir / sub).rglob("*")):
            if path.is_file():
                digest.update(path.relative_to(mixture_dir).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def published_hash(folder: Path, key: str) -> str | None:
    path = folder / f"{key}.json"
    return json.loads(path.read_text())["checkpoint_hash"] if path.exists() else None


def publish_hash(folder: Path, key: str, checkpoint_hash: str) -> None:
    staged = folder / f"{key}.json.{os.getpid()}.tmp"  # renamed into place: a reader never sees half a file
    staged.write_text(json.dumps({"checkpoint_hash": checkpoint_hash}))
    staged.replace(folder / f"{key}.json")
