"""Write the MaxText config of a run: every key is explicit, so the recorded file alone reproduces it.

`maxtext_keys` is pure (spec + mixture + paths -> dict). The yml it writes has
`base_config: base.yml`, which MaxText resolves to its installed configs/base.yml, so the same file
works locally and in a TPU container image.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml

from marin_assets.train import quantization
from marin_assets.train.hf_import import hf_config_problems
from marin_assets.train.runs import TrainingRunSpec

TRAIN_MODULE = "maxtext.trainers.pre_train.train"
TOKENS_COLUMN = "tokens"


class MixtureLike(Protocol):
    """What training needs from the tokenize stage's MixtureInfo."""

    train_glob: str
    validation_glob: str
    tokenizer_uri: str
    tokenizer_vocab_size: int


@dataclass(frozen=True)
class RunPaths:
    """MaxText writes to <base_output_directory>/<run_name>/{checkpoints,tensorboard}/."""

    base_output_directory: str
    run_name: str
    jax_cache_dir: str
    init_parameters: str | None = None  # a cleared weights entry's <checkpoint step>/items (train/weights.py)
    init_hf_config: dict | None = None  # the HF folder's config.json when those weights were imported from one

    @property
    def run_dir(self) -> str:
        return f"{self.base_output_directory.rstrip('/')}/{self.run_name}"

    @property
    def checkpoints_dir(self) -> str:
        return f"{self.run_dir}/checkpoints"

    @property
    def tensorboard_dir(self) -> str:
        return f"{self.run_dir}/tensorboard"


def model_keys(spec: TrainingRunSpec, vocab_size: int) -> dict[str, Any]:
    model, arch, opt = spec.model, spec.model.architecture, spec.model.optimizer
    return {
        **arch.maxtext_keys(spec.resources.accelerator),  # the registered architecture's block and shape
        **quantization.maxtext_keys(spec.resolved_quantization),
        "vocab_size": vocab_size,
        "max_target_length": model.seq_len,
        "per_device_batch_size": model.global_batch_size / spec.resources.num_devices(),
        "remat_policy": model.remat_policy,
        "init_weights_seed": model.seed,
        "data_shuffle_seed": model.seed,
        "learning_rate": opt.learning_rate,
        "lr_schedule_type": opt.schedule,
        "warmup_steps_fraction": opt.warmup_fraction,
        "learning_rate_final_fraction": opt.final_lr_fraction,
        "adam_weight_decay": opt.weight_decay,
        "adam_b1": opt.adam_b1,
        "adam_b2": opt.adam_b2,
        "gradient_clipping_threshold": opt.grad_clip,
        "steps": spec.steps,
        # Pinned, never derived from `steps`: a resumed run must see the same schedule.
        "learning_rate_schedule_steps": spec.steps,
    }


def data_keys(spec: TrainingRunSpec, mixture: MixtureLike) -> dict[str, Any]:
    on_cpu = spec.resources.accelerator == "cpu"
    return {
        "dataset_type": "grain",
        "grain_file_type": "parquet",
        "grain_train_files": mixture.train_glob,
        "grain_eval_files": mixture.validation_glob,
        "train_data_columns": [TOKENS_COLUMN],
        "eval_data_columns": [TOKENS_COLUMN],
        "tokenize_train_data": False,
        "tokenize_eval_data": False,
        # rows are whole documents longer than seq_len; first_fit packing would reject them
        "grain_packing_type": "concat_then_split",
        "num_epoch": 1,  # running out of data is an error we detect, not a silent repeat
        "grain_worker_count": 0 if on_cpu else 1,
        "grain_worker_count_eval": 0 if on_cpu else 1,
        "tokenizer_type": "huggingface",
        "tokenizer_path": mixture.tokenizer_uri,
    }


def maxtext_keys(spec: TrainingRunSpec, mixture: MixtureLike, paths: RunPaths) -> dict[str, Any]:
    vocab = spec.model.vocab_size_for(mixture.tokenizer_vocab_size)
    keys: dict[str, Any] = {
        "run_name": paths.run_name,
        "base_output_directory": paths.base_output_directory,
        **model_keys(spec, vocab),
        **data_keys(spec, mixture),
        **spec.eval_schedule(),
        "enable_checkpointing": True,
        "async_checkpointing": True,
        "checkpoint_period": spec.checkpoint.period,
        "save_checkpoint_on_completion": True,
        "enable_tensorboard": True,
        "log_period": spec.log_period,
        "log_config": False,
        "jax_cache_dir": paths.jax_cache_dir,
        **spec.resources.maxtext_hardware_keys(),
        **spec.resources.maxtext_parallelism_keys(),
        **spec.resources.maxtext_preemption_keys(),
    }
    if paths.init_parameters is not None:
        keys["load_parameters_path"] = paths.init_parameters
    if paths.init_hf_config is not None:  # imported HF weights: now that the vocab is known, all of it must fit
        problems = hf_config_problems(paths.init_hf_config, keys, spec.model.name)
        if problems:
            raise ValueError(f"run {spec.run_name}: its init weights do not fit its model:\n" +
                             "\n".join(f"  - {p}" for p in problems))
    if spec.checkpoint.keep is not None:
        keys["max_num_checkpoints_to_keep"] = spec.checkpoint.keep
    keys.update(spec.maxtext_overrides)
    return keys


def write_maxtext_yaml(keys: dict[str, Any], path: str | Path) -> str:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = yaml.safe_dump(keys, sort_keys=True)
    path.write_text("# Written by marin_assets.train.maxtext_config; every key is explicit.\nbase_config: base.yml\n" + body)
    return str(path)


def cli_args(keys: dict[str, Any]) -> list[str]:
    """The same keys as MaxText `key=value` arguments (for launchers that cannot ship a file)."""
    def fmt(v: Any) -> str:
        if isinstance(v, bool):
            return str(v).lower()
        if isinstance(v, list):
            return "[" + ",".join(repr(x) for x in v) + "]"
        return str(v)

    return [f"{k}={fmt(v)}" for k, v in sorted(keys.items())]
