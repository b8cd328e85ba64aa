"""Scaling recipe (recipes/scaling/*.yaml) -> the suite's runs, one per (budget, size[, seed]).

FLOPs model (one, recorded with every run): C = 6 N D, with N = every parameter except the input
embedding table: the layers plus the output projection (unembedding). Why: the input embedding is a
lookup and costs no FLOPs, but the unembedding matmul does, and at CPU scale it is most of the
compute (vocab 1024 x emb 32 = 33k against 16k parameters in one layer). Kaplan's non-embedding N
undercounts those models' compute several-fold, which hands the smallest models several times the
tokens their true compute buys and puts every isoFLOP minimum at the grid's small edge. With this N,
6 N D is within 20% of MaxText's own count (the rest is attention: ~10% at seq_len 128, ~15% at
2048) and converges to the usual 6 N D at TPU scale. MaxText's per-token FLOPs are recorded beside each result.

Partition keys are `C<budget>__<size>` (plus `__s<seed>` for seeds other than 0), e.g. C3e10__d64l2.
A flat static key rather than a 2-D MultiPartitions: isoFLOP grids differ per budget, so most
(budget, size) cells of a product would be invalid; a key depends only on its own budget and size,
so adding a budget or a seed adds partitions and never renames finished runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pydantic import Field, model_validator

from marin_assets.core.recipes import Recipe, load_recipe, recipes_dir
from marin_assets.scaling.fit_metric import metric_key
# The fit's settings live apart: fitting a table of runs never needs the training code below.
from marin_assets.scaling.fit_settings import FLOPS_MODEL, FLOPS_PER_PARAM_TOKEN, FitSettings  # noqa: F401
from marin_assets.train.models import Architecture, Budget, ModelRecipe, Optimizer
from marin_assets.train.preflight import active_params
from marin_assets.train.runs import EvalSettings, TrainingRunSpec

DEFAULT_RECIPE = "scaling/cpu_suite.yaml"


def budget_label(flops: float) -> str:
    """3e+10 -> '3e10'; 2.5e11 -> '2.5e11' (part of partition keys, so stable and filesystem-safe)."""
    mantissa, exponent = f"{flops:.6e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


class BudgetGrid(Recipe):
    flops: float = Field(gt=0)
    sizes: list[str] = Field(min_length=1)


class HeldoutRun(Recipe):
    flops: float = Field(gt=0)
    size: str


class ScalingRecipe(Recipe):
    name: str
    description: str = ""
    mixture: str
    seq_len: int = Field(gt=0)
    global_batch_size: int = Field(gt=0)
    optimizer: Optimizer
    vocab_size: int = Field(gt=0)             # the models' vocab (>= the tokenizer's; checked before training)
    seeds: list[int] = Field(default=[0], min_length=1)
    eval_steps: int = -1                      # batches per final eval; -1 = the whole validation split
    sizes: dict[str, Architecture]
    budgets: list[BudgetGrid] = Field(min_length=1)
    heldout: HeldoutRun | None = None
    target_multipliers: list[float] = [10, 100, 1000]  # x the largest fitted budget
    fit: FitSettings = FitSettings()
    # Another suite's recipe (e.g. scaling/cpu_suite.yaml): scaling_comparison sets this suite against it
    # at equal compute (its runs are read from storage, trained under that recipe).
    compare_with: str | None = None
    profile_steps: int = Field(default=6, ge=2)   # scaling_profile: real steps per size (the first compiles)
    max_device_hours: float | None = Field(default=None, gt=0)  # scaling_plan refuses a suite estimated above it

    @model_validator(mode="after")
    def _consistent(self):
        labels = [budget_label(b.flops) for b in self.budgets]
        if len(set(labels)) != len(labels):
            raise ValueError(f"budgets must be distinct; got {labels}")
        named = [s for b in self.budgets for s in b.sizes] + ([self.heldout.size] if self.heldout else [])
        unknown = sorted(set(named) - set(self.sizes))
        if unknown:
            raise ValueError(f"budgets/heldout name sizes not defined under 'sizes': {unknown}")
        for b in self.budgets:
            if len(set(b.sizes)) != len(b.sizes):
                raise ValueError(f"budget {b.flops:g} lists a size twice: {b.sizes}")
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds repeat: {self.seeds}")
        metric_key(self.fit.metric)  # the form only: which domains exist is known once runs report them
        return self


@dataclass(frozen=True)
class SuiteRun:
    key: str            # partition key
    budget: float       # nominal isoFLOP budget the run belongs to
    size: str
    seed: int
    architecture: Architecture
    N: int              # parameters except the input embedding (see FLOPS_MODEL)
    steps: int
    D: int              # tokens actually trained: steps x batch x seq_len
    C: float            # 6 N D of the run as trained (steps are whole, so C differs slightly from budget)

    def describe(self) -> dict:
        return {"run": self.key, "budget": self.budget, "size": self.size, "seed": self.seed, "N": self.N,
                "D": self.D, "C": self.C, "steps": self.steps, "flops_model": FLOPS_MODEL}


def compute_params(arch: Architecture, vocab_size: int) -> int:
    """The training stage's active parameter count less the input embedding table (a lookup, no FLOPs).

    Active: an MoE size counts the top-k experts (and router) a token passes through, not every expert,
    so N measures compute the same way for dense and MoE suites (equal to every parameter for dense).
    """
    return active_params(arch, vocab_size) - vocab_size * arch.emb_dim


def plan_run(recipe: ScalingRecipe, budget: float, size: str, seed: int = 0, prefix: str = "") -> SuiteRun:
    arch = recipe.sizes[size]
    n = compute_params(arch, recipe.vocab_size)
    tokens_per_step = recipe.global_batch_size * recipe.seq_len
    steps = max(1, round(budget / (FLOPS_PER_PARAM_TOKEN * n * tokens_per_step)))
    d = steps * tokens_per_step
    key = f"{prefix}C{budget_label(budget)}__{size}" + (f"__s{seed}" if seed != 0 else "")
    return SuiteRun(key, float(budget), size, seed, arch, n, steps, d, FLOPS_PER_PARAM_TOKEN * n * d)


def suite_runs(recipe: ScalingRecipe) -> list[SuiteRun]:
    return [plan_run(recipe, b.flops, size, seed) for b in recipe.budgets for size in b.sizes for seed in recipe.seeds]


def heldout_run(recipe: ScalingRecipe) -> SuiteRun | None:
    h = recipe.heldout
    return plan_run(recipe, h.flops, h.size, recipe.seeds[0], prefix="heldout__") if h else None


def target_budgets(recipe: ScalingRecipe) -> list[float]:
    largest = max(b.flops for b in recipe.budgets)
    return [largest * m for m in recipe.target_multipliers]


def training_spec(recipe: ScalingRecipe, run: SuiteRun) -> TrainingRunSpec:
    """The training stage's spec for one suite run; its folder is training/<suite>-<key>/."""
    model = ModelRecipe(
        name=f"{recipe.name}-{run.size}",
        architecture=run.architecture.model_copy(update={"vocab_size": recipe.vocab_size}),
        seq_len=recipe.seq_len, global_batch_size=recipe.global_batch_size, optimizer=recipe.optimizer,
        budget=Budget(steps=run.steps), seed=run.seed,
    )
    return TrainingRunSpec(run_name=f"{recipe.name}-{run.key}", model=model, mixture=recipe.mixture,
                           eval=EvalSettings(steps=recipe.eval_steps))


def load_scaling_recipe(path: str = DEFAULT_RECIPE) -> ScalingRecipe:
    return load_recipe(path, ScalingRecipe)


def default_recipe_path() -> str:
    """$MARIN_SCALING_RECIPE (relative to the recipes folder or absolute), else the CPU suite."""
    return os.environ.get("MARIN_SCALING_RECIPE", str(recipes_dir() / DEFAULT_RECIPE))
