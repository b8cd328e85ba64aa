"""What the UI test needs to show plots without training models.

training_run: its metadata exactly as the asset reports it (train/report.py, with record_output's
plots first, each full plot then its preview), for a runless materialization (training for real is the train stage's
e2e test). parametric_fit: a scaling suite
recipe small enough to fit in seconds, and its runs' results written straight into storage, so the
UI materializes the real fit asset.
"""

from __future__ import annotations

from pathlib import Path


SCALING_PLOT_ASSET = "parametric_fit"
SCALING_PLOT_KEY = "fit_vs_observed"  # scaling/outputs.png_metadata(title=...)
TRAINING_PLOT_ASSET = "training_run"


def training_run_metadata() -> tuple[str, dict]:
    """(metadata key of the plot, metadata) exactly as the training_run asset reports them."""
    from marin_assets.lineage.recording import plot_previews
    from marin_assets.train.run_result import TrainingResult
    from marin_assets.train.report import loss_plot_png, result_metadata

    curve = [(step, 5.6 * 0.93**step + 2.1) for step in range(0, 61, 5)]
    result = TrainingResult(
        final_eval_loss=2.31, eval_tokens=40960, loss_curve=curve, eval_curve=[(30, 2.6), (60, 2.31)],
        tokens_per_s=5100.0, tflops_per_device=0.01, checkpoint_uri="/storage/training/ui/checkpoints/60",
        checkpoint_step=60, checkpoint_hash="0" * 64, num_params=200_000, flops_per_token=1.2e6, wall_s=41.0,
        run_dir="/storage/training/ui", maxtext_config_path="/storage/training/ui/maxtext.yml",
        tensorboard_dir="/storage/training/ui/tensorboard",
    )
    png = loss_plot_png(result, "ui-test (tiny-0.2m on tiny)")
    metadata = result_metadata(result, png, "/storage/training/ui/final/loss_curve.png")
    return "loss_curve_plot", {**plot_previews(metadata), **metadata}  # record_output's order: plots first


def write_scaling_suite(recipe_path: Path, storage_root: Path) -> Path:
    """A small suite recipe for the server ($MARIN_SCALING_RECIPE) plus a result for each of its runs."""
    import yaml

    from marin_assets.core.storage import Storage
    from marin_assets.scaling.suite import suite_runs
    from marin_assets_tests.scaling.suite_fixture import fixture_recipe, synthetic_loss, write_result

    recipe = fixture_recipe(mixture="sample")  # the shipped mixture: the merged graph maps onto its partition
    recipe_path.write_text(yaml.safe_dump(recipe.model_dump(mode="json")))
    for run in suite_runs(recipe):
        write_result(Storage(str(storage_root)), recipe.name, run, synthetic_loss(run))
    return recipe_path
