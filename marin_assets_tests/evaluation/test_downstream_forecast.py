"""The loss -> metric sigmoid recovers a known curve, its bootstrap interval covers a held-out point drawn
from that curve, and a held-out point off the curve is reported outside the interval."""

import numpy as np
import pytest

from marin_assets.evaluation.downstream_forecast import check, fit_sigmoid, forecast, problems, sigmoid

TRUE = (0.4, -3.0, 3.5, 0.5)  # accuracy 0.5 (chance) at high loss, 0.9 at low loss


def suite_points(noise=0.005, seed=0):
    rng = np.random.default_rng(seed)
    losses = np.linspace(2.5, 4.5, 9)
    return losses, sigmoid(losses, *TRUE) + rng.normal(0, noise, len(losses))


def test_the_sigmoid_recovers_the_curve_it_was_drawn_from():
    losses, metrics = suite_points()
    fit = fit_sigmoid(losses, metrics)
    assert fit.rmse < 0.01 and fit.runs == 9
    for loss in (2.7, 3.5, 4.3):
        assert fit.predict(loss) == pytest.approx(float(sigmoid(loss, *TRUE)), abs=0.02)
    with pytest.raises(ValueError, match="needs at least 4 runs"):
        fit_sigmoid(losses[:3], metrics[:3])


def test_forecast_interval_covers_the_truth_and_the_check_flags_a_miss():
    losses, metrics = suite_points()
    held_loss = 2.4  # beyond the suite's lowest loss: an extrapolation, like a larger held-out run
    result = forecast(losses, metrics, held_loss, loss_interval=(2.35, 2.45), draws=100)
    truth = float(sigmoid(held_loss, *TRUE))
    assert result["interval"][0] <= truth <= result["interval"][1]
    assert abs(result["prediction"] - truth) < 0.02 and result["bootstrap_draws"] >= 90
    assert check(result, truth)["within_interval"]
    miss = check(result, truth - 0.2)  # the failing case: a held-out run far below the curve
    assert not miss["within_interval"] and miss["error"] == pytest.approx(truth - 0.2 - result["prediction"])


def test_problems_name_a_flat_near_chance_suite_and_pass_a_real_curve():
    losses, metrics = suite_points()
    result = forecast(losses, metrics, 2.4, draws=20)
    assert problems(losses, metrics, result["params"], items=6700, random=0.5, metric="acc") == []
    flat = 0.5 + np.array([0.004, -0.003, 0.002, 0.0, -0.004, 0.003, 0.001, -0.002, 0.002])  # chance + noise
    found = problems(losses, flat, forecast(losses, flat, 2.4, draws=20)["params"], items=6700, random=0.5,
                     metric="acc")
    assert any("less than its sampling noise" in p for p in found)
    assert any("within" in p and "of chance 0.5" in p for p in found)


def test_runs_no_sigmoid_fits_give_a_flat_forecast_that_says_so():
    """The quickstart's blimp_sample accuracies of its 13 suite runs (400 pairs each): no sigmoid converges."""
    losses = [4.6001, 4.5798, 4.5917, 4.6888, 4.3574, 4.3157, 4.3288, 4.2973, 4.5051, 4.1865, 4.1905, 4.2266, 4.4473]
    accs = [0.5575, 0.605, 0.525, 0.5975, 0.62, 0.63, 0.575, 0.6175, 0.5425, 0.5825, 0.5875, 0.5625, 0.55]
    with pytest.raises(RuntimeError):
        fit_sigmoid(losses, accs)
    result = forecast(losses, accs, 4.1, (4.05, 4.15), draws=50)
    assert result["fit_failed"].startswith("the loss -> metric sigmoid did not converge")
    assert result["prediction"] == pytest.approx(np.mean(accs)) and result["interval"][0] < np.mean(accs)
    found = problems(losses, accs, result["params"], items=400, random=0.5, metric="acc")
    assert any("does not fall with loss" in p for p in found) and any("flat" in p for p in found)
