"""Dagster wiring of an external suite (recipes/scaling/external/*.yaml): external_runs reads the
registered table, checks its hash and columns and commits the rows as run results; the shared fit
assets (fit_assets.py) then fit them under the asset key prefix <suite name>/, without training."""


import dagster as dg

from marin_assets.core.code_versions import versioned
from marin_assets.core.hashing import hash_json
from marin_assets.resources.recording import record_output
from marin_assets.resources.storage import StorageResource
from marin_assets.scaling import external, observations
from marin_assets.scaling.external import ExternalSuiteRecipe
from marin_assets.scaling.fit_assets import build_fit_assets
from marin_assets.scaling.outputs import GROUP
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
        c_definition, c_warnings = external.compute_definition(recipe, rows)
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

    fits = build_fit_assets(name, recipe.fit, external_runs, lambda st: external_observations(st, recipe), targets_of,
                            {"multipliers": recipe.target_multipliers}, key_prefix=prefix)
    return [external_runs, *fits]
