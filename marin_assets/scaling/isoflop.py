"""Approach 2: per compute budget a parabola of loss vs log N, its minimum, then power laws in C.

For each budget, loss = c0 + c1 x + c2 x^2 with x = ln N (OLS, or a robust Huber RLM). The vertex
gives N*(C); D*(C) = C / (k N*) under the suite's FLOPs model C = k N D (k = 6). Across budgets,
ln N* = ln G_N + a ln C and ln D* = ln G_D + b ln C are fitted by OLS with t-based intervals, and
the minima's losses by L*(C) = E + A (C / C0)^-gamma (a power law with an irreducible term; see
`fit_loss_law`), so Approach 2 also predicts the loss at a budget it has not seen.

A budget only feeds the power laws when its minimum is trustworthy: at least 3 runs, an upward
parabola, and a bracketed minimum (lowest loss not at either end of the grid, vertex inside the
sampled N range). Other budgets are reported with their reason, never silently used.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from marin_assets.scaling.fit_inputs import (
    FitError, as_float_column, require_finite_positive, validated_isoflop_points,
)

MIN_POINTS = 3
MIN_BUDGETS = 2


@dataclass(frozen=True)
class BudgetFit:
    budget: float
    n_points: int
    status: str  # ok | too_few_points | not_convex | not_bracketed
    message: str
    coefficients: tuple[float, float, float] | None = None  # c0, c1, c2 in ln N
    N_opt: float | None = None
    D_opt: float | None = None
    loss_opt: float | None = None

    @property
    def usable(self) -> bool:
        return self.status == "ok"

    def curve(self, log_n) -> np.ndarray:
        c0, c1, c2 = self.coefficients
        return c0 + c1 * np.asarray(log_n) + c2 * np.asarray(log_n) ** 2


@dataclass(frozen=True)
class PowerLaw:
    """y = coefficient * C ** exponent, fitted in log-log space."""

    exponent: float
    coefficient: float
    exponent_ci: tuple[float, float]
    log_coefficient_ci: tuple[float, float]
    n_budgets: int

    def __call__(self, C) -> np.ndarray:
        return self.coefficient * np.asarray(C, float) ** self.exponent


@dataclass(frozen=True)
class LossLaw:
    """L*(C) = E + A (C / C0)^-gamma: the loss of the compute-optimal model against compute.

    C0 (the geometric mean of the fitted budgets) keeps A of order one whatever the scale of C.
    With two budgets there are too few points for three parameters: E is fixed at 0 (irreducible=False).
    """

    E: float
    A: float
    gamma: float
    C0: float
    n_budgets: int
    irreducible: bool = True

    def __call__(self, C) -> np.ndarray:
        return self.E + self.A * (np.asarray(C, float) / self.C0) ** -self.gamma


def fit_loss_law(C, loss) -> LossLaw:
    """Least squares on relative residuals, E bounded to [0, min loss) so the law stays decreasing."""
    from scipy.optimize import least_squares

    C, loss = np.asarray(C, float), np.asarray(loss, float)
    if len(C) < 2 or np.any(~np.isfinite(loss)) or np.any(loss <= 0):
        raise FitError(f"the loss law needs >= 2 budgets with finite positive minima, got {len(C)}")
    C0 = float(np.exp(np.mean(np.log(C))))
    x = np.log(C / C0)
    if len(C) == 2:
        gamma = -float(np.polyfit(x, np.log(loss), 1)[0])
        return LossLaw(0.0, float(np.exp(np.mean(np.log(loss) + gamma * x))), gamma, C0, 2, irreducible=False)
    floor = 0.999 * float(loss.min())

    def residuals(p):
        E, log_a, gamma = p
        return (E + np.exp(log_a - gamma * x)) / loss - 1.0

    best = None
    for E0 in (0.0, 0.5 * floor, 0.9 * floor):
        slope = np.polyfit(x, np.log(loss - E0), 1)[0]
        start = [E0, float(np.mean(np.log(loss - E0) - slope * x)), float(np.clip(-slope, 1e-3, 4.0))]
        res = least_squares(residuals, start, bounds=([0.0, -np.inf, 0.0], [floor, np.inf, 5.0]))
        if best is None or res.cost < best.cost:
            best = res
    E, log_a, gamma = (float(v) for v in best.x)
    return LossLaw(E, float(np.exp(log_a)), gamma, C0, len(C))


@dataclass(frozen=True)
class IsoflopFit:
    budgets: list[BudgetFit]
    N_law: PowerLaw
    D_law: PowerLaw
    robust: bool
    flops_per_param_token: float
    warnings: list[str] = field(default_factory=list)
    loss_law: LossLaw | None = None

    def minima(self) -> pd.DataFrame:
        return pd.DataFrame([{k: v for k, v in asdict(b).items() if k != "coefficients"} for b in self.budgets])

    @classmethod
    def from_dict(cls, data: dict) -> IsoflopFit:
        """Rebuild from `as_dict()` (what isoflop.json stores)."""
        budgets = [BudgetFit(**{**b, "coefficients": tuple(b["coefficients"]) if b["coefficients"] else None})
                   for b in data["budgets"]]
        usable = sum(b.usable for b in budgets)
        laws = [PowerLaw(data[f"{n}_opt_exponent"], data[f"{n}_opt_coefficient"], tuple(data[f"{n}_opt_exponent_ci"]),
                         (float("nan"), float("nan")), usable) for n in ("N", "D")]
        loss_law = LossLaw(**data["loss_opt_law"]) if data.get("loss_opt_law") else None
        return cls(budgets, *laws, data["robust"], data["flops_per_param_token"], list(data["warnings"]), loss_law)

    def as_dict(self) -> dict:
        return {
            "N_opt_exponent": self.N_law.exponent, "N_opt_exponent_ci": list(self.N_law.exponent_ci),
            "N_opt_coefficient": self.N_law.coefficient,
            "D_opt_exponent": self.D_law.exponent, "D_opt_exponent_ci": list(self.D_law.exponent_ci),
            "D_opt_coefficient": self.D_law.coefficient,
            "robust": self.robust, "flops_per_param_token": self.flops_per_param_token,
            "budgets": [asdict(b) for b in self.budgets], "warnings": list(self.warnings),
            "loss_opt_law": asdict(self.loss_law) if self.loss_law else None,
        }


def fit_parabola(N, loss, *, robust: bool = False, weights=None) -> tuple[float, float, float]:
    """loss ~ c0 + c1 ln N + c2 ln^2 N; `weights`: how many identical runs each row stands for (least squares
    weights; the robust fit, whose statsmodels RLM takes no weights, sees each row repeated that many times)."""
    import statsmodels.api as sm  # seconds to import: loaded by the fits, not with the code location

    x = np.log(np.asarray(N, float))
    y = np.asarray(loss, float)
    w = np.ones_like(x) if weights is None else np.asarray(weights, float)
    if robust and len(x) > 3 and not np.all(w == 1):
        repeats = np.rint(w).astype(int)
        if not np.allclose(repeats, w):
            raise FitError(f"robust isoFLOP fit: weights must be whole counts, got {w.tolist()}")
        x, y, w = np.repeat(x, repeats), np.repeat(y, repeats), np.ones(int(repeats.sum()))
    design = np.column_stack([np.ones_like(x), x, x * x])
    if robust and len(x) > 3:  # with 3 points the parabola interpolates; nothing to down-weight
        model = sm.RLM(y, design, M=sm.robust.norms.HuberT())
    else:
        model = sm.WLS(y, design, weights=w)
    return tuple(float(c) for c in model.fit().params)


def fit_budget(budget: float, N, loss, *, robust: bool = False, flops_per_param_token: float = 6.0,
               weights=None) -> BudgetFit:
    N, loss = as_float_column("N", N), as_float_column("loss", loss)
    require_finite_positive("N", N)
    require_finite_positive("loss", loss)
    n = len(N)
    if len(np.unique(N)) < MIN_POINTS:
        return BudgetFit(budget, n, "too_few_points",
                         f"budget {budget:.3g}: {len(np.unique(N))} distinct model sizes; a parabola needs >= {MIN_POINTS}")
    coefs = fit_parabola(N, loss, robust=robust, weights=weights)
    c0, c1, c2 = coefs
    if c2 <= 0:
        return BudgetFit(budget, n, "not_convex", f"budget {budget:.3g}: loss vs ln N curves downward (c2={c2:.3g}); "
                         "no minimum", coefs)
    x_opt = -c1 / (2 * c2)
    n_opt = float(np.exp(x_opt))
    fit = dict(coefficients=coefs, N_opt=n_opt, D_opt=budget / (flops_per_param_token * n_opt),
               loss_opt=float(c0 + c1 * x_opt + c2 * x_opt**2))
    order = np.argsort(N)
    lowest = int(np.argmin(loss[order]))
    if lowest in (0, n - 1) or not (N.min() <= n_opt <= N.max()):
        side = "smallest" if lowest == 0 or n_opt < N.min() else "largest"
        return BudgetFit(budget, n, "not_bracketed",
                         f"budget {budget:.3g}: minimum not bracketed (best run is the {side} model; vertex "
                         f"N={n_opt:.3g} vs grid {N.min():.3g}..{N.max():.3g}); extend the grid", **fit)
    return BudgetFit(budget, n, "ok", "bracketed", **fit)


def fit_power_law(C, y, level: float = 0.95) -> PowerLaw:
    import statsmodels.api as sm

    log_c, log_y = np.log(np.asarray(C, float)), np.log(np.asarray(y, float))
    res = sm.OLS(log_y, sm.add_constant(log_c)).fit()
    if len(log_c) > 2:
        ci = res.conf_int(alpha=1 - level)
        log_coef_ci, exp_ci = tuple(map(float, ci[0])), tuple(map(float, ci[1]))
    else:  # two budgets: an exact line, no residual degrees of freedom
        log_coef_ci = exp_ci = (float("nan"), float("nan"))
    return PowerLaw(float(res.params[1]), float(np.exp(res.params[0])), exp_ci, log_coef_ci, len(log_c))


def fit_isoflop(points: pd.DataFrame, *, robust: bool = False, level: float = 0.95,
                flops_per_param_token: float = 6.0) -> IsoflopFit:
    """points: one row per run with columns budget, N, loss (already cleaned of failed runs).

    Bad points (NaN/inf/<= 0, duplicated rows, a single budget) are a FitError naming them.
    """
    points = validated_isoflop_points(points, MIN_BUDGETS)
    budgets = [fit_budget(float(b), g["N"], g["loss"], robust=robust, flops_per_param_token=flops_per_param_token,
                          weights=g["weight"]) for b, g in points.groupby("budget", sort=True)]
    usable = [b for b in budgets if b.usable]
    warnings = [f"{b.message}; excluded from the power laws" for b in budgets if not b.usable]
    if len(usable) < MIN_BUDGETS:
        raise FitError(f"isoFLOP fit needs >= {MIN_BUDGETS} budgets with a bracketed minimum, got "
                       f"{len(usable)}: " + " | ".join(b.message for b in budgets if not b.usable))
    if len(usable) == 2:
        warnings.append("only 2 usable budgets: power-law exponents have no confidence interval")
        warnings.append("only 2 usable budgets: the loss law L*(C) has no irreducible term (E = 0)")
    C = [b.budget for b in usable]
    return IsoflopFit(
        budgets=budgets,
        N_law=fit_power_law(C, [b.N_opt for b in usable], level),
        D_law=fit_power_law(C, [b.D_opt for b in usable], level),
        robust=robust, flops_per_param_token=flops_per_param_token, warnings=warnings,
        loss_law=fit_loss_law(C, [b.loss_opt for b in usable]),
    )
