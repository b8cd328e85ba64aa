"""Governance assets: the audit report of everything trained, and the failure catalog as a table.

Both are computed assets like any other: a code version from their code, and a provenance manifest
(an index of what they wrote) committed under governance/<asset>_index/.
"""

import dagster as dg
from pydantic import Field

from marin_assets.core import layout
from marin_assets.lineage.code_versions import versioned
from marin_assets.core.hashing import hash_json
from marin_assets.governance.audit import build_audit, locate_run_output, render_audit_markdown, write_audit
from marin_assets.governance.failure_catalog import (
    CATALOG_DIR,
    catalog_version,
    list_failures,
    summary_markdown,
    summary_rows,
)
from marin_assets.lineage.recording import latest_materialization, record_output
from marin_assets.resources.storage_resource import StorageResource

TRAINING_RUN = dg.AssetKey("training_run")
# Everything that trains weights: each materialized partition gets an audit.
TRAINED = (TRAINING_RUN, dg.AssetKey("scaling_run"), dg.AssetKey("heldout_run"))
TABLE_ROWS = 50


class AuditConfig(dg.Config):
    runs: list[str] = Field(
        default_factory=list, description="runs to audit (a training_run partition, or e.g. scaling_run__<key>); "
                                          "empty: every materialized run of every training asset"
    )


def audit_name(key: dg.AssetKey, partition: str | None) -> str:
    """A training run is audited under its own name (as before); other trained outputs as <asset>__<partition>."""
    if key == TRAINING_RUN:
        return str(partition)
    return key.to_python_identifier() + (f"__{partition}" if partition is not None else "")


def trained_outputs(instance: dg.DagsterInstance) -> dict[str, tuple[dg.AssetKey, str | None, str | None]]:
    """audit name -> (asset, partition, output URI of its latest materialization; None: not recorded)."""
    out = {}
    for key in TRAINED:
        partitions = sorted(instance.get_materialized_partitions(key)) or (
            [None] if latest_materialization(instance, key) else [])
        for partition in partitions:
            materialization = latest_materialization(instance, key, partition)
            uri = materialization.metadata.get("output_uri") if materialization else None
            out[audit_name(key, partition)] = (key, partition, str(uri.value) if uri is not None else None)
    return out


def checkpoint_uris(instance: dg.DagsterInstance, runs: list[str]) -> dict[str, str | None]:
    """Where each named (or every) trained output's latest materialization put it (None: not recorded)."""
    outputs = trained_outputs(instance)
    return {name: outputs.get(name, (TRAINING_RUN, name, None))[2] for name in (runs or sorted(outputs))}


@versioned("audit_report")
@dg.asset(
    group_name="governance",
    deps=list(TRAINED),
    kinds={"markdown"},
    description="For each trained output (training, scaling and held-out runs): the chain of outputs down to the "
    "raw sources, with licenses, checksums, recipes and hashes (governance/audit/<run>.md and .json)",
)
def audit_report(context: dg.AssetExecutionContext, config: AuditConfig, storage: StorageResource) -> dg.MaterializeResult:
    store = storage.storage
    reports, written = [], {}
    for run, uri in checkpoint_uris(context.instance, config.runs).items():
        report = build_audit(store, run, uri or locate_run_output(store, run))
        md_uri, json_uri = write_audit(store, report)
        context.log.info(f"audit of {run}: {len(report['problems'])} problem(s), written to {md_uri}")
        reports.append(report)
        written[run] = {"markdown": md_uri, "json": json_uri, "problems": len(report["problems"])}
    markdown = "\n\n---\n\n".join(render_audit_markdown(r) for r in reports) or "No training run materialized yet."
    problems = sum(len(r["problems"]) for r in reports)
    stable = [{k: v for k, v in r.items() if k != "generated_at"} for r in reports]
    with store.atomic_dir(layout.GOVERNANCE, "audit_index") as staged:
        staged.write_json(written, "index.json")  # the manifest beside it records code and inputs
        return record_output(
            context, staged, recipe=config.model_dump(), output_hash=hash_json(stable),
            stats={"runs": ", ".join(r["run"] for r in reports) or "none", "problems": problems,
                   "all_clear": problems == 0},
            extra_metadata={"audit_dir": dg.MetadataValue.path(store.uri(layout.GOVERNANCE, "audit")),
                            "report": dg.MetadataValue.md(markdown)},
        )


_TABLE_SCHEMA = dg.TableSchema(
    columns=[dg.TableColumn(name, "string") for name in ("failed_at", "run_id", "job", "assets", "partition", "error")]
)


@versioned("failure_catalog")
@dg.asset(
    group_name="governance",
    kinds={"json"},
    description="Every failed run recorded by failure_catalog_sensor (governance/failure_catalog/<run_id>.json); "
    "search it with `marin failures search TEXT`",
)
def failure_catalog(context: dg.AssetExecutionContext, storage: StorageResource) -> dg.MaterializeResult:
    store = storage.storage
    records = list_failures(store)
    newest = records[:TABLE_ROWS]
    with store.atomic_dir(layout.GOVERNANCE, "failure_catalog_index") as staged:
        staged.write_json(summary_rows(records), "index.json")
        return record_output(
            context, staged, recipe={"table_rows": TABLE_ROWS},
            output_hash=catalog_version(records), stats={"failures": len(records)}, sources=[],
            extra_metadata={
                "catalog_dir": dg.MetadataValue.path(store.uri(layout.GOVERNANCE, CATALOG_DIR)),
                "latest": dg.MetadataValue.table(
                    records=[dg.TableRecord(row) for row in summary_rows(newest)], schema=_TABLE_SCHEMA
                ),
                "summary": dg.MetadataValue.md(summary_markdown(newest)),
            },
        )
