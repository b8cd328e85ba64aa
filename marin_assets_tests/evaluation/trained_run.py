"""One tiny training run for the evaluation tests, trained for real through the training stage's Dagster assets.

The run folder (maxtext.yml, checkpoints/, final/result.json) is what every evaluation test reads;
training it costs ~1 minute on 2 cores, so tests share it (module- or session-scoped fixtures).
"""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg

from marin_assets.defs.train.definitions import build_defs
from marin_assets.train.runs import TrainingRuns
from marin_assets_tests.local_resources import local_resources
from marin_assets_tests.train.mixture_fixture import build_mixture

RUN = "tiny-eval"
SPEC = {"model": "tiny-0.2m", "mixture": "tiny", "budget": {"steps": 40}, "checkpoint": {"period": 20},
        "log_period": 10, "resources": {"accelerator": "cpu", "memory_gib": 4}}


def train_tiny_run(root: Path) -> Path:
    """Train RUN on the fixture mixture under `root`; return its run folder."""
    build_mixture(root)
    defs = build_defs(TrainingRuns(runs={RUN: SPEC}), baselines_dir=root / "baselines")
    mixture = dg.AssetSpec("mixture", partitions_def=dg.StaticPartitionsDefinition(["tiny"]))
    assets = [defs.get_assets_def("training_plan"), defs.get_assets_def("training_run"), mixture]
    with dg.DagsterInstance.ephemeral() as instance:
        result = dg.materialize(assets, partition_key=RUN, instance=instance, raise_on_error=True,
                                resources=local_resources(str(root)), selection=["training_plan", "training_run"])
    assert result.success
    return root / "training" / RUN


def final_result(run_dir: Path) -> dict:
    return json.loads((run_dir / "final" / "result.json").read_text())
