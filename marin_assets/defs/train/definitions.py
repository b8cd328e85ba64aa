"""The training stage's Definitions, built from recipes/training/runs.yaml.

`build_defs(runs)` lets tests (and other run lists, e.g. a scaling suite) build the same assets
over their own runs.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from marin_assets.defs.train.training_assets import build_training_assets
from marin_assets.defs.train.training_checks import build_training_checks
from marin_assets.defs.train.hf_export_assets import build_hf_export_assets
from marin_assets.train.runs import TrainingRuns, load_training_runs


def build_defs(runs: TrainingRuns, baselines_dir: Path | None = None) -> dg.Definitions:
    run_spec, training_plan, training_run = build_training_assets(runs)
    hf_export, hf_logits_match = build_hf_export_assets(training_run)
    return dg.Definitions(
        assets=[run_spec, training_plan, training_run, hf_export],
        asset_checks=[*build_training_checks(training_plan, training_run, baselines_dir, runs), hf_logits_match],
    )


def build_stage_defs() -> dg.Definitions:
    """The stage over recipes/training/runs.yaml, read when the stage loads."""
    return build_defs(load_training_runs())
