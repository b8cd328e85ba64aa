"""What one scaling run writes: where (result_paths) and its result.json (run_result,
data_repetition). Pure, and apart from the fitters in results.py: a scaling run's code version
covers this module, so editing a fit never makes the trained runs stale.
"""

from __future__ import annotations

import math

from marin_assets.scaling.result_paths import RESULT_FILE, output_parts, run_parts  # noqa: F401 (re-exported)
from marin_assets.scaling.suite import SuiteRun


def run_result(run: SuiteRun, final_eval_loss: float, *, vocab_size: int, num_params: int,
               flops_per_token: float, extra: dict | None = None) -> dict:
    """result.json of one run; `status` says whether the fits may use it."""
    finite = isinstance(final_eval_loss, (int, float)) and math.isfinite(final_eval_loss)
    return {
        **run.describe(),
        "final_eval_loss": final_eval_loss if finite else None,
        "status": "succeeded" if finite else "diverged",
        "vocab_size": vocab_size,
        "num_params_total": num_params,
        "maxtext_flops": flops_per_token * run.D,  # MaxText's count, incl. unembedding and attention
        **(extra or {}),
    }


def data_repetition(sources: dict, D: int) -> dict:
    """Unique tokens and epochs of a run that trains D tokens of a mixture (its mixture.json sources).

    A source of realised weight w contributes w D tokens, of which at most its available (unique)
    training tokens are distinct: U = sum min(available, w D), epochs = D / U; per source, w D / available.
    Mixtures written before `available_train_tokens` existed record 0: then U is unknown (None).
    """
    seen = {name: s.realised_weight * D for name, s in sources.items()}
    if not sources or any(s.available_train_tokens <= 0 for s in sources.values()):
        return {"unique_tokens": None, "epochs": None, "source_epochs": {}}
    unique = sum(min(s.available_train_tokens, seen[name]) for name, s in sources.items())
    return {"unique_tokens": float(unique), "epochs": float(D / unique) if unique else None,
            "unique_tokens_available": float(sum(s.available_train_tokens for s in sources.values())),
            "source_epochs": {name: round(seen[name] / s.available_train_tokens, 4) for name, s in sources.items()}}
