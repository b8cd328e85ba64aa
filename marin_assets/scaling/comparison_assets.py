"""Dagster wiring of `scaling_comparison`: this suite against the suite its recipe names in `compare_with`.

Both suites' committed runs are read from storage (scaling/<suite>/runs/); the dense law is fitted to
the other suite's runs with its own fit settings. Built only for a recipe with `compare_with`.
"""

import dagster as dg

from marin_assets.core.code_versions import versioned
from marin_assets.resources.metadata_tables import metadata_table
from marin_assets.resources.recording import record_output
from marin_assets.resources.storage import StorageResource
from marin_assets.scaling import comparison, parametric, result_paths, suite_observations, validation
from marin_assets.scaling.outputs import GROUP, png_metadata, write_png
from marin_assets.scaling.suite import ScalingRecipe, load_scaling_recipe, suite_runs


def build_comparison_asset(recipe: ScalingRecipe, runs_dep) -> dg.AssetsDefinition:
    other = load_scaling_recipe(recipe.compare_with)
    section = {"suite": recipe.name, "compare_with": other.model_dump(mode="json"), "fit": recipe.fit.model_dump(mode="json")}

    @versioned(section)
    @dg.asset(name="scaling_comparison", group_name=GROUP, deps=[runs_dep], kinds={"scipy"},
              description=f"{recipe.name} against {other.name} at equal training compute: best loss per budget and "
                          "the effective parameter multiplier (N_eff of the other suite's law / N active).")
    def scaling_comparison(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
        st = storage.storage
        base_obs, base_missing = suite_observations.observations_for(st, other, suite_runs(other))
        obs, missing = suite_observations.observations_for(st, recipe, suite_runs(recipe))
        if base_obs.table.empty or obs.table.empty:
            raise dg.Failure(f"scaling_comparison needs trained runs of both suites: {other.name} has "
                             f"{len(base_obs.table)}, {recipe.name} has {len(obs.table)}")
        table, fit = base_obs.table, other.fit  # the other suite's own law form and fit settings, no bootstrap
        base_law = parametric.fit_parametric(table["N"], table["D"], table["loss"], method=fit.method, delta=fit.delta,
                                             law=fit.law, covariates=validation.covariates_of(table, fit.law)).law
        report = comparison.compare(base_obs.table, obs.table, base_law)
        report.update({"suite": recipe.name, "compared_with": other.name,
                       "missing": {other.name: base_missing, recipe.name: missing}})
        with st.atomic_dir(*result_paths.output_parts(recipe.name, "comparison")) as staged:
            staged.write_json(report, "comparison.json")
            png = comparison.comparison_plot_png(base_obs.table, obs.table, f"{recipe.name} vs {other.name}")
            path = write_png(staged, "loss_vs_compute.png", png)
            multiplier = report["effective_parameter_multiplier"]
            return record_output(
                context, staged, recipe=recipe,
                stats={"effective_parameter_multiplier": multiplier if multiplier is not None else "none",
                       "n_runs": len(obs.table), "n_runs_compared_with": len(base_obs.table)},
                extra_metadata={
                    "loss_at_equal_compute": metadata_table(report["budgets"]),
                    "runs": metadata_table(report["runs"]),
                    "unreachable_runs": dg.MetadataValue.text(", ".join(report["unreachable"]) or "none"),
                    **png_metadata(png, path, "loss_vs_compute"),
                },
            )

    return scaling_comparison
