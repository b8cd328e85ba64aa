"""Two-step forecast of a downstream metric, as the OLMo model ladder does (pure).

Step 1 (compute -> loss) is the scaling stage's fit (its held-out prediction of the run's loss).
Step 2 (loss -> task metric) is fitted here on the suite's runs, with the ladder's sigmoid

    metric(L) = a / (1 + exp(-k (L - L0))) + b

(k < 0 for accuracy, which rises as loss falls). The interval comes from a bootstrap over the suite's
runs (refit on resampled runs) combined with the step-1 loss interval: each bootstrap draw predicts at
a loss drawn uniformly from the step-1 interval, so both steps' uncertainty reaches the forecast.

`problems` says in words when such a forecast carries no information: tiny CPU models sit near chance on
BLiMP, their metrics differ by less than the sampling noise of the items, and a sigmoid through them is
flat (or fits noise), so the forecast is chance plus noise whatever its error turns out to be.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

MIN_RUNS = 4  # four parameters


def sigmoid(loss, a, k, l0, b):
    return a / (1.0 + np.exp(-k * (np.asarray(loss) - l0))) + b


@dataclass(frozen=True)
class SigmoidFit:
    a: float
    k: float
    l0: float
    b: float
    runs: int
    rmse: float

    def predict(self, loss: float) -> float:
        return float(sigmoid(loss, self.a, self.k, self.l0, self.b))


def fit_sigmoid(losses, metrics, random: float = 0.5) -> SigmoidFit:
    """Least-squares sigmoid through (loss, metric) of the suite's runs; `random` anchors the initial guess."""
    from scipy.optimize import curve_fit

    x, y = np.asarray(losses, float), np.asarray(metrics, float)
    if len(x) < MIN_RUNS:
        raise ValueError(f"a loss -> metric sigmoid needs at least {MIN_RUNS} runs with both numbers, got {len(x)}")
    top = max(float(y.max()), random + 1e-3)
    guess = (top - random + 0.05, -2.0, float(np.median(x)), random)
    bounds = ([0.0, -100.0, float(x.min()) - 10, -1.0], [2.0, 100.0, float(x.max()) + 10, 2.0])
    params, _ = curve_fit(sigmoid, x, y, p0=guess, bounds=bounds, maxfev=20000)
    rmse = float(np.sqrt(np.mean((sigmoid(x, *params) - y) ** 2)))
    return SigmoidFit(*map(float, params), runs=len(x), rmse=rmse)


def forecast(losses, metrics, predicted_loss: float, loss_interval: tuple[float, float] | None = None,
             random: float = 0.5, draws: int = 200, seed: int = 0, level: float = 0.9) -> dict:
    """The metric predicted at `predicted_loss`, with the bootstrap interval over runs (and the loss interval)."""
    x, y = np.asarray(losses, float), np.asarray(metrics, float)
    try:
        fit, fit_failed = fit_sigmoid(x, y, random), None
    except RuntimeError as exc:
        # No sigmoid through these runs (the quickstart's near-chance accuracies scatter with loss): the
        # forecast is then their mean, a flat curve, and `problems` says so instead of the asset crashing.
        if len(x) < MIN_RUNS:
            raise
        fit = SigmoidFit(0.0, 0.0, float(np.median(x)), float(y.mean()), len(x), float(y.std()))
        fit_failed = f"the loss -> metric sigmoid did not converge on these runs ({exc})"
    rng = np.random.default_rng(seed)
    low_loss, high_loss = loss_interval or (predicted_loss, predicted_loss)
    samples = []
    for _ in range(draws):
        pick = rng.integers(0, len(x), len(x))
        if len(set(pick.tolist())) < MIN_RUNS:
            continue
        if fit_failed:  # the flat fallback's own uncertainty: the mean of the resampled runs
            samples.append(float(y[pick].mean()))
            continue
        try:
            refit = fit_sigmoid(x[pick], y[pick], random)
        except (RuntimeError, ValueError):  # a resample the optimizer cannot fit is left out, and counted
            continue
        samples.append(refit.predict(rng.uniform(low_loss, high_loss)))
    tail = (1 - level) / 2
    interval = [float(np.quantile(samples, tail)), float(np.quantile(samples, 1 - tail))] if samples else None
    return {"form": "sigmoid", "params": asdict(fit), "predicted_loss": predicted_loss, "loss_interval": loss_interval,
            "prediction": fit.predict(predicted_loss), "interval": interval, "level": level,
            "bootstrap_draws": len(samples), "bootstrap_failed": draws - len(samples), "fit_failed": fit_failed}


def problems(losses, metrics, fit_params: dict, items: int, random: float, metric: str) -> list[str]:
    """Why a forecast of `metric` from these runs is degenerate (empty: it is not), judged against the
    binomial sampling noise of a metric measured on `items` items (2 standard errors)."""
    y, x = np.asarray(metrics, float), np.asarray(losses, float)
    center = float(np.clip(y.mean(), 0.01, 0.99))
    noise = 2 * float(np.sqrt(center * (1 - center) / max(items, 1)))
    found = []
    spread = float(y.max() - y.min())
    if spread < noise:
        found.append(f"the suite's runs span {spread:.4f} of {metric}, less than its sampling noise ({noise:.4f}, "
                     f"2 standard errors at {items} items): the sigmoid is fitted to noise")
    if metric == "acc" and float(np.max(np.abs(y - random))) < noise:
        found.append(f"every run's acc is within {noise:.4f} (2 standard errors) of chance {random:g}: "
                     "these models do not yet solve the task")
    r = float(np.corrcoef(x, y)[0, 1]) if np.std(x) > 0 and np.std(y) > 0 else 0.0
    if r > -0.5:  # every metric here rises as loss falls: a correlation near zero (or positive) is no trend
        found.append(f"{metric} does not fall with loss across the runs (correlation {r:+.2f})")
    fit = SigmoidFit(**fit_params)
    swing = abs(fit.predict(float(np.min(losses))) - fit.predict(float(np.max(losses))))
    if swing < noise:
        found.append(f"the fitted sigmoid is flat: it moves {metric} by {swing:.4f} over the suite's loss range, "
                     f"less than the sampling noise {noise:.4f}")
    return found


def check(forecast_result: dict, actual: float) -> dict:
    """The held-out run's measured metric against its forecast: error, and whether the interval covers it."""
    interval = forecast_result["interval"]
    return {"predicted": forecast_result["prediction"], "actual": actual,
            "error": actual - forecast_result["prediction"],
            "within_interval": bool(interval and interval[0] <= actual <= interval[1])}


def preregistration(forecast_at: str | None, training_started_at: str | None) -> dict:
    """Whether the forecast was recorded before the held-out run started training (ISO timestamps)."""
    import datetime as dt

    if not forecast_at or not training_started_at:
        return {"preregistered": False, "why": "no forecast time recorded (an older forecast)" if not forecast_at
                else "the held-out run's training start is unknown"}
    lead = (dt.datetime.fromisoformat(training_started_at) - dt.datetime.fromisoformat(forecast_at)).total_seconds()
    return {"preregistered": lead > 0, "forecast_at": forecast_at, "training_started_at": training_started_at,
            "lead_s": round(lead, 3),
            "why": f"forecast {lead:.0f} s before the held-out run started training" if lead > 0
            else f"forecast {-lead:.0f} s after the held-out run started training"}
