"""Dagster wiring of the scaling stage, built from one scaling recipe.

scaling_run (one partition per budget x size, trained by the training stage's launcher)
  -> isoflop_fit, parametric_fit (re-materialize automatically when a run lands)
  -> scaling_predictions (target budgets)
parametric_fit -> heldout_prediction (explicit; preregistered) -> heldout_run (explicit; trains)
Training is never launched automatically: only the cheap fits carry an automation condition.
"""


import dagster as dg

from marin_assets.core.code_versions import code_version
from marin_assets.resources.recording import record_output
from marin_assets.resources.storage import StorageResource
from marin_assets.train.k8s.resource import TpuPodLauncher
from marin_assets.scaling import bootstrap, isoflop, observations, parametric, plots, results, suite
from marin_assets.scaling.heldout import build_heldout_assets
from marin_assets.scaling.isoflop import IsoflopFit
from marin_assets.scaling.outputs import GROUP, FIT_AUTOMATION, bootstrap_laws, png_metadata, train_and_record, write_png
from marin_assets.scaling.suite import ScalingRecipe, heldout_run, suite_runs, target_budgets
from marin_assets.train import maxtext_entry, run_folder, run_result
from marin_assets.train.launchers import MIXTURE_ASSET

TRAINING_FIELDS = ("mixture", "seq_len", "global_batch_size", "optimizer", "vocab_size", "eval_steps")


def build_scaling_assets(recipe: ScalingRecipe) -> list[dg.AssetsDefinition]:
    runs = suite_runs(recipe)
    by_key = {r.key: r for r in runs}
    held = heldout_run(recipe)
    name = recipe.name
    partitions = dg.StaticPartitionsDefinition([r.key for r in runs])
    mixture_dep = dg.AssetDep(MIXTURE_ASSET, partition_mapping=dg.StaticPartitionMapping({recipe.mixture: list(by_key)}))
    training_section = recipe.model_dump(mode="json", include=set(TRAINING_FIELDS))
    run_version = code_version(training_section, suite, results, maxtext_entry, run_result, run_folder)
    fit_section = recipe.fit.model_dump(mode="json")
    isoflop_version = code_version(fit_section, observations, isoflop, results, plots)
    parametric_version = code_version(fit_section, observations, parametric, bootstrap, results, plots)
    predictions_version = code_version({**fit_section, "targets": target_budgets(recipe)}, results, plots)

    @dg.asset(name="scaling_run", partitions_def=partitions, group_name=GROUP, deps=[mixture_dep],
              code_version=run_version, kinds={"maxtext"}, pool="training",
              description=f"One run of the {name} suite (partition = C<budget>__<size>): trains D = C/(6N) tokens.")
    def scaling_run(
        context: dg.AssetExecutionContext, storage: StorageResource, tpu_launcher: TpuPodLauncher
    ) -> dg.MaterializeResult:
        run = by_key[context.partition_key]
        parts = results.run_parts(name, run.key)
        return train_and_record(context, storage.storage, recipe, run, parts, run_version, tpu_launcher)

    all_runs = dg.AssetDep(scaling_run, partition_mapping=dg.AllPartitionMapping())

    @dg.asset(name="isoflop_fit", group_name=GROUP, deps=[all_runs], code_version=isoflop_version,
              automation_condition=FIT_AUTOMATION, kinds={"statsmodels"},
              description="Approach 2: per-budget parabola of loss vs ln N, minima N*(C), D*(C), power laws with CIs.")
    def isoflop_fit(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
        st = storage.storage
        obs, missing = results.observations_for(st, recipe, runs)
        fit, report = results.isoflop_report(obs, recipe)
        with st.atomic_dir(*results.output_parts(name, "fits", "isoflop")) as staged:
            staged.write_json(report, "isoflop.json")
            obs.table.to_parquet(staged.join("runs.parquet"), index=False)
            fit.minima().to_parquet(staged.join("minima.parquet"), index=False)
            path = write_png(staged, "isoflop_curves.png", png := plots.isoflop_curves(obs.table, fit))
            return record_output(
                context, staged, recipe=recipe.fit, code_version=isoflop_version,
                stats={"n_runs": len(obs.table), "n_excluded": len(obs.excluded), "n_missing": len(missing),
                       "N_opt_exponent": fit.N_law.exponent, "D_opt_exponent": fit.D_law.exponent,
                       "usable_budgets": sum(b.usable for b in fit.budgets)},
                extra_metadata={
                    "N_opt_exponent_ci": dg.MetadataValue.text(str(fit.N_law.exponent_ci)),
                    "D_opt_exponent_ci": dg.MetadataValue.text(str(fit.D_law.exponent_ci)),
                    "minima": dg.MetadataValue.md(fit.minima().to_markdown(index=False)),
                    "warnings": dg.MetadataValue.text(" | ".join(report["warnings"]) or "none"),
                    "excluded_runs": dg.MetadataValue.text(obs.exclusion_summary()),
                    **png_metadata(png, path, "isoflop_curves"),
                },
            )

    @dg.asset(name="parametric_fit", group_name=GROUP, deps=[all_runs], code_version=parametric_version,
              automation_condition=FIT_AUTOMATION, kinds={"scipy"},
              description="Approach 3: L(N, D) = E + A/N^alpha + B/D^beta (Huber-likelihood fit), bootstrap CIs.")
    def parametric_fit(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
        st = storage.storage
        obs, missing = results.observations_for(st, recipe, runs)
        fit, boot, report = results.parametric_report(obs, recipe)
        with st.atomic_dir(*results.output_parts(name, "fits", "parametric")) as staged:
            staged.write_json(report, "parametric.json")
            if boot is not None:
                boot.samples.to_parquet(staged.join("bootstrap.parquet"), index=False)
            observed = obs.table.assign(predicted=fit.law.loss(obs.table["N"], obs.table["D"]))
            observed.to_parquet(staged.join("fit_vs_observed.parquet"), index=False)
            path = write_png(staged, "fit_vs_observed.png", png := plots.fit_vs_observed(obs.table, fit.law))
            return record_output(
                context, staged, recipe=recipe.fit, code_version=parametric_version,
                stats={**fit.law.as_dict(), "n_runs": len(obs.table), "n_excluded": len(obs.excluded),
                       "n_missing": len(missing), "method": fit.method,
                       "max_abs_relative_residual": report["max_abs_relative_residual"]},
                extra_metadata={
                    "intervals": dg.MetadataValue.json(report["intervals"]),
                    "warnings": dg.MetadataValue.text(" | ".join(report["warnings"]) or "none"),
                    "excluded_runs": dg.MetadataValue.text(obs.exclusion_summary()),
                    **png_metadata(png, path, "fit_vs_observed"),
                },
            )

    @dg.asset(name="scaling_predictions", group_name=GROUP, deps=[isoflop_fit, parametric_fit],
              code_version=predictions_version, automation_condition=FIT_AUTOMATION, kinds={"python"},
              description="Compute-optimal N, D and expected loss at 10x/100x/1000x the largest fitted budget.")
    def scaling_predictions(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
        st = storage.storage
        par_parts = results.output_parts(name, "fits", "parametric")
        iso_parts = results.output_parts(name, "fits", "isoflop")
        st.require_committed(*par_parts), st.require_committed(*iso_parts)
        report = st.read_json(*par_parts, "parametric.json")
        iso = st.read_json(*iso_parts, "isoflop.json")
        law = results.law_from_report(report)
        laws = bootstrap_laws(st, par_parts)
        targets = target_budgets(recipe)
        table = results.predictions_table(law, iso, targets, laws, recipe.fit.level)
        png = plots.optimal_allocation(IsoflopFit.from_dict(iso), targets, law)
        with st.atomic_dir(*results.output_parts(name, "predictions")) as staged:
            table.to_parquet(staged.join("predictions.parquet"), index=False)
            staged.write_json({"flops_model": suite.FLOPS_MODEL, "targets": table.to_dict("records")},
                              "predictions.json")
            path = write_png(staged, "optimal_allocation.png", png)
            return record_output(
                context, staged, recipe={"targets": targets, "fit": fit_section}, code_version=predictions_version,
                extra_metadata={"predictions": dg.MetadataValue.md(table.to_markdown(index=False, floatfmt=".4g")),
                                **png_metadata(png, path, "optimal_allocation")},
            )

    assets = [scaling_run, isoflop_fit, parametric_fit, scaling_predictions]
    if held is not None:
        assets += build_heldout_assets(recipe, held, parametric_fit, run_version)
    return assets
