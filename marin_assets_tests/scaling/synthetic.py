"""Synthetic suites drawn from a known law, so fits can be checked against the truth."""

from __future__ import annotations

import numpy as np
import pandas as pd

from marin_assets.scaling.parametric import ParametricLaw

TRUE_LAW = ParametricLaw(E=1.7, A=400.0, B=1500.0, alpha=0.34, beta=0.30)


def isoflop_points(law: ParametricLaw = TRUE_LAW, budgets=(1e18, 1e19, 1e20, 1e21), per_budget: int = 7,
                   span: float = 8.0, noise: float = 0.0, seed: int = 0) -> pd.DataFrame:
    """Per budget, `per_budget` model sizes log-spaced over `span`x around the true optimum."""
    rng = np.random.default_rng(seed)
    rows = []
    for budget in budgets:
        n_opt, _ = law.compute_optimal(budget)
        for i, n in enumerate(n_opt * np.geomspace(1 / np.sqrt(span), np.sqrt(span), per_budget)):
            d = budget / (6 * n)
            loss = float(law.loss(n, d) * np.exp(rng.normal(0, noise)))
            rows.append({"run": f"C{budget:.0e}__n{i}", "budget": budget, "size": f"n{i}", "N": n, "D": d,
                         "C": budget, "loss": loss})
    return pd.DataFrame(rows)
