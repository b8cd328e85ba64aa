"""TrainingRunSpec: one training run = model recipe + mixture + resources + budget + eval + checkpoints.

Runs are listed in recipes/training/runs.yaml (the partitions of the `training_run` asset); the
scaling stage builds specs in code for each (budget, size) point and calls the same launcher.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, ValidationError, field_validator, model_serializer, model_validator

from marin_assets.core.recipes import Recipe, RecipeError, load_recipe, recipes_dir
from marin_assets.train import quantization as quant
from marin_assets.train.models import Budget, ModelRecipe, Quantization, load_model_recipe
from marin_assets.train.hardware import ResourceConfig

RUNS_FILE = "training/runs.yaml"
RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class EvalSettings(Recipe):
    interval: int | None = Field(default=None, gt=0)  # train steps between evals; None = only after the last step
    steps: int = -1                                   # batches per eval; -1 = the whole validation split

    @field_validator("steps")
    @classmethod
    def _steps(cls, v):
        if v == 0 or v < -1:
            raise ValueError("eval.steps must be -1 (whole validation split) or > 0")
        return v


class CheckpointSettings(Recipe):
    period: int = Field(default=1000, gt=0)           # save every N steps (and at the end)
    keep: int | None = Field(default=None, gt=0)      # None = keep all


class InitSettings(Recipe):
    # An entry of recipes/weights.yaml: MaxText loads its parameters (load_parameters_path) at step 0,
    # with a fresh optimizer state (continued pre-training or fine-tuning on this run's mixture).
    weights: str = Field(description="name of an entry in recipes/weights.yaml")


class TrainingRunSpec(Recipe):
    run_name: str
    model: ModelRecipe
    mixture: str
    resources: ResourceConfig = ResourceConfig()
    budget: Budget | None = None                      # overrides the model recipe's default budget
    eval: EvalSettings = EvalSettings()
    checkpoint: CheckpointSettings = CheckpointSettings()
    log_period: int = Field(default=100, gt=0)        # TensorBoard flush period
    init: InitSettings | None = None                  # None: MaxText's random initialisation (init_weights_seed)
    maxtext_overrides: dict[str, Any] = Field(default_factory=dict)  # escape hatch, recorded with the run
    # True: loss_matches_baseline compares the run with recipes/training/baselines/<run>.json and fails
    # when that file is missing (write it with `marin baseline refresh <run>`).
    baseline: bool = False
    quantization: Quantization | None = None          # overrides the model recipe's quantization

    @model_serializer(mode="wrap")
    def _no_override_unsaid(self, handler):
        out = handler(self)  # a run without an override hashes as before the switch existed
        if out.get("quantization") is None:
            out.pop("quantization", None)
        return out

    @model_validator(mode="after")
    def _hardware_can_quantize(self):
        problem = quant.hardware_problem(self.resolved_quantization, self.resources)
        if problem:
            where = "quantization" if self.quantization else "model.quantization"
            raise ValueError(f"{where}: {problem}")
        return self

    @property
    def resolved_quantization(self) -> str:
        return self.quantization or self.model.quantization

    @model_validator(mode="before")
    @classmethod
    def _load_named_model(cls, data):
        if isinstance(data, dict) and isinstance(data.get("model"), str):
            data = {**data, "model": load_model_recipe(data["model"])}
        return data

    @field_validator("run_name")
    @classmethod
    def _run_name(cls, v):
        if not RUN_NAME.match(v):
            raise ValueError(f"run_name {v!r} must match {RUN_NAME.pattern} (it names a folder and a partition)")
        return v

    @property
    def steps(self) -> int:
        return (self.budget or self.model.budget).resolve_steps(self.model.tokens_per_step)

    @property
    def final_step(self) -> int:
        """MaxText numbers steps 0..steps-1; the last checkpoint and the final eval are at this step."""
        return self.steps - 1

    def eval_schedule(self) -> dict[str, int]:
        """eval_interval / eval_start_step such that an eval always runs after the last step."""
        last = self.final_step
        if self.eval.interval is None:  # only after the last step
            return {"eval_interval": max(last, 1), "eval_start_step": last, "eval_steps": self.eval.steps}
        interval = self.eval.interval
        return {"eval_interval": interval, "eval_start_step": last % interval, "eval_steps": self.eval.steps}


class TrainingRuns(Recipe):
    runs: dict[str, dict[str, Any]]

    def spec(self, run_name: str) -> TrainingRunSpec:
        if run_name not in self.runs:
            raise KeyError(f"unknown training run {run_name!r}; defined: {sorted(self.runs)}")
        try:
            return TrainingRunSpec.model_validate({"run_name": run_name, **self.runs[run_name]})
        except ValidationError as exc:
            problems = "; ".join(
                f"field 'runs.{run_name}.{'.'.join(str(p) for p in e['loc'])}': {e['msg']}" for e in exc.errors()
            )
            raise RecipeError(f"{recipes_dir() / RUNS_FILE}: invalid training run: {problems}") from None


def load_training_runs() -> TrainingRuns:
    runs = load_recipe(recipes_dir() / RUNS_FILE, TrainingRuns)
    for name in runs.runs:
        runs.spec(name)  # fail on load, naming the run and field, not at launch
    return runs


def training_run_names() -> list[str]:
    path = recipes_dir() / RUNS_FILE
    return sorted(load_training_runs().runs) if path.exists() else []
