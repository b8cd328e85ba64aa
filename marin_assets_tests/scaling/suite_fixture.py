"""A small suite whose results are written straight into storage from a known law, so the fit
assets can be exercised end to end without training (training has its own real-MaxText test)."""

from __future__ import annotations

import numpy as np
import yaml

from marin_assets.core.hashing import sha256_bytes

from marin_assets.core.storage import Storage
from marin_assets.scaling.parametric import ParametricLaw
from marin_assets.scaling.results import RESULT_FILE, run_parts
from marin_assets.scaling.suite import ScalingRecipe, SuiteRun, load_scaling_recipe

# alpha = beta, so N* ~ C^0.5; the optimum sits inside every budget's grid below.
LAW = ParametricLaw(E=2.0, A=10.0, B=19.2, alpha=0.3, beta=0.3)


def fixture_recipe(mixture: str = "tiny", **changes) -> ScalingRecipe:
    raw = load_scaling_recipe("scaling/cpu_suite.yaml").model_dump(mode="json")
    raw.update(name="fixture_suite", mixture=mixture, budgets=[
        {"flops": 3e10, "sizes": ["d12l1", "d16l1", "d24l1", "d32l1"]},
        {"flops": 1e11, "sizes": ["d16l1", "d24l1", "d32l1", "d48l1"]},
        {"flops": 3e11, "sizes": ["d24l1", "d32l1", "d48l1", "d64l1"]},
    ], heldout={"flops": 1e12, "size": "d64l1"})
    raw["fit"].update(bootstrap=40, bootstrap_workers=1)
    raw.update(changes)
    return ScalingRecipe.model_validate(yaml.safe_load(yaml.safe_dump(raw)))


def synthetic_loss(run: SuiteRun, noise: float = 0.002) -> float:
    rng = np.random.default_rng(int(sha256_bytes(run.key.encode())[:8], 16))
    return float(LAW.loss(run.N, run.D) * np.exp(rng.normal(0, noise)))


def write_result(storage: Storage, suite: str, run: SuiteRun, loss: float | None, parts=None, **extra) -> None:
    """What train_and_record commits, minus the training (the same result.json fields)."""
    with storage.atomic_dir(*(parts or run_parts(suite, run.key))) as staged:
        staged.write_json({**run.describe(), "final_eval_loss": loss, "status": "succeeded",
                           "started_at": "2000-01-01T00:00:00+00:00", **extra}, RESULT_FILE)
