"""A training run's folder and what every launcher needs to know about it (local process or TPU slice).

MaxText's run folder is `<storage>/<output_parts...>/<run_name>/` (checkpoints/, tensorboard/, logs/,
maxtext.yml, inputs.json). These helpers live with the run folder, not in one launcher, so the
launchers share them without importing each other.
"""

from __future__ import annotations

import json
import os

from marin_assets.core import layout
from marin_assets.core.storage import Storage
from marin_assets.train.maxtext_config import MixtureLike, RunPaths
from marin_assets.train.preflight import PreflightReport, preflight
from marin_assets.train.runs import TrainingRunSpec
from marin_assets.train.weights import assert_weights_cleared

# The module every launcher runs in the training process (python -m ENTRY_MODULE config.yml).
ENTRY_MODULE = "marin_assets.train.maxtext_entry"
# Written by each attempt: the mixture identity it trained on and the W&B run id (resume decisions).
IDENTITY_FILE = "inputs.json"
JAX_CACHE_ENV = "MARIN_JAX_CACHE_DIR"


def run_paths(storage: Storage, spec: TrainingRunSpec, output_parts: tuple[str, ...] = (layout.TRAINING,)) -> RunPaths:
    """The run folder is <storage>/<output_parts...>/<run_name>/ (the scaling stage may pass its own parts).

    A run with `init: {weights: NAME}` gets that entry's checkpoint, refused here (before any launcher
    starts) when the entry is unknown, uncleared or its checkpoint does not match its checksum.
    """
    init = assert_weights_cleared(storage, spec.init.weights).load_parameters_path if spec.init else None
    return RunPaths(
        base_output_directory=storage.uri(*output_parts),
        run_name=spec.run_name,
        jax_cache_dir=os.environ.get(JAX_CACHE_ENV) or storage.uri(".cache", "jax"),
        init_parameters=init,
    )


def plan_run(spec: TrainingRunSpec, mixture: MixtureLike) -> PreflightReport:
    """The preflight of a run on its mixture (same answer on every launcher)."""
    return preflight(spec.model, spec.resources, mixture.tokenizer_vocab_size, spec.steps)


def previous_inputs(storage: Storage, run_dir: str) -> dict:
    """The run folder's inputs.json from the last attempt (mixture identity, W&B run id); {} if none."""
    uri = f"{run_dir}/{IDENTITY_FILE}"
    return json.loads(storage.fs.cat(uri)) if storage.fs.exists(uri) else {}
