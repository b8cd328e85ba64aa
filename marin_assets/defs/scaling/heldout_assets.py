"""The preregistered held-out run (Delphi-style): predict its loss from the fit, record the
prediction with a timestamp and the fit's data version, and only then train it.

heldout_prediction refuses to run once the held-out run it predicts exists (a prediction made after
seeing the answer is not a prediction; a folder holding a previous recipe's held-out run does not
count); heldout_run refuses to train without a committed prediction. Neither has an automation
condition: both are materialized explicitly.
"""


import datetime as dt

import dagster as dg

from marin_assets.lineage.code_versions import versioned
from marin_assets.data.sources.licenses import require_mixture_cleared
from marin_assets.lineage.recording import record_output
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.train.k8s.resource import TpuPodLauncher
from marin_assets.scaling import bootstrap, result_paths, results
from marin_assets.scaling.fit_metric import DEFAULT_METRIC
from marin_assets.scaling.outputs import GROUP, bootstrap_laws, train_and_record
from marin_assets.scaling.suite import ScalingRecipe, SuiteRun
from marin_assets.train.launchers import EVAL_SETS_DEP, MIXTURE_ASSET

PREDICTION_FILE = "prediction.json"


class PreregistrationError(RuntimeError):
    pass


def prediction_parts(suite: str) -> tuple[str, ...]:
    return result_paths.output_parts(suite, "heldout", "prediction")


def heldout_run_parts(suite: str) -> tuple[str, ...]:
    return result_paths.output_parts(suite, "heldout", "run")


def prediction_mismatch(prediction: dict, key: str, metric: str) -> str | None:
    """Why a committed prediction is not the one for this held-out run and fit metric (None: it is)."""
    if prediction.get("run") != key:
        return f"the committed prediction is for run {prediction.get('run')!r}, not {key!r}"
    predicted_metric = prediction.get("metric", DEFAULT_METRIC)  # predictions before the field: the default
    if predicted_metric != metric:
        return f"the committed prediction is of {predicted_metric!r}, the fit's metric is {metric!r}"
    return None


def _trained_heldout_key(st, suite: str) -> str | None:
    """Which held-out run the committed folder holds; a recipe may since have named another one."""
    if not st.is_committed(*heldout_run_parts(suite)):
        return None
    return st.read_json(*heldout_run_parts(suite), result_paths.RESULT_FILE).get("run")


def build_heldout_assets(recipe: ScalingRecipe, held: SuiteRun, parametric_fit, training_section: dict):
    name = recipe.name

    @versioned({"heldout": held.describe(), "level": recipe.fit.level})
    @dg.asset(name="heldout_prediction", group_name=GROUP, deps=[parametric_fit],
              kinds={"python"},
              description=f"Preregistered loss prediction for the held-out run {held.key}, made before it is trained.")
    def heldout_prediction(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
        st = storage.storage
        if _trained_heldout_key(st, name) == held.key:
            raise PreregistrationError(
                f"the held-out run {held.key} is already trained ({st.uri(*heldout_run_parts(name))}); a prediction "
                "made now would not be preregistered. Delete that folder (and retrain) to preregister again."
            )
        fit_parts = result_paths.output_parts(name, "fits", "parametric")
        st.require_committed(*fit_parts)
        report = st.read_json(*fit_parts, "parametric.json")
        law = results.law_from_report(report)
        laws = bootstrap_laws(st, fit_parts, report)
        predicted = float(law.loss(held.N, held.D))
        interval = bootstrap.percentile_interval([m.loss(held.N, held.D) for m in laws], recipe.fit.level)
        prediction = {
            **held.describe(), "metric": recipe.fit.metric, "predicted_loss": predicted, "interval": list(interval),
            "level": recipe.fit.level,
            "registered_at": dt.datetime.now(dt.UTC).isoformat(),
            "parametric_fit_data_version": st.content_hash(*fit_parts),
            "fit_runs": report["n_runs"], "law": law.as_dict(),
        }
        with st.atomic_dir(*prediction_parts(name)) as staged:
            staged.write_json(prediction, PREDICTION_FILE)
            return record_output(
                context, staged, recipe=held.describe(),
                stats={"predicted_loss": predicted, "registered_at": prediction["registered_at"],
                       "parametric_fit_data_version": prediction["parametric_fit_data_version"]},
                extra_metadata={"interval": dg.MetadataValue.text(f"{interval[0]:.4f} .. {interval[1]:.4f}")},
            )

    mixture_dep = dg.AssetDep(MIXTURE_ASSET, partition_mapping=dg.SpecificPartitionsPartitionMapping([recipe.mixture]))

    @versioned(training_section)  # the suite's runs' training section: trained like them
    @dg.asset(name="heldout_run", group_name=GROUP, deps=[heldout_prediction, mixture_dep, EVAL_SETS_DEP],
              kinds={"maxtext"}, pool="training",
              description=f"The held-out run {held.key} (N={held.N:,}, D={held.D:,}); trains only when materialized.")
    def heldout_run(
        context: dg.AssetExecutionContext, storage: StorageResource, tpu_launcher: TpuPodLauncher
    ) -> dg.MaterializeResult:
        st = storage.storage
        require_mixture_cleared(st, f"heldout_run[{held.key}]", recipe.mixture)
        st.require_committed(*prediction_parts(name))
        committed = st.read_json(*prediction_parts(name), PREDICTION_FILE)
        problem = prediction_mismatch(committed, held.key, recipe.fit.metric)
        if problem:
            raise PreregistrationError(f"heldout_run {held.key}: {problem}; materialize heldout_prediction again "
                                       "(before this run trains) to preregister it")
        return train_and_record(context, st, recipe, held, heldout_run_parts(name), tpu_launcher)

    return [heldout_prediction, heldout_run]
