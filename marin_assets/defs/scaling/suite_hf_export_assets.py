"""Dagster wiring of the export of chosen scaling runs: `scaling_hf_export` and its blocking `scaling_hf_logits_match`.

recipes/hf_export.yaml's `scaling_runs.<suite>` names the runs (budget x size keys); each is a
partition, exported from the checkpoint its committed result.json names into its MaxText run
folder (`training/<suite>-<key>/hf/`) by the same code as the training stage's hf_export
(train/hf_export_run.py), and checked against the numpy HF reference the same way.
"""


import dagster as dg

from marin_assets.core import layout
from marin_assets.lineage.code_versions import versioned
from marin_assets.core.storage import Storage
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.scaling import results
from marin_assets.scaling.outputs import GROUP
from marin_assets.scaling.result_paths import RESULT_FILE
from marin_assets.train import hf_export_run
from marin_assets.train.hf_export_recipe import HF_EXPORT_RECIPE, load_hf_export_recipe


def scaling_run_source(st: Storage, suite: str, key: str) -> hf_export_run.ExportSource:
    """The checkpoint a committed suite run trained, and its MaxText run folder."""
    parts = results.run_parts(suite, key)
    st.require_committed(*parts)
    result = st.read_json(*parts, RESULT_FILE)
    uri = result["checkpoint_uri"].rstrip("/")
    return hf_export_run.ExportSource(f"scaling run {suite}/{key}", (layout.TRAINING, result["training_run"]),
                                      uri, int(uri.rsplit("/", 1)[1]), result["checkpoint_hash"])


def chosen_runs(suite: str, keys: list[str]) -> list[str]:
    """The suite's runs the recipe names; an unknown key is refused, naming the recipe field."""
    chosen = load_hf_export_recipe().scaling_runs.get(suite, [])
    unknown = [k for k in chosen if k not in keys]
    if unknown:
        raise ValueError(f"{HF_EXPORT_RECIPE}: scaling_runs.{suite}: {unknown} are not runs of suite {suite!r}; "
                         f"its runs: {sorted(keys)}")
    return chosen


def build_scaling_hf_export(suite: str, scaling_run: dg.AssetsDefinition, keys: list[str]) -> list:
    """[scaling_hf_export, its check] when the recipe names runs of this suite, else []."""
    chosen = chosen_runs(suite, keys)
    if not chosen:
        return []
    recipe = load_hf_export_recipe()
    partitions = dg.StaticPartitionsDefinition(chosen)
    run_dep = dg.AssetDep(scaling_run, partition_mapping=dg.StaticPartitionMapping({k: k for k in chosen}))

    @versioned(recipe)
    @dg.asset(name="scaling_hf_export", partitions_def=partitions, group_name=GROUP, deps=[run_dep],
              kinds={"huggingface"},
              description=f"Chosen runs of the {suite} suite in the Hugging Face layout (recipes/hf_export.yaml "
                          "scaling_runs); manifest names the checkpoint hash it came from.")
    def scaling_hf_export(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
        st = storage.storage
        return hf_export_run.export(context, st, scaling_run_source(st, suite, context.partition_key), recipe)

    @dg.asset_check(asset=scaling_hf_export, name="scaling_hf_logits_match", blocking=True,
                    partitions_def=partitions,
                    description="The exported folder, loaded by a numpy HF Llama/Mixtral (not MaxText), gives "
                                "MaxText's logits on fixed text within recipes/hf_export.yaml's tolerances.")
    def scaling_hf_logits_match(context: dg.AssetCheckExecutionContext, storage: StorageResource
                                ) -> dg.AssetCheckResult:
        st = storage.storage
        return hf_export_run.check_result(st, scaling_run_source(st, suite, context.partition_key), recipe)

    return [scaling_hf_export, scaling_hf_logits_match]
