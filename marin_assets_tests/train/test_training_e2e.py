"""Real MaxText training on CPU through Dagster: plan -> run, streaming, checks, kill -9 + exact resume,
silent-failure detection, and the preflight refusal. Tiny model, one module-scoped storage root.

Regenerate the committed loss baseline after an intended numerics change:
    MARIN_UPDATE_BASELINES=1 .venv/bin/pytest marin_assets_tests/train/test_training_e2e.py -k uninterrupted
"""

import json
import os
import signal
import threading
import time
from pathlib import Path

import dagster as dg
import psutil
import pytest

from marin_assets.train.baseline import baseline_from_result, format_baseline
from marin_assets.train.checkpoints import latest_checkpoint_step
from marin_assets.defs.train.definitions import build_defs
from marin_assets.train.runs import TrainingRuns
from marin_assets_tests.train.mixture_fixture import build_mixture
from marin_assets_tests.train.reference_run import publish_hash, run_key, session_dir
from marin_assets_tests.local_resources import local_resources

pytestmark = pytest.mark.slow

BASELINES = Path(__file__).parent / "baselines"
TINY = {"model": "tiny-0.2m", "mixture": "tiny", "budget": {"steps": 61}, "eval": {"interval": 30},
        "checkpoint": {"period": 10}, "log_period": 5, "resources": {"accelerator": "cpu", "memory_gib": 4}}
RUNS = TrainingRuns(runs={
    "tiny-fixture": TINY,
    "tiny-fixture-resume": TINY,
    "tiny-exhausted": {**TINY, "budget": {"steps": 120}},  # ~70 batches of data
    "tiny-profile": TINY,
    "tiny-too-big": {**TINY, "resources": {"accelerator": "cpu", "memory_gib": 0.001}},
    "tiny-wandb": {**TINY, "budget": {"steps": 11}, "eval": {}},
})


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    root = tmp_path_factory.mktemp("storage")
    build_mixture(root)
    defs = build_defs(RUNS, baselines_dir=BASELINES)
    plan = defs.get_assets_def("training_plan")
    run = defs.get_assets_def("training_run")
    mixture = dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(["tiny"]))
    checks = list(defs.asset_checks)
    return {"root": root, "assets": [plan, run, mixture, *checks]}


def materialize(env, run_name, instance=None):
    if instance is None:  # disposed in the calling thread (sqlite objects are per thread)
        with dg.DagsterInstance.ephemeral() as own:
            return materialize(env, run_name, own)
    return dg.materialize(
        env["assets"], partition_key=run_name, raise_on_error=False, instance=instance,
        resources=local_resources(str(env["root"])),
        selection=["training_plan", "training_run"],
    )


def result_json(env, run_name):
    return json.loads((env["root"] / "training" / run_name / "final" / "result.json").read_text())


def check_results(result):
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


@pytest.fixture(scope="module")
def uninterrupted(env, tmp_path_factory):
    instance = dg.DagsterInstance.ephemeral()
    result = materialize(env, "tiny-fixture", instance)
    assert result.success
    logs = [(e.timestamp, e.user_message) for e in instance.all_logs(result.run_id)]
    res = result_json(env, "tiny-fixture")
    # test_preemption compares with this run's hash instead of training its own reference
    publish_hash(session_dir(tmp_path_factory), run_key(TINY, env["root"] / "mixtures" / "tiny"), res["checkpoint_hash"])
    return result, res, logs


def test_uninterrupted_run_materializes_with_metadata_streaming_and_baseline(env, uninterrupted):
    result, res, logs = uninterrupted
    mat = result.asset_materializations_for_node("training_run")[0]
    meta = mat.metadata
    assert mat.tags["dagster/data_version"] == res["checkpoint_hash"]
    for key in ("final_eval_loss", "loss_curve_plot", "curves", "tokens_per_s", "tflops_per_device",
                "checkpoint_uri", "checkpoint_hash", "tensorboard_dir", "wandb"):
        assert key in meta, key
    assert meta["loss_curve_plot"].value.startswith("![loss curve](data:image/png;base64,")
    # Plots first (each full plot, opened by its [Show Markdown], then its inline thumbnail), then the
    # numbers; the curves are a file, not inline JSON.
    assert list(meta)[:6] == ["loss_curve_plot", "loss_curve_plot (preview)", "domain_bpb_plot",
                              "domain_bpb_plot (preview)", "efficiency", "final_eval_loss"], list(meta)[:7]
    assert meta["efficiency"].value.startswith("MFU ")  # MFU, goodput, tokens/s, memory measured vs estimated
    assert len(meta["loss_curve_plot (preview)"].value) < 1000 and "loss_curve" not in meta
    assert res["checkpoint_step"] == 60 and [s for s, _ in res["loss_curve"]] == list(range(61))
    assert 0 < res["maxtext_s"] + res["exit_s"] < res["wall_s"]  # the launcher's own share is measured per run
    assert res["loss_curve"][-1][1] < res["loss_curve"][0][1] - 1.0  # it learned
    # final eval over the whole validation split (2,597 tokens; concat_then_split drops a short tail)
    assert res["eval_tokens"] >= 0.95 * 2597 and res["eval_curve"][-1][0] == 60
    assert (env["root"] / "training" / "tiny-fixture" / "final" / "_COMMITTED").exists()
    # Per-domain results (the fixture's one source, no source column: the mixture row) as a table; the
    # registered eval set was never materialized in this storage, and the run says so.
    assert [r.data["domain"] for r in meta["domains"].records] == ["all"]
    assert meta["domains"].records[0].data["bpb"] == pytest.approx(res["metrics"]["bpb"], rel=1e-3)
    assert "eval_set[handbook_passages] is not materialized" in meta["eval_sets_missing"].value
    assert "handbook_passages" in res["eval_sets_missing"] and res["domains"][0]["kind"] == "mixture"
    # progress arrived while training ran, not in one batch at the end
    step_logs = [t for t, m in logs if m.startswith("step ") and "/60 loss" in m]
    finished = [t for t, m in logs if m.startswith("training finished")]
    assert len(step_logs) >= 60 and finished and finished[0] - step_logs[0] > 0.5
    if os.environ.get("MARIN_UPDATE_BASELINES"):
        (BASELINES / "tiny-fixture.json").write_text(format_baseline(baseline_from_result(res)))
    checks = check_results(result)
    assert checks["preflight_fits"].passed
    assert checks["loss_matches_baseline"].passed, checks["loss_matches_baseline"].description


def test_kill_9_mid_run_then_resume_gives_the_same_checkpoint_hash(env, uninterrupted):
    run_dir = env["root"] / "training" / "tiny-fixture-resume"
    outcome = {}
    thread = threading.Thread(target=lambda: outcome.update(first=materialize(env, "tiny-fixture-resume")))
    thread.start()
    killed = None
    deadline = time.monotonic() + 900  # a hang guard: beside another worker a run is slower
    while killed is None and thread.is_alive() and time.monotonic() < deadline:
        if (latest_checkpoint_step(str(run_dir / "checkpoints")) or 0) >= 10:
            for child in psutil.Process().children(recursive=True):
                try:  # other children (git, already-reaped helpers) may exit meanwhile
                    is_trainer = "marin_assets.train.maxtext_entry" in " ".join(child.cmdline())
                except psutil.Error:
                    continue
                if is_trainer:
                    child.send_signal(signal.SIGKILL)
                    killed = latest_checkpoint_step(str(run_dir / "checkpoints"))
        time.sleep(0.02)
    thread.join()
    assert killed is not None and killed < 60, "the training process was not killed mid-run"
    assert not outcome["first"].success
    assert not (run_dir / "final").exists()  # a crashed run never looks complete

    second = materialize(env, "tiny-fixture-resume")
    assert second.success
    resumed = result_json(env, "tiny-fixture-resume")
    assert resumed["resumed_from_step"] is not None and 10 <= resumed["resumed_from_step"] < 60
    assert resumed["checkpoint_hash"] == uninterrupted[1]["checkpoint_hash"]
    assert resumed["final_eval_loss"] == uninterrupted[1]["final_eval_loss"]


def test_data_exhausted_before_last_step_fails_the_materialization(env):
    result = materialize(env, "tiny-exhausted")
    assert not result.success
    failure = [e for e in result.all_events if e.is_step_failure][0]
    text = str(failure.event_specific_data.error)
    assert "training process for tiny-exhausted failed: MaxText stopped early" in text
    log = next((env["root"] / "training" / "tiny-exhausted" / "logs").glob("*.log")).read_text()
    assert "Training stopped" in log and "MaxText stopped early" in log
    assert not (env["root"] / "training" / "tiny-exhausted" / "final").exists()


def test_preflight_refusal_blocks_training(env):
    result = materialize(env, "tiny-too-big")
    checks = check_results(result)
    assert not checks["preflight_fits"].passed
    assert "lower global_batch_size" in checks["preflight_fits"].description
    assert not result.asset_materializations_for_node("training_run")
    assert not (env["root"] / "training" / "tiny-too-big" / "checkpoints").exists()


def test_profiling_mode_extrapolates_wall_time_and_chip_hours(env):
    with dg.DagsterInstance.ephemeral() as instance:
        result = dg.materialize(
            env["assets"], partition_key="tiny-profile", instance=instance, selection=["training_plan"],
            resources=local_resources(str(env["root"])),
            run_config={"ops": {"training_plan": {"config": {"profile_steps": 6}}}},
        )
    assert result.success
    meta = result.asset_materializations_for_node("training_plan")[0].metadata
    median = meta["profile_median_step_s"].value
    assert 0 < median < 5 and meta["profile_steps"].value == 6
    assert meta["estimated_wall_hours"].value == pytest.approx(median * 61 / 3600, abs=1e-4)
    plan = json.loads((env["root"] / "training" / "tiny-profile" / "plan" / "plan.json").read_text())
    assert plan["profile"]["estimated_chip_hours"] == pytest.approx(median * 61 / 3600)
    assert not (env["root"] / ".cache" / "profile" / "training" / "tiny-profile-profile").exists()
    assert not (env["root"] / "training" / "tiny-profile" / "checkpoints").exists()  # the real run is untouched


def test_wandb_offline_logs_the_run_without_network(env, monkeypatch):
    from marin_assets_tests.train.wandb_records import history

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_PROJECT", "marin-tests")
    result = materialize(env, "tiny-wandb")
    assert result.success
    meta = result.asset_materializations_for_node("training_run")[0].metadata
    res = result_json(env, "tiny-wandb")
    run = res["wandb"]
    assert run["mode"] == "offline" and run["project"] == "marin-tests" and run["url"] is None
    assert meta["wandb"].value == f"offline run {run['id']} (project marin-tests); upload with: wandb sync {run['dir']}"
    run_dir = env["root"] / "training" / "tiny-wandb"
    assert meta["wandb_dir"].value == run["dir"] and Path(run["dir"]).parent == run_dir / "wandb"
    # MaxText logged every train step and the final eval to W&B: the same numbers as TensorBoard.
    logged = history(Path(run["dir"]))
    assert sorted(s for s, m in logged.items() if "learning/loss" in m) == list(range(11))
    for step, loss in res["loss_curve"]:
        assert logged[step]["learning/loss"] == pytest.approx(loss, rel=1e-6)
    assert logged[10]["eval/avg_loss"] == pytest.approx(res["final_eval_loss"], rel=1e-6)
    assert json.loads((run_dir / "inputs.json").read_text())["wandb_run_id"] == run["id"]
