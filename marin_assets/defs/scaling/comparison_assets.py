"""Dagster wiring of `scaling_comparison`: this suite against the suite its recipe names in `compare_with`.

Both suites' committed runs are read from storage (scaling/<suite>/runs/); each suite's law is fitted
to its own runs with its own fit settings (the other suite's with its bootstrap, for the multiplier's
interval). Built only for a recipe with `compare_with`.
"""

import dagster as dg

from marin_assets.lineage.code_versions import versioned
from marin_assets.core.metadata_tables import metadata_table, round_sig
from marin_assets.lineage.recording import record_output
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.scaling import comparison, comparison_plot, result_paths, suite_observations, validation
from marin_assets.scaling.outputs import GROUP, png_metadata, write_png
from marin_assets.scaling.suite import ScalingRecipe, load_scaling_recipe, suite_runs


def _train_hint(recipe_path: str | None) -> str:
    path = recipe_path or "<this suite's recipe>"
    return f"train it with `MARIN_SCALING_RECIPE={path} marin materialize-all`"


def _multiplier_text(report: dict) -> str:
    k = report["effective_parameter_multiplier"]
    if k is None:
        return f"none: {report['multiplier_problem']}"
    interval = report["multiplier_interval"]
    if interval is None:
        return f"{k:.4g} (no bootstrap interval)"
    return f"{k:.4g} ({report['level']:.0%} interval {interval[0]:.4g} .. {interval[1]:.4g})"


def build_comparison_asset(recipe: ScalingRecipe, runs_dep) -> dg.AssetsDefinition:
    other = load_scaling_recipe(recipe.compare_with)
    section = {"suite": recipe.name, "compare_with": other.model_dump(mode="json"), "fit": recipe.fit.model_dump(mode="json")}

    @versioned(section)
    @dg.asset(name="scaling_comparison", group_name=GROUP, deps=[runs_dep], kinds={"scipy"},
              description=f"{recipe.name} against {other.name} at equal training compute: best loss per budget, each "
                          "suite's fitted frontier, and the effective parameter multiplier k (the other suite's law "
                          "at k N_active, D fitted to this suite's runs) with its bootstrap interval.")
    def scaling_comparison(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
        st = storage.storage
        base_obs, base_missing = suite_observations.observations_for(st, other, suite_runs(other))
        obs, missing = suite_observations.observations_for(st, recipe, suite_runs(recipe))
        for suite, o, hint in ((other, base_obs, _train_hint(recipe.compare_with)), (recipe, obs, _train_hint(None))):
            if o.table.empty:
                raise dg.Failure(f"scaling_comparison needs trained runs of both {other.name} and {recipe.name}: "
                                 f"{suite.name} has none in {st.root_uri} ({o.exclusion_summary()}); {hint}")
        base_table, table = base_obs.table, obs.table
        dense_law = comparison.suite_law(other.name, base_table, other.fit,
                                         validation.covariates_of(base_table, other.fit.law), other.fit.bootstrap)
        moe_law = comparison.suite_law(recipe.name, table, recipe.fit, validation.covariates_of(table, recipe.fit.law))
        report = comparison.compare(base_table, table, dense_law, moe_law, seed=other.fit.seed, level=other.fit.level,
                                    delta=other.fit.delta)
        report.update({"suite": recipe.name, "compared_with": other.name,
                       "missing": {other.name: base_missing, recipe.name: missing},
                       "warnings": [*base_obs.warnings, *obs.warnings]})
        if report["multiplier_problem"]:
            context.log.warning(f"scaling_comparison: no effective parameter multiplier: {report['multiplier_problem']}")
        with st.atomic_dir(*result_paths.output_parts(recipe.name, "comparison")) as staged:
            staged.write_json(report, "comparison.json")
            png = comparison_plot.comparison_plot_png(base_table, table, f"{recipe.name} vs {other.name}",
                                                      dense_law.law, moe_law.law)
            path = write_png(staged, "loss_vs_compute.png", png)
            k = report["effective_parameter_multiplier"]
            interval = report["multiplier_interval"] or [None, None]
            return record_output(
                context, staged, recipe=recipe,
                stats={"effective_parameter_multiplier": round_sig(k) if k is not None else "none",
                       "multiplier_lo": round_sig(interval[0]) if interval[0] is not None else "none",
                       "multiplier_hi": round_sig(interval[1]) if interval[1] is not None else "none",
                       "n_runs": len(table), "n_runs_compared_with": len(base_table)},
                extra_metadata={
                    "multiplier": dg.MetadataValue.text(_multiplier_text(report)),
                    "loss_at_equal_compute": metadata_table(report["budgets"]),
                    "runs": metadata_table(report["runs"]) if report["runs"] else dg.MetadataValue.text("none"),
                    "unreachable_runs": dg.MetadataValue.text(", ".join(report["unreachable"]) or "none"),
                    "moe_law_problem": dg.MetadataValue.text(report["moe_law_problem"] or "none"),
                    "notes": dg.MetadataValue.text(" | ".join(report["notes"] + report["warnings"]) or "none"),
                    **png_metadata(png, path, "loss_vs_compute"),
                },
            )

    return scaling_comparison
