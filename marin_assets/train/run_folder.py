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
from marin_assets.train.hf_import import hf_config_problems, read_hf_config
from marin_assets.train.weights import prepared_weights

# The module every launcher runs in the training process (python -m ENTRY_MODULE config.yml).
ENTRY_MODULE = "marin_assets.train.maxtext_entry"
# Written by each attempt: the mixture identity it trained on and the W&B run id (resume decisions).
IDENTITY_FILE = "inputs.json"
JAX_CACHE_ENV = "MARIN_JAX_CACHE_DIR"


def run_paths(storage: Storage, spec: TrainingRunSpec, output_parts: tuple[str, ...] = (layout.TRAINING,)) -> RunPaths:
    """The run folder is <storage>/<output_parts...>/<run_name>/ (the scaling stage may pass its own parts).

    A run with `init: {weights: NAME}` gets that entry's checkpoint, refused here (before any launcher
    starts) when the entry is unknown, uncleared or its checkpoint does not match its checksum; an HF
    folder also when its config.json does not fit the run's model (then it is converted, once).
    """
    init = prepared_weights(storage, spec.init.weights, fits=lambda config: hf_fit_problems(spec, config)) \
        if spec.init else None
    return RunPaths(
        base_output_directory=storage.uri(*output_parts),
        run_name=spec.run_name,
        jax_cache_dir=os.environ.get(JAX_CACHE_ENV) or storage.uri(".cache", "jax"),
        init_parameters=init.load_parameters_path if init else None,
        init_hf_config=read_hf_config(init.hf_folder) if init and init.hf_folder else None,
    )


def hf_fit_problems(spec: TrainingRunSpec, config: dict, vocab_size: int | None = None) -> list[str]:
    """Where an HF folder's config.json disagrees with the run's model (vocab: the recipe's, else the
    folder's own until the mixture is known; maxtext_config checks it then)."""
    arch = spec.model.architecture
    keys = {**arch.maxtext_keys(spec.resources.accelerator), "max_target_length": spec.model.seq_len,
            "vocab_size": vocab_size or arch.vocab_size or config.get("vocab_size")}
    return hf_config_problems(config, keys, spec.model.name)


def plan_run(spec: TrainingRunSpec, mixture: MixtureLike) -> PreflightReport:
    """The preflight of a run on its mixture (same answer on every launcher)."""
    return preflight(spec.model, spec.resources, mixture.tokenizer_vocab_size, spec.steps)


def previous_inputs(storage: Storage, run_dir: str) -> dict:
    """The run folder's inputs.json from the last attempt (mixture identity, W&B run id); {} if none."""
    uri = f"{run_dir}/{IDENTITY_FILE}"
    return json.loads(storage.fs.cat(uri)) if storage.fs.exists(uri) else {}
