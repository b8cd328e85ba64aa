"""A TPU run's folder lives on gs://: the orchestrator reads its TensorBoard events, checkpoints and
config there and commits the final folder there (against the GCS emulator, a real GCS JSON API)."""

import json
from dataclasses import dataclass

import pytest
import yaml

from marin_assets.core.storage import Storage
from marin_assets.train.checkpoints import latest_checkpoint_step
from marin_assets.train.k8s.training import maxtext_yaml_text
from marin_assets.train.run_folder import plan_run, run_paths
from marin_assets.train.run_result import collect_result
from marin_assets.train.maxtext_config import maxtext_keys
from marin_assets.train.metrics import read_scalars, series
from marin_assets.train.report import write_result_files
from marin_assets.train.runs import TrainingRunSpec
from marin_assets_tests.gcs_emulator import gcs_emulator  # noqa: F401  (fixture)

STEPS = 4


@dataclass(frozen=True)
class Mixture:
    train_glob: str = "gs://marin-test/mixtures/tiny/train/*.parquet"
    validation_glob: str = "gs://marin-test/mixtures/tiny/validation/*.parquet"
    tokenizer_uri: str = "gs://marin-test/tokenizers/tiny"
    tokenizer_vocab_size: int = 512


def _write_attempt(folder, suffix: str, losses: dict[int, float], final_eval: tuple[float, float] | None) -> None:
    """One MaxText attempt's event file, as MaxText writes it (tensorboardX SummaryWriter)."""
    from tensorboardX import SummaryWriter

    writer = SummaryWriter(str(folder), filename_suffix=suffix)
    for step, loss in losses.items():
        writer.add_scalar("learning/loss", loss, step)
        writer.add_scalar("perf/per_device_tokens_per_sec", 1000.0 + step, step)
    if final_eval:
        writer.add_scalar("eval/avg_loss", final_eval[0], STEPS - 1)
        writer.add_scalar("eval/total_weights", final_eval[1], STEPS - 1)
    writer.close()


def test_orchestrator_reads_and_commits_a_gs_run_folder(gcs_emulator, tmp_path):
    storage = Storage(gcs_emulator.root())
    spec = TrainingRunSpec(run_name="tpu-run", model="tiny-0.2m", mixture="tiny", budget={"steps": STEPS})
    paths = run_paths(storage, spec)
    assert paths.run_dir.startswith("gs://")
    fs = storage.fs

    # What the slice leaves on gs://: its config (written by the launcher), two attempts' events
    # (interrupted at step 1, resumed: the second rewrites step 1), and complete checkpoints.
    text = maxtext_yaml_text(maxtext_keys(spec, Mixture(), paths))
    fs.pipe(f"{paths.run_dir}/maxtext.yml", text.encode())
    events = tmp_path / "tensorboard" / spec.run_name
    _write_attempt(events, ".a", {0: 6.0, 1: 5.5}, None)
    _write_attempt(events, ".b", {1: 5.25, 2: 5.0, 3: 4.5}, (4.75, 2048.0))
    fs.put(str(tmp_path / "tensorboard"), paths.run_dir, recursive=True)
    for step in (0, 3):
        fs.pipe(f"{paths.checkpoints_dir}/{step}/_CHECKPOINT_METADATA", b"{}")
    fs.pipe(f"{paths.checkpoints_dir}/4.orbax-checkpoint-tmp-1/x", b"")  # a save cut short

    assert series(read_scalars(paths.tensorboard_dir), "learning/loss") == [(0, 6.0), (1, 5.25), (2, 5.0), (3, 4.5)]
    assert read_scalars(f"{paths.run_dir}/missing") == {}
    assert latest_checkpoint_step(paths.checkpoints_dir) == 3

    summary = {"checkpoint_step": 3, "checkpoint_hash": "ab" * 32, "wandb": None}
    result = collect_result(spec, paths, plan_run(spec, Mixture()), summary, f"{paths.run_dir}/maxtext.yml", 1.0, 1)
    assert result.final_eval_loss == pytest.approx(4.75) and result.eval_tokens == 2048.0
    assert result.tokens_per_s == pytest.approx(1002.0)   # median after the compile step
    assert result.checkpoint_uri == f"{paths.checkpoints_dir}/3"

    with storage.atomic_dir("training", spec.run_name, "final") as staged:
        png = write_result_files(staged, result, "tpu-run")
    assert storage.is_committed("training", spec.run_name, "final")
    assert storage.list_files("training", spec.run_name, "final") == ["loss_curve.png", "maxtext.yml", "result.json"]
    final = storage.committed_uri("training", spec.run_name, "final")  # the version the pointer names
    assert fs.cat(f"{final}/maxtext.yml").decode() == text
    assert yaml.safe_load(text)["base_output_directory"] == storage.uri("training")
    assert fs.cat(f"{final}/loss_curve.png") == png and png.startswith(b"\x89PNG")
    assert json.loads(fs.cat(f"{final}/result.json"))["loss_curve"][-1] == [3, 4.5]
