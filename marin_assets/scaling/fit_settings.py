"""How a suite's runs are fitted (the recipe's `fit:` section) and the FLOPs model the fits assume.

Apart from scaling.suite, which plans runs with the training stage's code: a fit of a table of runs
(an external suite's) depends on these settings only, so editing the trainer never stales it.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from marin_assets.core.recipes import Recipe

FLOPS_MODEL = "6ND, N = parameters except the input embedding (layers + unembedding); MoE: the active ones"
FLOPS_PER_PARAM_TOKEN = 6.0


class FitSettings(Recipe):
    method: str = "mle"                       # Approach 3 objective: mle (Besiroglu) or huber (Hoffmann)
    delta: float = Field(default=1e-3, gt=0)
    bootstrap: int = Field(default=200, ge=0)  # resamples of the runs for the intervals
    bootstrap_workers: int | None = None      # processes for the refits; None = one (spawned workers cost more than they save here)
    seed: int = 0
    level: float = Field(default=0.95, gt=0, lt=1)
    robust_isoflop: bool = True               # statsmodels RLM (Huber) for the per-budget parabolas
    max_loss: float | None = None             # losses above this count as diverged (None: ln(vocab) + 1)
    law: str = "chinchilla"                   # Approach 3 form, a key of scaling.laws.LAWS
    compare_laws: bool = True                 # also fit the other registered forms; AIC + held-out error in metadata
    metric: str = "final_eval_loss"           # see fit_metric.METRIC_FORMS (loss, bpb, per domain, downstream)
    lobo_loss_tolerance: float = Field(default=0.02, gt=0)    # leave-one-budget-out: largest budget's loss error
    lobo_n_opt_tolerance: float = Field(default=0.5, gt=0)    # ... and its N* error
    max_interval_ratio: float = Field(default=10.0, gt=1)     # bootstrap hi/lo above this is flagged

    @model_validator(mode="after")
    def _known_law(self):
        from marin_assets.scaling.laws import LAWS

        if self.law not in LAWS:
            raise ValueError(f"fit.law {self.law!r} is not a registered law form: {sorted(LAWS)}")
        return self
