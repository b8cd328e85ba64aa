"""Dagster wiring of the HF export: `hf_export` per training run and its blocking `hf_logits_match` check.

hf_export writes `training/<run>/hf/` (train/hf_export_run.py) from the run's final checkpoint, with
a provenance manifest naming the checkpoint, its step and its hash. The check loads the committed
folder with the numpy HF reference of its model_type (Llama or Mixtral, independent of MaxText) and
compares its logits on the recipe's fixed texts with MaxText's forward pass on the same checkpoint
(train/checkpoint_model.py).
"""

import dagster as dg

from marin_assets.core import layout
from marin_assets.lineage.code_versions import versioned
from marin_assets.core.storage import Storage
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.train import hf_export_run
from marin_assets.train.hf_export_recipe import load_hf_export_recipe
from marin_assets.train.hardware import LOCAL_PARTITIONS_METADATA
from marin_assets.train.run_result import RESULT_FILE

HF_DIR = hf_export_run.HF_DIR  # training/<run>/hf/


def training_run_source(st: Storage, run: str) -> hf_export_run.ExportSource:
    """A training run's final checkpoint, as its committed result.json names it."""
    st.require_committed(layout.TRAINING, run, layout.FINAL_DIR)
    result = st.read_json(layout.TRAINING, run, layout.FINAL_DIR, RESULT_FILE)
    return hf_export_run.ExportSource(f"training run {run}", (layout.TRAINING, run), result["checkpoint_uri"],
                                      result["checkpoint_step"], result["checkpoint_hash"])


def build_hf_export_assets(training_run: dg.AssetsDefinition) -> tuple[dg.AssetsDefinition, dg.AssetChecksDefinition]:
    partitions = training_run.partitions_def
    recipe = load_hf_export_recipe()
    # materialize-all on a workstation exports the runs it can train (the others have no checkpoint here)
    local_runs = (training_run.metadata_by_key.get(training_run.key) or {}).get(LOCAL_PARTITIONS_METADATA)

    @versioned(recipe)
    @dg.asset(name="hf_export", partitions_def=partitions, group_name="train", deps=[training_run],
              kinds={"huggingface"},
              metadata={LOCAL_PARTITIONS_METADATA: local_runs} if local_runs is not None else None,
              description="The run's final checkpoint in the Hugging Face layout (config.json, safetensors, "
                          "tokenizer, generation config); manifest names the checkpoint hash it came from.")
    def hf_export_asset(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
        st = storage.storage
        return hf_export_run.export(context, st, training_run_source(st, context.partition_key), recipe)

    @dg.asset_check(asset=hf_export_asset, name="hf_logits_match", blocking=True, partitions_def=partitions,
                    description="The exported folder, loaded by a numpy implementation of HF's Llama or "
                                "Mixtral (not MaxText), gives MaxText's logits on fixed text within "
                                "recipes/hf_export.yaml's tolerances.")
    def hf_logits_match(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
        st = storage.storage
        return hf_export_run.check_result(st, training_run_source(st, context.partition_key), recipe)

    return hf_export_asset, hf_logits_match
