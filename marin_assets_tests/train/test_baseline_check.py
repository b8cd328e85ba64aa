"""loss_matches_baseline on results in storage (check-only runs, no training): missing, off, within."""

import json
from pathlib import Path

import dagster as dg
import pytest

from marin_assets.core import layout
from marin_assets.core.storage import Storage
from marin_assets.governance.nightly import load_nightly_plan
from marin_assets.train.baseline import baseline_from_result, baseline_path, format_baseline, load_baseline
from marin_assets.defs.train.training_checks import build_training_checks
from marin_assets.defs.train.training_assets import build_training_assets
from marin_assets.train.runs import TrainingRuns, load_training_runs
from marin_assets import cli
from marin_assets_tests.local_resources import local_resources

RUN = {"model": "tiny-0.2m", "mixture": "tiny", "budget": {"steps": 3}}
RUNS = TrainingRuns(runs={"declares": {**RUN, "baseline": True}, "casual": RUN})
CURVE = [[0, 7.0], [1, 6.5], [2, 6.1]]


def _committed_result(root: Path, run: str, curve=CURVE, final=6.0) -> None:
    storage = Storage(str(root))
    with storage.atomic_dir(layout.TRAINING, run, layout.FINAL_DIR) as staged:
        staged.write_json({"loss_curve": curve, "final_eval_loss": final, "checkpoint_hash": "abc"}, "result.json")


def _check(root: Path, baselines: Path, run: str):
    run_spec, plan, training_run = build_training_assets(RUNS)
    checks = build_training_checks(plan, training_run, baselines, RUNS)
    loss_check = next(c for c in checks if c.check_key.name == "loss_matches_baseline")
    job = dg.define_asset_job("check_only", selection=dg.AssetSelection.checks(loss_check))
    defs = dg.Definitions(assets=[run_spec, plan, training_run], asset_checks=[loss_check], jobs=[job],
                          resources=local_resources(str(root)))
    result = defs.resolve_job_def("check_only").execute_in_process(tags={"dagster/partition": run},
                                                                  raise_on_error=False)
    (evaluation,) = result.get_asset_check_evaluations()
    assert result.success == evaluation.passed  # blocking: a failed comparison fails the (nightly) run
    return evaluation


def test_a_run_that_declares_a_baseline_and_has_none_fails(tmp_path):
    _committed_result(tmp_path / "store", "declares")
    evaluation = _check(tmp_path / "store", tmp_path / "baselines", "declares")
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.ERROR
    assert evaluation.description == (
        f"no baseline: run 'declares' declares one (baseline: true) but {tmp_path / 'baselines' / 'declares.json'} "
        "does not exist; `marin baseline refresh declares` writes it from the run's result")


def test_a_run_without_a_declared_baseline_says_so_plainly(tmp_path):
    evaluation = _check(tmp_path / "store", tmp_path / "baselines", "casual")
    assert evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.WARN
    assert evaluation.description.startswith("no baseline: run 'casual' declares none")


def test_a_curve_off_the_baseline_fails_naming_the_step(tmp_path):
    baselines = tmp_path / "baselines"
    baselines.mkdir()
    baseline = baseline_from_result({"loss_curve": CURVE, "final_eval_loss": 6.0, "checkpoint_hash": "abc"})
    (baselines / "declares.json").write_text(format_baseline(baseline))
    _committed_result(tmp_path / "store", "declares", curve=[[0, 7.0], [1, 6.8], [2, 6.1]])
    evaluation = _check(tmp_path / "store", baselines, "declares")
    assert not evaluation.passed
    assert evaluation.description == "max |loss - baseline| = 0.3000 at step 1 (tolerance 0.05)"
    _committed_result(tmp_path / "store", "declares")
    assert _check(tmp_path / "store", baselines, "declares").passed


def test_marin_baseline_refresh_writes_the_file_the_check_reads(tmp_path, capsys):
    _committed_result(tmp_path / "store", "declares")
    out = tmp_path / "baselines" / "declares.json"
    assert cli.main(["baseline", "refresh", "declares", "--storage-root", str(tmp_path / "store"),
                     "--out", str(out), "--tolerance", "0.1"]) == 0
    assert "wrote" in capsys.readouterr().out
    assert json.loads(out.read_text())["loss_curve"] == CURVE and load_baseline("declares", out.parent)["tolerance"] == 0.1
    with pytest.raises(SystemExit, match="training/nope/final is missing or was never committed"):
        cli.main(["baseline", "refresh", "nope", "--storage-root", str(tmp_path / "store")])


def test_the_nightly_run_declares_a_committed_baseline():
    run = load_nightly_plan().run
    assert load_training_runs().spec(run).baseline
    baseline = load_baseline(run)
    assert baseline is not None, f"{baseline_path(run)} missing: run `marin baseline refresh {run}`"
    assert [s for s, _ in baseline["loss_curve"]] == list(range(load_training_runs().spec(run).steps))
