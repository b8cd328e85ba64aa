import math

from marin_assets.scaling.observations import collect_observations


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
