"""Governance assets: the audit report of each checkpoint, and the failure catalog as a table."""

import dagster as dg
from pydantic import Field

from marin_assets.core import layout
from marin_assets.core.hashing import hash_json
from marin_assets.governance.audit import build_audit, locate_run_output, render_audit_markdown, write_audit
from marin_assets.governance.failure_catalog import (
    CATALOG_DIR,
    catalog_version,
    list_failures,
    summary_markdown,
    summary_rows,
)
from marin_assets.resources.recording import latest_materialization
from marin_assets.resources.storage import StorageResource

TRAINING_RUN = dg.AssetKey("training_run")
TABLE_ROWS = 50


class AuditConfig(dg.Config):
    runs: list[str] = Field(
        default_factory=list, description="training_run partitions to audit; empty: every materialized run"
    )


def checkpoint_uris(instance: dg.DagsterInstance, runs: list[str]) -> dict[str, str | None]:
    """Where each run's latest materialization put its checkpoint (None: not recorded)."""
    runs = runs or sorted(instance.get_materialized_partitions(TRAINING_RUN))
    out = {}
    for run in runs:
        materialization = latest_materialization(instance, TRAINING_RUN, run)
        uri = materialization.metadata.get("output_uri") if materialization else None
        out[run] = str(uri.value) if uri is not None else None
    return out


@dg.asset(
    group_name="governance",
    deps=[TRAINING_RUN],
    kinds={"markdown"},
    description="For each training run: the chain of outputs down to the raw sources, with licenses, "
    "checksums, recipes and hashes (governance/audit/<run>.md and .json)",
)
def audit_report(context: dg.AssetExecutionContext, config: AuditConfig, storage: StorageResource) -> dg.MaterializeResult:
    store = storage.storage
    reports = []
    for run, uri in checkpoint_uris(context.instance, config.runs).items():
        report = build_audit(store, run, uri or locate_run_output(store, run))
        md_uri, _ = write_audit(store, report)
        context.log.info(f"audit of {run}: {len(report['problems'])} problem(s), written to {md_uri}")
        reports.append(report)
    markdown = "\n\n---\n\n".join(render_audit_markdown(r) for r in reports) or "No training run materialized yet."
    problems = sum(len(r["problems"]) for r in reports)
    stable = [{k: v for k, v in r.items() if k != "generated_at"} for r in reports]
    return dg.MaterializeResult(
        metadata={
            "runs": ", ".join(r["run"] for r in reports) or "none",
            "problems": problems,
            "all_clear": problems == 0,
            "audit_dir": dg.MetadataValue.path(store.uri(layout.GOVERNANCE, "audit")),
            "report": dg.MetadataValue.md(markdown),
        },
        data_version=dg.DataVersion(hash_json(stable)),
    )


_TABLE_SCHEMA = dg.TableSchema(
    columns=[dg.TableColumn(name, "string") for name in ("failed_at", "run_id", "job", "assets", "partition", "error")]
)


@dg.asset(
    group_name="governance",
    kinds={"json"},
    description="Every failed run recorded by failure_catalog_sensor (governance/failure_catalog/<run_id>.json); "
    "search it with `marin failures search TEXT`",
)
def failure_catalog(storage: StorageResource) -> dg.MaterializeResult:
    store = storage.storage
    records = list_failures(store)
    newest = records[:TABLE_ROWS]
    return dg.MaterializeResult(
        metadata={
            "failures": len(records),
            "catalog_dir": dg.MetadataValue.path(store.uri(layout.GOVERNANCE, CATALOG_DIR)),
            "latest": dg.MetadataValue.table(
                records=[dg.TableRecord(row) for row in summary_rows(newest)], schema=_TABLE_SCHEMA
            ),
            "summary": dg.MetadataValue.md(summary_markdown(newest)),
        },
        data_version=dg.DataVersion(catalog_version(records)),
    )
