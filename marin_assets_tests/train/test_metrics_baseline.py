"""Pure pieces around a run: log-line parsing, TensorBoard reading, checkpoint detection, baselines."""

import json
from pathlib import Path

import pytest

from marin_assets.train.baseline import compare, format_baseline, load_baseline
from marin_assets.train.checkpoints import checkpoint_steps, latest_checkpoint_step
from marin_assets.train.metrics import EvalMetric, StepMetric, parse_line, read_scalars, series

BASELINES = Path(__file__).parent / "baselines"


def test_parse_maxtext_lines():
    step = parse_line("I1130 completed step: 20, seconds: 0.020, TFLOP/s/device: 0.033, Tokens/s/device: 26028.163, "
                      "total_weights: 508, loss: 5.594, lm_loss: 5.594, perplexity: 268.794")
    assert step == StepMetric(step=20, loss=5.594, seconds=0.02, tflops_per_s=0.033, tokens_per_s=26028.163)
    ev = parse_line("Completed eval after train step 20, loss=6.414, perplexity=610.041, total_weights=367540.0, avg_z_loss=0.000")
    assert ev == EvalMetric(step=20, loss=6.414, tokens=367540.0)
    assert parse_line("Training stopped: You may have run out of training data.") == "You may have run out of training data."
    assert parse_line("Config param steps: 21") is None


def test_read_tensorboard_without_tensorflow_merges_attempts(tmp_path):
    from tensorboardX import SummaryWriter

    first = tmp_path / "tb" / "run"
    w = SummaryWriter(str(first), filename_suffix=".a")
    for s, v in [(0, 5.0), (1, 4.0), (2, 3.5)]:
        w.add_scalar("learning/loss", v, s)
    w.close()
    w = SummaryWriter(str(first), filename_suffix=".b")  # a resumed attempt rewrites step 2
    for s, v in [(2, 3.4), (3, 3.0)]:
        w.add_scalar("learning/loss", v, s)
    w.close()
    loss = series(read_scalars(str(tmp_path / "tb")), "learning/loss")
    assert [s for s, _ in loss] == [0, 1, 2, 3]
    assert loss[3][1] == pytest.approx(3.0)


def test_only_complete_checkpoints_count(tmp_path):
    ckpt = tmp_path / "checkpoints"
    for step in (0, 10):
        (ckpt / str(step)).mkdir(parents=True)
        (ckpt / str(step) / "_CHECKPOINT_METADATA").write_text("{}")
    (ckpt / "20.orbax-checkpoint-tmp-123").mkdir()  # killed mid-save
    (ckpt / "30").mkdir()                            # no metadata yet
    assert checkpoint_steps(str(ckpt)) == [0, 10]
    assert latest_checkpoint_step(str(ckpt)) == 10
    assert latest_checkpoint_step(str(tmp_path / "missing")) is None


def test_committed_baseline_compares_and_detects_a_numerics_change():
    baseline = load_baseline("tiny-fixture", BASELINES)
    curve = [tuple(p) for p in baseline["loss_curve"]]
    same = compare(curve, baseline["final_eval_loss"], baseline)
    assert same.passed and same.max_abs_diff == 0 and same.compared_steps == 61
    broken = [(s, v + (0.2 if s > 30 else 0.0)) for s, v in curve]  # e.g. a changed LR schedule
    result = compare(broken, baseline["final_eval_loss"], baseline)
    assert not result.passed and "step 31" in result.message
    short = compare(curve[:40], baseline["final_eval_loss"], baseline)
    assert not short.passed and "missing" in short.message
    assert json.loads(format_baseline(baseline)) == baseline


def test_resuming_a_run_folder_with_a_different_config_is_refused(tmp_path):
    import dagster as dg

    from marin_assets.core.storage import Storage
    from marin_assets.train.local_launcher import TrainingError, _input_identity, launch_local
    from marin_assets.train.run_folder import IDENTITY_FILE, run_paths
    from marin_assets.train.maxtext_config import maxtext_keys, write_maxtext_yaml
    from marin_assets.train.runs import TrainingRunSpec
    from marin_assets_tests.train.mixture_fixture import build_mixture

    mixture = build_mixture(tmp_path, train_docs=20, validation_docs=5)
    storage = Storage(str(tmp_path))
    old = TrainingRunSpec(run_name="r", model="tiny-0.2m", mixture="tiny", budget={"steps": 21})
    paths = run_paths(storage, old)
    write_maxtext_yaml(maxtext_keys(old, mixture, paths), f"{paths.run_dir}/maxtext.yml")
    (Path(paths.checkpoints_dir) / "10").mkdir(parents=True)
    (Path(paths.checkpoints_dir) / "10" / "_CHECKPOINT_METADATA").write_text("{}")
    # An interrupted run on the same mixture: the only case that resumes, so the config is compared.
    identity = _input_identity(storage, old, mixture)
    (Path(paths.run_dir) / IDENTITY_FILE).write_text(json.dumps({"mixture": identity}))
    longer = old.model_copy(update={"budget": old.budget.model_copy(update={"steps": 41})})
    with pytest.raises(TrainingError, match=r"different config \(keys \[.*'learning_rate_schedule_steps', 'steps'\]\)"):
        launch_local(dg.build_asset_context(), longer, storage, mixture)


def test_a_run_set_aside_to_start_over_keeps_its_committed_plan(tmp_path):
    from marin_assets.train.local_launcher import set_aside

    run_dir = tmp_path / "training" / "tiny"
    for part in ("plan", "final", "checkpoints/60", "logs"):
        (run_dir / part).mkdir(parents=True)
    (run_dir / "plan" / "_COMMITTED").write_text("")
    (run_dir / "final" / "_COMMITTED").write_text("")
    (run_dir / "inputs.json").write_text("{}")

    aside = Path(set_aside(str(run_dir)))
    assert aside.parent == run_dir.parent and aside.name.startswith("tiny.superseded-")
    assert sorted(p.name for p in run_dir.iterdir()) == ["plan"]  # training_plan's output is still valid
    assert (run_dir / "plan" / "_COMMITTED").exists()
    assert sorted(p.name for p in aside.iterdir()) == ["checkpoints", "final", "inputs.json", "logs"]
