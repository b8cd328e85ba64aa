"""Dagster wiring of the fits, shared by a trained suite and an external table of runs:

runs (scaling_run partitions, or external_runs) -> isoflop_fit, parametric_fit -> scaling_predictions

`observations(storage)` says where the runs come from; everything after is the same code, so an
external suite is fitted, plotted, validated (leave-one-budget-out) and predicted like a trained one.
"""


from collections.abc import Callable
from types import ModuleType

import dagster as dg
import pandas as pd

from marin_assets.lineage.code_versions import versioned
from marin_assets.core.line_preview import preview_key
from marin_assets.core.metadata_tables import metadata_table, round_sig
from marin_assets.lineage.recording import record_output
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.scaling import laws, observations, plots, result_paths, results, validation
from marin_assets.scaling.isoflop import IsoflopFit
from marin_assets.scaling.outputs import FIT_AUTOMATION, GROUP, bootstrap_laws, png_metadata, write_png
from marin_assets.scaling.fit_settings import FLOPS_MODEL, FitSettings


def _md(records: list[dict], floatfmt: str = ".4g") -> str:
    return pd.DataFrame(records).to_markdown(index=False, floatfmt=floatfmt) if records else "none"


def build_fit_assets(
    name: str, fit: FitSettings, runs_dep, observations_of: Callable, targets_of: Callable[[dict], list[float]],
    targets_section, key_prefix: list[str] | None = None, reader: ModuleType = observations,
    extra_deps: tuple = (),
    isoflop_approach: bool = True,
) -> list[dg.AssetsDefinition]:
    """`reader`: the pure module whose code `observations_of` runs (part of the fits' versions); `extra_deps`:
    more upstream assets the fitted metric comes from (the suite's downstream evaluation); `isoflop_approach`
    False: no Approach 2 asset (a table that is not an isoFLOP grid), and `targets_of` receives the runs'
    budgets in the isoFLOP report's shape."""
    fit_section = fit.model_dump(mode="json")
    prefix = {"key_prefix": key_prefix} if key_prefix else {}

    @versioned(fit_section)
    @dg.asset(name="isoflop_fit", group_name=GROUP, deps=[runs_dep, *extra_deps],
              automation_condition=FIT_AUTOMATION, kinds={"statsmodels"}, **prefix,
              description="Approach 2: per-budget parabola of loss vs ln N, minima N*(C), D*(C) and L*(C) laws, "
                          "leave-one-budget-out errors.")
    def isoflop_fit(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
        st = storage.storage
        obs, missing = observations_of(st)
        fit_result, report = results.isoflop_report(obs, fit)
        loss_law = fit_result.loss_law
        with st.atomic_dir(*result_paths.output_parts(name, "fits", "isoflop")) as staged:
            staged.write_json(report, "isoflop.json")
            obs.table.to_parquet(staged.join("runs.parquet"), index=False)
            fit_result.minima().to_parquet(staged.join("minima.parquet"), index=False)
            path = write_png(staged, "isoflop_curves.png", png := plots.isoflop_curves(obs.table, fit_result))
            return record_output(
                context, staged, recipe=fit,
                stats={"n_runs": len(obs.table), "n_excluded": len(obs.excluded), "n_missing": len(missing),
                       "usable_budgets": sum(b.usable for b in fit_result.budgets), "metric": fit.metric,
                       "loss_opt_law": f"L*(C) = {loss_law.E:.4g} + {loss_law.A:.4g} (C/{loss_law.C0:.3g})^-{loss_law.gamma:.4g}",
                       "lobo_largest_budget_loss_error": round_sig(report["lobo_largest_budget_loss_error"])},
                extra_metadata={
                    # 4 significant figures with their intervals; isoflop.json keeps every digit
                    "parameters": metadata_table(results.isoflop_parameters(fit_result)),
                    "minima": dg.MetadataValue.md(fit_result.minima().to_markdown(index=False)),
                    "leave_one_budget_out": dg.MetadataValue.md(_md(report["leave_one_budget_out"])),
                    "warnings": dg.MetadataValue.text(" | ".join(report["warnings"]) or "none"),
                    "excluded_runs": dg.MetadataValue.text(obs.exclusion_summary()),
                    **png_metadata(png, path, "isoflop_curves"),
                },
            )

    @versioned(fit_section)
    @dg.asset(name="parametric_fit", group_name=GROUP, deps=[runs_dep, *extra_deps],
              automation_condition=FIT_AUTOMATION, kinds={"scipy"}, **prefix,
              description=f"Approach 3: the {fit.law} law L(N, D) (Huber-likelihood fit), bootstrap CIs, "
                          "leave-one-budget-out errors and the other registered forms compared.")
    def parametric_fit(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
        st = storage.storage
        obs, missing = observations_of(st)
        fit_result, boot, report = results.parametric_report(obs, fit)
        with st.atomic_dir(*result_paths.output_parts(name, "fits", "parametric")) as staged:
            staged.write_json(report, "parametric.json")
            if boot is not None:
                boot.samples.to_parquet(staged.join("bootstrap.parquet"), index=False)
            observed = obs.table.assign(predicted=fit_result.law.loss(obs.table["N"], obs.table["D"]))
            observed.to_parquet(staged.join("fit_vs_observed.parquet"), index=False)
            path = write_png(staged, "fit_vs_observed.png", png := plots.fit_vs_observed(obs.table, fit_result.law))
            return record_output(
                context, staged, recipe=fit,
                stats={"n_runs": len(obs.table), "n_excluded": len(obs.excluded),
                       "n_missing": len(missing), "method": fit_result.method, "law": fit.law, "metric": fit.metric,
                       "aic": round_sig(report["aic"]) if report["aic"] is not None else "n/a (huber objective)",
                       "max_abs_relative_residual": round_sig(report["max_abs_relative_residual"]),
                       "lobo_largest_budget_loss_error": round_sig(report["lobo_largest_budget_loss_error"])},
                extra_metadata={
                    # the law's parameters, 4 significant figures with their bootstrap intervals;
                    # parametric.json keeps every digit
                    "parameters": metadata_table(results.parameter_rows(fit_result.law.as_dict(), report["intervals"])),
                    "warnings": dg.MetadataValue.text(" | ".join(report["warnings"]) or "none"),
                    "leave_one_budget_out": dg.MetadataValue.md(_md(report["leave_one_budget_out"])),
                    "law_comparison": dg.MetadataValue.md(_md(report["law_comparison"])),
                    "excluded_runs": dg.MetadataValue.text(obs.exclusion_summary()),
                    **png_metadata(png, path, "fit_vs_observed"),
                    **({preview_key("fit_vs_observed"): dg.MetadataValue.md(preview)}
                       if (preview := plots.fit_vs_observed_preview(obs.table, fit_result.law)) else {}),
                },
            )

    fits = [isoflop_fit, parametric_fit] if isoflop_approach else [parametric_fit]

    @versioned({**fit_section, "targets": targets_section})
    @dg.asset(name="scaling_predictions", group_name=GROUP, deps=fits,
              automation_condition=FIT_AUTOMATION, kinds={"python"}, **prefix,
              description="Compute-optimal N, D and expected loss (both approaches) at 10x/100x/1000x the largest "
                          "budget, with the bootstrap interval, the leave-one-budget-out refits' range, and whether "
                          "the approaches disagree beyond the intervals.")
    def scaling_predictions(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
        st = storage.storage
        par_parts = result_paths.output_parts(name, "fits", "parametric")
        iso_parts = result_paths.output_parts(name, "fits", "isoflop")
        st.require_committed(*par_parts)
        report = st.read_json(*par_parts, "parametric.json")
        iso = None
        if isoflop_approach:
            st.require_committed(*iso_parts)
            iso = st.read_json(*iso_parts, "isoflop.json")
        law = results.law_from_report(report)
        if iso is not None:
            targets = targets_of(iso)
        else:
            budgets = sorted(observations_of(st)[0].table["budget"].unique())
            targets = targets_of({"budgets": [{"budget": float(b), "status": "ok"} for b in budgets]})
        lobo_laws = [laws.law_from_params({**params, "law": report.get("law", "chinchilla")}, report)
                     for params in validation.lobo_params(report["leave_one_budget_out"])]
        table = results.predictions_table(law, iso, targets, bootstrap_laws(st, par_parts, report), fit.level,
                                          lobo_laws)
        png = plots.optimal_allocation(IsoflopFit.from_dict(iso) if iso else None, targets, law)
        with st.atomic_dir(*result_paths.output_parts(name, "predictions")) as staged:
            table.to_parquet(staged.join("predictions.parquet"), index=False)
            staged.write_json({"flops_model": FLOPS_MODEL, "law": report.get("law", "chinchilla"),
                               "targets": table.to_dict("records")}, "predictions.json")
            path = write_png(staged, "optimal_allocation.png", png)
            return record_output(
                context, staged, recipe={"targets": targets, "fit": fit_section},
                # a typed table (4 significant figures, one column per field): a Markdown table clipped its columns
                extra_metadata={"predictions": metadata_table(
                    [{k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()}  # NaN: no value
                     for row in table.to_dict("records")], columns=list(table.columns)),
                                **png_metadata(png, path, "optimal_allocation")},
            )

    return [*fits, scaling_predictions]

