"""Dagster wiring of the HF export: `hf_export` per training run and its blocking `hf_logits_match` check.

hf_export writes `training/<run>/hf/` (train/hf_export.py) from the run's final checkpoint, with a
provenance manifest naming the checkpoint, its step and its hash. The check loads the committed
folder with the numpy HF-Llama reference (independent of MaxText) and compares its logits on the
recipe's fixed texts with MaxText's forward pass on the same checkpoint (train/checkpoint_model.py).
"""

import contextlib
import json
import tempfile
from collections.abc import Iterator

import dagster as dg
import yaml

from marin_assets.core import layout
from marin_assets.core.code_versions import versioned
from marin_assets.core.storage import Storage
from marin_assets.resources.recording import record_output
from marin_assets.resources.storage import StorageResource
from marin_assets.train import checkpoint_model, hf_export, hf_llama_numpy, hf_push
from marin_assets.train.hf_export_recipe import load_hf_export_recipe
from marin_assets.train.resources import LOCAL_PARTITIONS_METADATA
from marin_assets.train.run_result import RESULT_FILE

HF_DIR = "hf"  # training/<run>/hf/


@contextlib.contextmanager
def local_copy(storage: Storage, uri: str) -> Iterator[str]:
    """A local folder holding `uri` (itself when storage is local)."""
    if storage.is_local:
        yield uri
        return
    with tempfile.TemporaryDirectory() as folder:
        storage.fs.get(uri.rstrip("/") + "/", folder + "/", recursive=True)
        yield folder


def _load_model(st: Storage, run: str):
    result = st.read_json(layout.TRAINING, run, layout.FINAL_DIR, RESULT_FILE)
    model = checkpoint_model.CheckpointModel.load(st.uri(layout.TRAINING, run), step=result["checkpoint_step"])
    return model, result


def _publish(st: Storage, run: str, model, recipe) -> list[str]:
    """Push the committed export where the recipe says, only once its logits match MaxText's."""
    if recipe.push.hub_repo is None and recipe.push.gcs_prefix is None:
        return []
    with local_copy(st, st.require_committed(layout.TRAINING, run, HF_DIR)) as folder:
        figures = _figures(folder, model, recipe)
        if not figures["passed"]:
            raise ValueError(f"hf_export[{run}]: not published, its logits do not match MaxText's: {figures}")
        return hf_push.push_export(folder, recipe.push, f"marin_assets: export of training run {run}")


def _figures(folder: str, model, recipe) -> dict:
    rows = [[model.tokenizer.bos_id, *ids] for ids in model.tokenizer.encode(recipe.texts)]
    return hf_llama_numpy.compare_logits(folder, model.logits, rows, recipe.max_abs_diff, recipe.min_top1_agreement)


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
        st, run = storage.storage, context.partition_key
        st.require_committed(layout.TRAINING, run, layout.FINAL_DIR)
        hf_push.check_push_settings(recipe.push)  # before any work: a push without credentials is refused
        model, result = _load_model(st, run)
        keys = yaml.safe_load(st.fs.cat(f"{st.uri(layout.TRAINING, run)}/{checkpoint_model.CONFIG_FILE}"))
        with st.atomic_dir(layout.TRAINING, run, HF_DIR) as staged:
            with tempfile.TemporaryDirectory() as folder:
                with local_copy(st, keys["tokenizer_path"]) as tokenizer_dir:
                    files = hf_export.write_hf_folder(folder, keys, model.params, tokenizer_dir,
                                                      model.tokenizer.bos_id, model.tokenizer.eos_id)
                st.fs.put(folder + "/", staged.path.rstrip("/") + "/", recursive=True)
            source = {"checkpoint": result["checkpoint_uri"], "checkpoint_step": result["checkpoint_step"],
                      "checkpoint_hash": result["checkpoint_hash"], "architecture": keys.get("decoder_block", "llama2")}
            recorded = record_output(context, staged, recipe=recipe,
                                     manifest_extra={"export": source}, stats={"files": len(files), **source},
                                     extra_metadata={"hf_folder": dg.MetadataValue.path(staged.final_uri)})
        published = _publish(st, run, model, recipe)
        if not published:
            return recorded
        return dg.MaterializeResult(metadata={**recorded.metadata, "published": ", ".join(published)},
                                    data_version=recorded.data_version)

    @dg.asset_check(asset=hf_export_asset, name="hf_logits_match", blocking=True, partitions_def=partitions,
                    description="The exported folder, loaded by a numpy implementation of HF's Llama (not MaxText), "
                                "gives MaxText's logits on fixed text within recipes/hf_export.yaml's tolerances.")
    def hf_logits_match(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
        st, run = storage.storage, context.partition_key
        model, _ = _load_model(st, run)
        with local_copy(st, st.require_committed(layout.TRAINING, run, HF_DIR)) as folder:
            figures = _figures(folder, model, recipe)
        return dg.AssetCheckResult(
            passed=bool(figures["passed"]),
            description=(f"max |logit diff| {figures['max_abs_diff']:.3g} (<= {recipe.max_abs_diff}), top-1 agreement "
                         f"{figures['top1_agreement']:.4f} (>= {recipe.min_top1_agreement}) over {figures['tokens']} tokens"),
            metadata={k: v for k, v in figures.items() if k != "passed"} | {"figures": dg.MetadataValue.json(
                json.loads(json.dumps(figures)))},
        )

    return hf_export_asset, hf_logits_match
