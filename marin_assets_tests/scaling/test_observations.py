import math

import pytest

from marin_assets.scaling.fit_metric import UnknownMetricError, metric_key
from marin_assets.scaling.observations import collect_observations, metric_value


def _result(run, loss, status="succeeded", N=1e5, D=1e6, budget=6e11):
    return {"run": run, "budget": budget, "size": run, "N": N, "D": D, "C": 6 * N * D, "final_eval_loss": loss,
            "status": status}


def test_bad_runs_are_excluded_with_a_reason_and_counts_conserve():
    results = [
        _result("ok1", 3.2),
        _result("ok2", 3.1, N=2e5, D=5e5),
        _result("nan", math.nan),
        _result("inf", math.inf),
        _result("huge", 40.0),
        _result("failed", None, status="failed"),
        _result("ok1", 3.3),  # the same run reported twice
        {**_result("no_n", 3.0), "N": None},
    ]
    obs = collect_observations(results, max_loss=8.0)
    assert list(obs.table["run"]) == ["ok1", "ok2"]
    assert obs.table.loc[obs.table["run"] == "ok1", "loss"].item() == 3.2  # the first report wins
    reasons = {e.run: e.reason for e in obs.excluded}
    assert reasons["nan"].startswith("final_eval_loss is nan")
    assert reasons["inf"].startswith("diverged") and reasons["huge"].startswith("diverged")
    assert reasons["failed"] == "status=failed"
    assert "duplicate" in reasons["ok1"]
    assert "missing or non-positive N" in reasons["no_n"]
    assert obs.n_input == len(results)
    assert "nan: final_eval_loss is nan" in obs.exclusion_summary()


def test_default_divergence_limit_is_worse_than_uniform_over_the_vocab():
    results = [{**_result("ok", 6.0), "vocab_size": 1024}, {**_result("bad", 8.5), "vocab_size": 1024}]
    obs = collect_observations(results)  # ln(1024) + 1 = 7.93
    assert list(obs.table["run"]) == ["ok"] and obs.excluded[0].reason.startswith("diverged")


def test_identical_configurations_are_fitted_as_replicates_with_a_warning():
    obs = collect_observations([_result("a", 3.2), _result("a__s1", 3.25)])
    assert len(obs.table) == 2
    assert obs.warnings and "a, a__s1" in obs.warnings[0]


def _with_metrics(run, N, **metrics):
    return {**_result(run, 4.0, N=N), "metrics": {"loss": 4.0, "bpb": 2.0, **metrics}}


def test_per_domain_metrics_are_fitted_in_either_spelling():
    assert metric_key("bpb:wiki") == metric_key("bpb/wiki") == "bpb/wiki" and metric_key("loss") == "loss"
    assert metric_key("final_eval_loss") == "final_eval_loss"
    results = [_with_metrics("a", 1e5, **{"bpb/wiki": 1.5, "bpb/handbook_passages": 1.9}),
               _with_metrics("b", 2e5, **{"bpb/wiki": 1.4}),  # an eval set this run did not evaluate
               _with_metrics("c", 3e5, **{"bpb/wiki": None})]  # a domain without bytes has no bpb
    obs = collect_observations(results, metric="bpb:wiki")
    assert list(obs.table["loss"]) == [1.5, 1.4]
    assert {e.run: e.reason for e in obs.excluded} == {"c": "bpb:wiki is None"}
    held = collect_observations(results, metric="bpb:handbook_passages")
    assert list(held.table["run"]) == ["a"] and len(held.excluded) == 2
    assert metric_value({"metrics": {"eval_loss_c4": 3.0}}, "eval_loss_c4") == 3.0  # an external table's column


@pytest.mark.parametrize("metric, match", [
    ("bpb:wikipedia", r"fit.metric 'bpb:wikipedia': none of the 2 succeeded runs reports it; they report "
                      r"final_eval_loss, bpb, bpb:wiki, loss"),
    ("perplexity", "none of the 2 succeeded runs reports it"),
])
def test_a_metric_no_run_reports_is_an_error_naming_the_ones_they_do(metric, match):
    results = [_with_metrics("a", 1e5, **{"bpb/wiki": 1.5}), _with_metrics("b", 2e5, **{"bpb/wiki": 1.4})]
    with pytest.raises(UnknownMetricError, match=match):
        collect_observations(results, metric=metric)
    assert collect_observations([], metric=metric).n_input == 0  # no run yet: nothing to say
    with pytest.raises(UnknownMetricError, match="is not a metric; use final_eval_loss, loss, bpb"):
        metric_key("bpb:")
