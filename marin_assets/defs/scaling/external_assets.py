"""Dagster wiring of an external suite (recipes/scaling/external/*.yaml): external_runs reads the
registered table, checks its hash and columns and commits the rows as run results; the shared fit
assets (fit_assets.py) then fit them under the asset key prefix <suite name>/, without training, and
heldout_prediction predicts and scores the rows the recipe holds out (scaling.external_heldout)."""


import dagster as dg

from marin_assets.lineage.code_versions import versioned
from marin_assets.core.recipes import RecipeError
from marin_assets.core.hashing import hash_json
from marin_assets.lineage.recording import record_output
from marin_assets.resources.storage_resource import StorageResource
from marin_assets.core.metadata_tables import metadata_table
from marin_assets.scaling import external, external_heldout, observations, results
from marin_assets.defs.scaling.fit_checks import TARGET_RELATIVE_ERROR
from marin_assets.scaling.external import ExternalSuiteRecipe
from marin_assets.defs.scaling.fit_assets import build_fit_assets
from marin_assets.defs.scaling.heldout_assets import PREDICTION_FILE, prediction_parts
from marin_assets.scaling.outputs import GROUP, bootstrap_laws
from marin_assets.scaling.results import output_parts

RUNS_FILE = "runs.json"


def runs_parts(suite: str) -> tuple[str, ...]:
    return output_parts(suite, "external_runs")


def external_observations(st, recipe: ExternalSuiteRecipe):
    st.require_committed(*runs_parts(recipe.name))
    rows = st.read_json(*runs_parts(recipe.name), RUNS_FILE)["runs"]
    return observations.collect_observations(rows, max_loss=recipe.fit.max_loss, metric=recipe.fit.metric), []


def build_external_assets(recipe: ExternalSuiteRecipe) -> list[dg.AssetsDefinition]:
    name = recipe.name
    prefix = [name]
    section = recipe.model_dump(mode="json", exclude={"fit", "target_multipliers"})

    @versioned(section)
    @dg.asset(name="external_runs", key_prefix=prefix, group_name=GROUP, kinds={"pandas"},
              description=f"Runs trained elsewhere ({recipe.citation}), read from {recipe.table}; fitted, not trained.")
    def external_runs(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
        st = storage.storage
        table, digest = external.read_table(recipe)
        rows = external.table_results(recipe, table)
        obs = observations.collect_observations(rows, max_loss=recipe.fit.max_loss, metric=recipe.fit.metric)
        c_definition, c_warnings = external.compute_definition(recipe, rows, table)
        for warning in c_warnings:
            context.log.warning(f"{name}: {warning}")
        with st.atomic_dir(*runs_parts(name)) as staged:
            staged.write_json({"suite": name, "citation": recipe.citation, "table": recipe.table, "sha256": digest,
                               "C_definition": c_definition, "C_warnings": c_warnings, "runs": rows}, RUNS_FILE)
            return record_output(
                context, staged, recipe=section, output_hash=hash_json({"sha256": digest,
                                                                                              "runs": rows}),
                stats={"n_rows": len(rows), "n_usable": len(obs.table), "n_excluded": len(obs.excluded),
                       "table_sha256": digest, "citation": recipe.citation, "C_definition": c_definition,
                       "C_disagreements": len(c_warnings)},
                extra_metadata={"C_warnings": dg.MetadataValue.text(" | ".join(c_warnings) or "none"),"excluded_rows": dg.MetadataValue.text(obs.exclusion_summary()),
                                "preview": dg.MetadataValue.md(obs.table.head(10).to_markdown(index=False))},
            )

    def targets_of(iso: dict) -> list[float]:
        largest = max(b["budget"] for b in iso["budgets"] if b["status"] == "ok")
        return [largest * m for m in recipe.target_multipliers]

    isoflop = "isoflop" in recipe.approaches
    fits = build_fit_assets(name, recipe.fit, external_runs, lambda st: external_observations(st, recipe),
                            targets_of, {"multipliers": recipe.target_multipliers}, key_prefix=prefix,
                            isoflop_approach=isoflop)
    parametric_fit = next(a for a in fits if a.key.path[-1] == "parametric_fit")
    return [external_runs, *fits, *([build_heldout_asset(recipe, external_runs, parametric_fit)] if recipe.heldout else [])]


def build_heldout_asset(recipe: ExternalSuiteRecipe, external_runs, parametric_fit) -> dg.AssetsDefinition:
    """heldout_prediction of an external suite: the recipe's held-out rows predicted by Approach 3 and scored."""
    name = recipe.name

    @versioned({"heldout": recipe.heldout, "metric": recipe.fit.metric, "level": recipe.fit.level})
    @dg.asset(name="heldout_prediction", key_prefix=[name], group_name=GROUP, deps=[external_runs, parametric_fit],
              kinds={"python"},
              description=f"The rows held out by the recipe ({recipe.heldout}) predicted by the fitted law and "
                          "scored against the table: the suite's held-out error.")
    def heldout_prediction(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
        st = storage.storage
        fit_parts = output_parts(name, "fits", "parametric")
        st.require_committed(*runs_parts(name)), st.require_committed(*fit_parts)
        rows = external_heldout.heldout_rows(st.read_json(*runs_parts(name), RUNS_FILE)["runs"])
        if not rows:
            raise external.ExternalTableError(f"{name}: heldout {recipe.heldout!r} selects no row of the table")
        report = st.read_json(*fit_parts, "parametric.json")
        scored = external_heldout.score_rows(results.law_from_report(report), bootstrap_laws(st, fit_parts, report),
                                             rows, recipe.fit.metric, recipe.fit.level)
        summary = external_heldout.summary(scored, TARGET_RELATIVE_ERROR)
        with st.atomic_dir(*prediction_parts(name)) as staged:
            staged.write_json({"suite": name, "metric": recipe.fit.metric, "heldout": recipe.heldout,
                               "level": recipe.fit.level, "summary": summary, "rows": scored}, PREDICTION_FILE)
            return record_output(
                context, staged, recipe={"heldout": recipe.heldout},
                output_hash=hash_json(scored),
                stats={"heldout_rows": summary["rows"], "heldout_max_abs_relative_error": summary["max_abs_relative_error"],
                       "heldout_mean_abs_relative_error": summary["mean_abs_relative_error"],
                       "heldout_within_target": summary["within_target"], "target": TARGET_RELATIVE_ERROR},
                extra_metadata={"heldout_table": metadata_table(
                    [{k: v for k, v in s.items() if k != "interval"} | {"lo": (s["interval"] or [None])[0],
                                                                        "hi": (s["interval"] or [None, None])[1]}
                     for s in scored])})

    return heldout_prediction


def build_heldout_check(recipe: ExternalSuiteRecipe) -> dg.AssetChecksDefinition:
    """The trained suite's held-out check for an external suite: every held-out row within the target error."""

    @dg.asset_check(asset=dg.AssetKey([recipe.name, "heldout_prediction"]), name="heldout_prediction_error",
                    description=f"|predicted - observed| / observed of every held-out row <= {TARGET_RELATIVE_ERROR:.0%}.")
    def heldout_prediction_error(storage: StorageResource) -> dg.AssetCheckResult:
        summary = storage.storage.read_json(*prediction_parts(recipe.name), PREDICTION_FILE)["summary"]
        worst = summary["max_abs_relative_error"]
        passed = worst is not None and worst <= TARGET_RELATIVE_ERROR
        return dg.AssetCheckResult(
            passed=passed, severity=dg.AssetCheckSeverity.WARN,
            description=(f"{summary['within_target']} of {summary['rows']} held-out rows within the "
                         f"{TARGET_RELATIVE_ERROR:.0%} target; largest |relative error| "
                         + (f"{worst:.2%}" if worst is not None else "none (no row has an observed value)")),
            metadata={k: v for k, v in summary.items() if v is not None})

    return heldout_prediction_error


def broken_suite_asset(stem: str, message: str) -> dg.AssetsDefinition:
    """One broken external suite recipe: an asset under its file's name that fails with the error, while
    the other suites load."""

    @dg.asset(name="external_recipe_error", key_prefix=[stem], group_name=GROUP, kinds={"python"},
              description=f"External suite {stem!r} did not load: {message}")
    def external_recipe_error() -> None:
        raise RecipeError(message)

    return external_recipe_error
